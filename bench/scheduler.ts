/**
 * `node bench/scheduler.ts [--sizes 100,1000] [--against CHECKOUT_DIR]`
 *
 * Micro-benchmark of the Slack write scheduler alone (src/slack/scheduler.ts), on a manual clock:
 * CPU µs per call while n messages stream edits, and while n runs post into n channels with the
 * workspace's chat.postMessage bucket empty. The ratio of the per-call cost at the largest n to
 * the smallest shows how it grows with n (≤ 1: constant, the clock's fixed costs per round being
 * shared by more calls; ≈ the ratio of the n's: linear). `--against` runs the same on another
 * checkout's scheduler (e.g. `git worktree add /tmp/old HEAD~1`) for comparison. Not part of
 * `npm test`.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { Clock, SchedulerOptions, SlackScheduler } from "../src/slack/scheduler/index.ts";

type SchedulerClass = new (options: SchedulerOptions) => SlackScheduler;

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "100,1000" },
    against: { type: "string" },
  },
});

/** Time moves only in runUntil; due timers fire in order, each followed by the scheduler settling. */
class ManualClock implements Clock {
  #now = 1_700_000_000_000;
  #nextId = 1;
  readonly #timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.#nextId++;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    if (typeof handle === "number") this.#timers.delete(handle);
  }

  async runUntil(target: number, settle: () => Promise<void>): Promise<void> {
    await settle();
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.#timers) if (!next || entry[1].at < next[1].at) next = entry;
      if (!next || next[1].at > target) break;
      this.#timers.delete(next[0]);
      this.#now = Math.max(this.#now, next[1].at);
      next[1].fn();
      await settle();
    }
    this.#now = Math.max(this.#now, target);
  }
}

function cpuMicros(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

async function settleOf(scheduler: SlackScheduler): Promise<void> {
  await scheduler.settled();
  await new Promise<void>((done) => setImmediate(done));
  await scheduler.settled();
}

/**
 * n messages, each given a new text every 50 ms for 20 s (a chunk each), with chat.update's budget
 * ×25 as in `npm run bench` at 1,000 runs: µs of CPU per scheduleEdit, drains included.
 */
async function edits(Scheduler: SchedulerClass, n: number): Promise<number> {
  const clock = new ManualClock();
  const scheduler = new Scheduler({
    clock,
    budgets: { "chat.update": { perMinute: 50 * 25, burst: 3 * 25 } },
  });
  const settle = () => settleOf(scheduler);
  const send = async () => {};
  let calls = 0;
  const start = cpuMicros();
  for (let round = 0; round < 400; round++) {
    for (let m = 0; m < n; m++) {
      void scheduler.scheduleEdit("T1", `C${m}:1`, send, { final: round === 399 });
      calls += 1;
    }
    await clock.runUntil(clock.now() + 50, settle);
  }
  const micros = cpuMicros() - start;
  await scheduler.close();
  return micros / calls;
}

/**
 * n runs start 10 ms apart, each posting into a channel of its own, with the workspace's
 * chat.postMessage budget (60/min) far below demand: µs of CPU per schedule(), drains included.
 */
async function posts(Scheduler: SchedulerClass, n: number): Promise<number> {
  const clock = new ManualClock();
  const scheduler = new Scheduler({ clock });
  const settle = () => settleOf(scheduler);
  const post = async () => "ts";
  const start = cpuMicros();
  for (let run = 0; run < n; run++) {
    void scheduler.schedule("T1", "chat.postMessage", post, { key: `C${run}` });
    await clock.runUntil(clock.now() + 10, settle);
  }
  const micros = cpuMicros() - start;
  await scheduler.close();
  return micros / n;
}

async function load(dir: string): Promise<SchedulerClass> {
  const url = pathToFileURL(resolve(dir, "src/slack/scheduler/index.ts")).href;
  const module = (await import(url)) as {
    SlackScheduler: SchedulerClass;
  };
  return module.SlackScheduler;
}

const sizes = values.sizes.split(",").map((s) => Number(s.trim()));
if (sizes.some((n) => !Number.isInteger(n) || n < 1)) {
  console.error("--sizes takes positive integers, e.g. 100,1000");
  process.exit(2);
}
const subjects: [string, SchedulerClass][] = [
  ["this checkout", await load(resolve(import.meta.dirname, ".."))],
];
if (values.against) subjects.push([values.against, await load(values.against)]);

for (const [name, Scheduler] of subjects) {
  console.log(`${name}:`);
  for (const [label, scenario] of [
    ["scheduleEdit (n messages streaming)", edits],
    ["schedule chat.postMessage (n channels, workspace bucket empty)", posts],
  ] as const) {
    await scenario(Scheduler, Math.min(...sizes)); // warm-up
    const perCall = new Map<number, number>();
    for (const n of sizes) perCall.set(n, await scenario(Scheduler, n));
    const small = perCall.get(Math.min(...sizes)) ?? NaN;
    const large = perCall.get(Math.max(...sizes)) ?? NaN;
    const figures = [...perCall].map(([n, us]) => `n=${n}: ${us.toFixed(2)} µs`).join(", ");
    console.log(
      `  ${label}: ${figures}; ×${(large / small).toFixed(1)} from n=${Math.min(...sizes)} to n=${Math.max(...sizes)}`,
    );
  }
}
