/**
 * Slack's budgets seen from the benchmark: which one ran out in a scenario (the bucket whose
 * calls waited longest in the app's queue, and how long its sliding minute was full), and the
 * physical bound of a scenario: the lag an ideal scheduler would reach if it spent every
 * budget Slack gives, steadily, at 100 % and with no network time.
 */
import type { RecordedCall } from "../tools/local-slack/index.ts";
import { percentile } from "./measure.ts";

/** A budget of Slack's, per workspace (or per channel for chat.postMessage's 1 a second). */
export interface Bucket {
  readonly key: string;
  readonly methods: readonly string[];
  /** Calls per minute at Slack's real tiers (before the benchmark's scale). */
  readonly perMinute: number;
  readonly perChannel: boolean;
}

/** The budgets that carry an answer's text into Slack (slack-platform-facts in docs/benchmarks.md). */
export const TEXT_BUCKETS: readonly Bucket[] = [
  { key: "chat.update", methods: ["chat.update"], perMinute: 50, perChannel: false },
  { key: "appendStream", methods: ["chat.appendStream"], perMinute: 100, perChannel: false },
  { key: "startStream", methods: ["chat.startStream"], perMinute: 20, perChannel: false },
  { key: "stopStream", methods: ["chat.stopStream"], perMinute: 20, perChannel: false },
  { key: "postMessage", methods: ["chat.postMessage"], perMinute: 300, perChannel: false },
  {
    key: "postMessage per channel",
    methods: ["chat.postMessage"],
    perMinute: 60,
    perChannel: true,
  },
];

export interface BucketUse {
  readonly key: string;
  /** Calls Slack answered ok. */
  readonly calls: number;
  /**
   * How long the bucket's sliding minute held ≥ 90 % of its tier (the share the app allows
   * itself, SLACK_RATE_SAFETY): the budget was spent. Per channel: the longest of any channel.
   */
  readonly fullMs: number;
  /** The app's scheduler: mean and longest wait of this bucket's method(s) for their budget. */
  readonly waitMeanMs: number | undefined;
  readonly waitMaxMs: number | undefined;
}

/**
 * Total time during which at least `limit` of the sorted `times` lie within a sliding minute:
 * the union of [t[i], t[i - limit + 1] + 60 s). One pass.
 */
export function fullWindowMs(times: readonly number[], limit: number): number {
  if (limit < 1) return 0;
  let total = 0;
  let openStart: number | undefined;
  let openEnd = 0;
  for (let i = limit - 1; i < times.length; i++) {
    const start = times[i] ?? 0;
    const end = (times[i - limit + 1] ?? 0) + 60_000;
    if (end <= start) continue;
    if (openStart !== undefined && start <= openEnd) {
      openEnd = Math.max(openEnd, end);
      continue;
    }
    if (openStart !== undefined) total += openEnd - openStart;
    openStart = start;
    openEnd = end;
  }
  if (openStart !== undefined) total += openEnd - openStart;
  return total;
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** How each text budget was used in a scenario, from the calls Slack received. */
export function bucketUse(
  calls: readonly RecordedCall[],
  scale: number,
  queueWaitMs: Readonly<Record<string, { readonly mean: number; readonly max: number }>>,
): BucketUse[] {
  return TEXT_BUCKETS.map((b) => {
    const ok = calls.filter((c) => b.methods.includes(c.method) && c.status === 200);
    const limit = Math.floor(b.perMinute * scale * 0.9);
    let fullMs: number;
    if (b.perChannel) {
      const byChannel = new Map<string, number[]>();
      for (const c of ok) {
        const channel = str(c.args.channel);
        const list = byChannel.get(channel) ?? [];
        list.push(c.at);
        byChannel.set(channel, list);
      }
      fullMs = Math.max(0, ...[...byChannel.values()].map((t) => fullWindowMs(t, limit)));
    } else {
      fullMs = fullWindowMs(
        ok.map((c) => c.at),
        limit,
      );
    }
    const waits = b.methods.map((m) => queueWaitMs[m]).filter((w) => w !== undefined);
    return {
      key: b.key,
      calls: ok.length,
      fullMs,
      // The app's waits are by method: a per-channel wait of chat.postMessage shows in both.
      waitMeanMs: waits.length > 0 ? Math.max(...waits.map((w) => w.mean)) : undefined,
      waitMaxMs: waits.length > 0 ? Math.max(...waits.map((w) => w.max)) : undefined,
    };
  });
}

/**
 * A wait the app's own pacing does not explain: the benchmark runs the app with one edit a
 * second per message (SLACK_EDIT_INTERVAL_MS=1000), which the app counts as queue wait too.
 */
export const BUDGET_WAIT_MS = 2000;

/**
 * The budget that ran out: the one whose calls waited longest for it in the app (when the app
 * reports waits), else the one whose sliding minute was full longest; undefined when no call
 * waited ≥ 2 s and no budget was full.
 */
export function ranOut(uses: readonly BucketUse[]): BucketUse | undefined {
  const byWait = [...uses]
    .filter((u) => (u.waitMaxMs ?? 0) >= BUDGET_WAIT_MS)
    .sort((a, b) => (b.waitMaxMs ?? 0) - (a.waitMaxMs ?? 0));
  if (byWait[0]) {
    // chat.postMessage's wait is one figure for both of its budgets: name the one that was full.
    const top = byWait[0];
    if (top.key.startsWith("postMessage")) {
      const posts = uses.filter((u) => u.key.startsWith("postMessage"));
      return [...posts].sort((a, b) => b.fullMs - a.fullMs)[0] ?? top;
    }
    return top;
  }
  const byFull = [...uses].filter((u) => u.fullMs > 0).sort((a, b) => b.fullMs - a.fullMs);
  return byFull[0];
}

// ---- the physical bound ---------------------------------------------------------------------

/** One run of the workload: when (ms from the start) each of its chunks is emitted. */
export type RunWorkload = readonly number[];

/**
 * One of Slack's budgets in the ideal scheduler: at most `perMinute` calls in any sliding
 * minute (as the local Slack enforces), spent no faster than `perMinute` over `horizonMs`
 * (a token bucket of that rate, bursts of `burst`): the whole minute's budget may go to a
 * scenario shorter than a minute, but not all in its first instant.
 */
class Budget {
  readonly #times: number[] = [];
  #head = 0;
  readonly #limit: number;
  #tokens: number;
  #at = 0;
  readonly #perMs: number;
  readonly #burst: number;

  constructor(perMinute: number, burst: number, horizonMs: number) {
    this.#limit = perMinute;
    this.#perMs = perMinute / horizonMs;
    this.#burst = burst;
    this.#tokens = burst;
  }

  /** Whether a call may go now. */
  has(now: number): boolean {
    this.#tokens = Math.min(this.#burst, this.#tokens + (now - this.#at) * this.#perMs);
    this.#at = now;
    while (this.#head < this.#times.length && (this.#times[this.#head] ?? 0) <= now - 60_000) {
      this.#head++;
    }
    return this.#tokens >= 1 && this.#times.length - this.#head < this.#limit;
  }

  spend(now: number): void {
    this.#tokens -= 1;
    this.#times.push(now);
  }
}

/** Spends one call of every budget when all of them have one. */
function takeAll(now: number, ...budgets: Budget[]): boolean {
  if (!budgets.every((b) => b.has(now))) return false;
  for (const b of budgets) b.spend(now);
  return true;
}

export interface BoundOptions {
  /** Factor of every budget (the benchmark's scale). */
  readonly scale: number;
  /** Simulation step (ms). */
  readonly stepMs?: number;
}

interface SimRun {
  readonly chunks: RunWorkload;
  /** Chunks emitted so far / shown so far. */
  emitted: number;
  shown: number;
  opened: boolean;
  answer: "none" | "edited" | "streamed";
  readonly channel: Budget;
}

interface Lags {
  readonly p50: number | undefined;
  readonly p95: number | undefined;
  readonly max: number | undefined;
}

/** The best lags of the family, and those of its steadiest member (each minute over 60 s). */
export interface PhysicalBound extends Lags {
  readonly steady: Lags;
}

/** Horizons over which the ideal scheduler spreads a minute's budget (ms). */
const HORIZONS_MS = [60_000, 30_000, 20_000, 12_000, 8_000, 5_000, 3_000];

/** The lags (sorted, ms) of one ideal scheduler spreading each minute's budget over `horizonMs`. */
function idealLags(runs: readonly RunWorkload[], scale: number, step: number, horizonMs: number) {
  const update = new Budget(50 * scale, 3, horizonMs);
  const append = new Budget(100 * scale, 5, horizonMs);
  const start = new Budget(20 * scale, 2, horizonMs);
  const post = new Budget(300 * scale, 10, horizonMs);
  const sims: SimRun[] = runs.map((chunks) => ({
    chunks,
    emitted: 0,
    shown: 0,
    opened: false,
    answer: "none",
    channel: new Budget(60 * scale, 3, 60_000),
  }));
  const lags: number[] = [];
  const show = (r: SimRun, now: number) => {
    for (let i = r.shown; i < r.emitted; i++) lags.push(now - (r.chunks[i] ?? now));
    r.shown = r.emitted;
  };
  let pending = sims.filter((r) => r.chunks.length > 0);
  for (let now = 0; pending.length > 0; now += step) {
    for (const r of pending) {
      while (r.emitted < r.chunks.length && (r.chunks[r.emitted] ?? Infinity) <= now) r.emitted++;
    }
    const waiting = pending
      .filter((r) => r.emitted > r.shown || !r.opened)
      .sort((a, b) => (a.chunks[a.shown] ?? 0) - (b.chunks[b.shown] ?? 0));
    for (const r of waiting) {
      if (!r.opened) {
        if (takeAll(now, post, r.channel)) r.opened = true;
        continue;
      }
      if (r.answer === "none") {
        if (takeAll(now, start)) r.answer = "streamed";
        else if (takeAll(now, post, r.channel)) r.answer = "edited";
        else continue;
        show(r, now);
        continue;
      }
      if ((r.answer === "streamed" && takeAll(now, append)) || takeAll(now, update)) show(r, now);
    }
    pending = pending.filter((r) => r.shown < r.chunks.length);
  }
  return lags.sort((a, b) => a - b);
}

/**
 * The lag (p50 / p95 / max, ms) ideal schedulers reach on this workload with Slack's budgets:
 * every budget at its full tier within the local Slack's sliding minute, no network time, no
 * safety margin. Each run needs its thread (one post) and its answer message (a post, or a
 * chat.startStream whose stream then takes appends); then any chat.update or, on a stream,
 * chat.appendStream shows everything emitted so far. Runs are served oldest unshown chunk
 * first. Posts never carry later text (an answer is not shredded into more messages); stops
 * are left out (they may wait, the text does not). Each figure is the best of the family of
 * schedulers that spread a minute's budget over 60 s down to 3 s (each is achievable; the
 * best p50 and the best p95 may come from different members). `steady` is the member that
 * spends each budget evenly over the minute, the bound if Slack allowed no bursts at all.
 */
export function physicalBound(runs: readonly RunWorkload[], o: BoundOptions): PhysicalBound {
  const step = o.stepMs ?? 20;
  let best: Lags = { p50: undefined, p95: undefined, max: undefined };
  let steady: Lags = best;
  const min = (a: number | undefined, b: number | undefined) =>
    a === undefined ? b : b === undefined ? a : Math.min(a, b);
  for (const horizon of HORIZONS_MS) {
    const lags = idealLags(runs, o.scale, step, horizon);
    const these = { p50: percentile(lags, 50), p95: percentile(lags, 95), max: lags.at(-1) };
    if (horizon === 60_000) steady = these;
    best = {
      p50: min(best.p50, these.p50),
      p95: min(best.p95, these.p95),
      max: min(best.max, these.max),
    };
  }
  return { ...best, steady };
}

/**
 * The benchmark's workload without the app: run `i` asked at `startOf(i)` (default: all at 0),
 * its first chunk one chunk delay later, then one every `delayOf(i)` ms.
 */
export function benchWorkload(
  runs: number,
  chunksPerRun: number,
  delayOf: (run: number) => number,
  startOf: (run: number) => number = () => 0,
): RunWorkload[] {
  return Array.from({ length: runs }, (_, i) =>
    Array.from({ length: chunksPerRun }, (_, k) => startOf(i) + (k + 1) * delayOf(i)),
  );
}
