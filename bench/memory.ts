/**
 * `npm run bench:memory [-- --shapes runaway,files] [--app DIR] [--cap SECONDS]`
 *
 * Whether one answer of the service can take the app's memory. For each hostile shape the app
 * runs fresh (`node src/main.ts`, default budgets, in a child process so that its memory is
 * its own) against the service simulator misbehaving on purpose and the local Slack double:
 *
 * - `ordinary`: a plain answer with a few small files (the baseline);
 * - `comments`: a stream whose one event never ends (data lines between `:` comments);
 * - `json`: the stream answered with JSON that never ends;
 * - `runaway`: an agent that never stops talking (10 MB of answer a second);
 * - `files`: 320 MB of generated files inlined as base64 (8 clips of 40 MiB).
 *
 * While the hostile run goes on, `/healthz` is asked four times a second and another person's
 * `/task` is sent; each must be answered within Slack's 3 s. Printed per shape: the app's
 * peak RSS (VmHWM) against its idle RSS, the slowest health check and the other `/task`'s
 * acknowledgement, and how the attacked run ended in its thread. Targets: every shape under
 * 400 MB of peak RSS, every answer within 3 s; the process exits 1 when one is missed.
 * `--app DIR` runs another checkout's app (an earlier version, for a before-and-after), and a
 * run that has not ended after `--cap` seconds (default 180) is reported as still going.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { sendSlashCommand } from "../tools/local-slack/slack-requests.ts";
import {
  appEnv,
  CHANNEL,
  NO_MESSAGE,
  OTHER,
  OWNER,
  SIGNING_SECRET,
  SlackScenario,
  startPeers,
  statusOf,
  TEAM,
} from "../test/support/harness.ts";
import type { Simulator } from "../tools/simulator/server.ts";
import type { LocalSlack } from "../tools/local-slack/index.ts";
import { type AppProcess, startAppProcess } from "./app-process.ts";

const SHAPES = {
  ordinary: "Plan the launch [sim:length=6000] [sim:files=4]",
  comments: "Summarise the report [sim:abuse=comments] [sim:length=6000]",
  json: "Draft the memo [sim:abuse=json] [sim:length=6000] [sim:delay=200]",
  runaway: "Write the novel [sim:abuse=runaway] [sim:chunk=50000] [sim:delay=5]",
  files: "Render the clips [sim:bigfiles=8x40] [sim:length=600]",
} as const;
type Shape = keyof typeof SHAPES;

const { values } = parseArgs({
  options: {
    shapes: { type: "string", default: Object.keys(SHAPES).join(",") },
    app: { type: "string" },
    cap: { type: "string", default: "180" },
  },
});
const capMs = Number(values.cap) * 1000;
const shapes = values.shapes.split(",").map((s) => s.trim()) as Shape[];
for (const s of shapes) {
  if (!(s in SHAPES)) {
    console.error(`unknown shape ${s}: one of ${Object.keys(SHAPES).join(", ")}`);
    process.exit(2);
  }
}

const DEADLINE_MS = 3000;
const PEAK_MAX_MB = 400;
const MB = 1024 * 1024;

/** Slack's side of the benchmark, against the app in its child process. */
class Bench extends SlackScenario {
  readonly #app: AppProcess;
  constructor(sim: Simulator, slack: LocalSlack, app: AppProcess) {
    super(sim, slack);
    this.#app = app;
  }
  get eventsUrl(): string {
    return this.#app.eventsUrl;
  }
}

/** A line of /proc/<pid>/status, in bytes (0 once the process is gone). */
function procBytes(pid: number, field: "VmRSS" | "VmHWM"): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

interface Row {
  shape: Shape;
  idleMb: number;
  peakMb: number;
  healthMaxMs: number;
  probes: number;
  otherAckMs: number;
  ended: string;
  pass: boolean;
}

async function measure(shape: Shape): Promise<Row> {
  const { sim, slack } = await startPeers({ simulator: { chunkDelayMs: 5 } });
  const app = await startAppProcess(
    appEnv(sim, slack, {
      LOG_LEVEL: "warn",
      SLACK_RATE_LIMITS: "",
      SLACK_EDIT_INTERVAL_MS: "1000",
    }),
    { appDir: values.app },
  );
  const bench = new Bench(sim, slack, app);
  try {
    await new Promise((r) => setTimeout(r, 1500)); // settled after start-up
    const idle = procBytes(app.pid, "VmRSS");
    const label = SHAPES[shape].split(" [")[0] ?? shape;
    const sent = await bench.command(SHAPES[shape], { user: OWNER });
    if (sent.status !== 200) throw new Error(`the hostile /task answered ${sent.status}`);
    const threadTs = await bench.waitForTaskThread(label, 10_000);
    const running = () => sim.runs().find((r) => r.promptText.startsWith(label));
    await slack.waitFor(() => running(), { description: "the hostile run", timeoutMs: 10_000 });

    // Health checks four times a second until the run's thread shows its end.
    let ended = false;
    const health: number[] = [];
    const probing = (async () => {
      while (!ended) {
        const probe = await timed(() =>
          fetch(`http://127.0.0.1:${app.port}/healthz`, { signal: AbortSignal.timeout(10_000) })
            .then((r) => r.status)
            .catch(() => 0),
        );
        health.push(probe.value === 200 ? probe.ms : Number.POSITIVE_INFINITY);
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    // Another person's task, once the hostile one is under way.
    await new Promise((r) => setTimeout(r, 1000));
    const other = await timed(() =>
      sendSlashCommand(app.eventsUrl, SIGNING_SECRET, {
        text: "Write a haiku [sim:length=200]",
        team_id: TEAM,
        user_id: OTHER,
        channel_id: CHANNEL,
        response_url: slack.responseUrl("bench-other"),
        trigger_id: `bench.other.${Date.now()}`,
      }).catch(() => ({ status: 0 })),
    );
    // The peak while it lasts (an app that dies has no /proc entry to read afterwards).
    let peak = 0;
    const sampling = setInterval(() => {
      if (!app.exited()) peak = Math.max(peak, procBytes(app.pid, "VmHWM"));
    }, 100);
    const replies = await bench
      .waitForFinal(threadTs, 1, capMs)
      .catch(() => undefined)
      .finally(() => {
        ended = true;
        clearInterval(sampling);
      });
    await probing;
    if (!app.exited()) peak = Math.max(peak, procBytes(app.pid, "VmHWM"));
    const endedAs = app.exited()
      ? "the app died"
      : replies === undefined
        ? `still going after ${capMs / 1000} s`
        : statusOf(replies.at(-1) ?? NO_MESSAGE);
    const healthMaxMs = Math.max(...health);
    const otherAckMs = other.value.status === 200 ? other.ms : Number.POSITIVE_INFINITY;
    const peakMb = peak / MB;
    return {
      shape,
      idleMb: idle / MB,
      peakMb,
      healthMaxMs,
      probes: health.length,
      otherAckMs,
      ended: endedAs.replace(/\s+/g, " ").slice(0, 110),
      pass:
        replies !== undefined &&
        peakMb < PEAK_MAX_MB &&
        healthMaxMs < DEADLINE_MS &&
        otherAckMs < DEADLINE_MS,
    };
  } finally {
    await app.stop();
    await Promise.allSettled([sim.close(), slack.close()]);
  }
}

const rows: Row[] = [];
for (const shape of shapes) {
  process.stderr.write(`${shape}…\n`);
  rows.push(await measure(shape));
}

const head = [
  "shape",
  "idle RSS",
  "peak RSS",
  "/healthz max",
  "other /task ack",
  "the run ended",
  "",
];
const cells = rows.map((r) => [
  r.shape,
  `${r.idleMb.toFixed(0)} MB`,
  `${r.peakMb.toFixed(0)} MB (+${(r.peakMb - r.idleMb).toFixed(0)})`,
  `${r.healthMaxMs.toFixed(0)} ms (${r.probes})`,
  `${r.otherAckMs.toFixed(0)} ms`,
  r.ended,
  r.pass ? "PASS" : "FAIL",
]);
const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? "").length)));
const line = (c: readonly string[]) =>
  `| ${c.map((x, i) => x.padEnd(widths[i] ?? 0)).join(" | ")} |`;
console.log(line(head));
console.log(`| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`);
for (const c of cells) console.log(line(c));
const failed = rows.filter((r) => !r.pass).length;
console.log(
  `\nTargets: peak RSS < ${PEAK_MAX_MB} MB, /healthz and another person's /task answered within ${DEADLINE_MS} ms. ${failed === 0 ? "All pass." : `${failed} FAIL.`}`,
);
process.exitCode = failed === 0 ? 0 : 1;
