/**
 * `npm run bench [-- --scenarios 1,10,50,1000] [--scale 25] [--length 3000] [--bursts …]`
 *
 * Starts the task service simulator and a local Slack Web API that enforces Slack's tier
 * budgets (429 + Retry-After), spawns the app (`node src/main.ts`, HTTP mode) per scenario,
 * drives it with signed `/task` requests and prints the figures of issue 4 with the targets.
 * Scenarios above 50 runs scale the local Slack's tiers and the app's budgets by a common
 * factor (`--scale`, default 25): the same shape, that many times faster (Slack's real
 * chat.update tier could not even carry 1,000 final edits within minutes).
 *
 * `--bursts 50x1,50x5,50x1m` (default) then sends N tasks at once into C channels (`m`: by
 * mentions instead of `/task`) and prints the burst figures with PASS/FAIL; `--bursts none`
 * skips them.
 *
 * `--modes auto,edit,native` (default: all three) measures every scenario in each streaming
 * mode (SLACK_STREAMING) and prints issue 24's table: lag against the physical bound of the
 * scenario, messages per answer against edit mode's, the budget that ran out, PASS/FAIL. A
 * mode the app rejects at start-up is reported as not supported. `--streaming MODE` is
 * `--modes MODE`.
 *
 * `--long` (or `--long-scale N`) adds issue 24's long-run check: a 12-minute native run whose
 * streams end after 5 minutes (both divided by N), its thread compared with the answer;
 * `--long-user-stop`: a person also presses Slack's stop on the first stream (stopped_by_user).
 *
 * `--shapes 6s,12s,60s,3m` (default `6s`, the answer above) and `--starts at-once,over-1m`
 * (default `at-once`) make issue 33's matrix: every scenario in every answer shape
 * (bench/shapes.ts) with its runs' `/task` sent all at once or evenly over a minute; the
 * table then adds each scenario's lag p95 against its physical bound (the same starts) and
 * the verdict "p95 ≤ 2 × bound p95 + 5 s". `--baseline DIR` measures every scenario also
 * against the app in DIR (like `--app`) and prints before / after p95 with "no worse than
 * before".
 *
 * `--cpu-prof DIR` writes a V8 CPU profile of each app process; `--app DIR` runs the
 * `src/main.ts` of another checkout (e.g. `git archive HEAD`, node_modules linked);
 * `--app-env K=V,K=V` adds settings to the app's environment.
 */
import { parseArgs } from "node:util";
import { baselineText, cpuSplitText, detailsText, table, targetsText } from "./report.ts";
import { type BurstResult, burstReport, runBurst } from "./burst.ts";
import { runScenario, type ScenarioResult, type StreamingMode } from "./scenario.ts";
import {
  budgetDetailsText,
  budgetTable,
  budgetTargetsText,
  type Bound,
  keyOf,
  type ModeOutcome,
  type ScenarioKey,
  TARGETS_SHAPE,
} from "./budget-report.ts";
import { physicalBound } from "./budgets.ts";
import {
  type AnswerShape,
  answerChars,
  describeShape,
  parseShapes,
  parseStarts,
  scenarioWorkload,
  spreadMs,
  startOffsetMs,
  type Starts,
} from "./shapes.ts";
import { beforeAfterText } from "./baseline.ts";
import { longRunText, runLongCheck } from "./long-run.ts";

const { values } = parseArgs({
  options: {
    scenarios: { type: "string", default: "1,10,50,1000" },
    bursts: { type: "string", default: "50x1,50x5,50x1m" },
    scale: { type: "string", default: "25" },
    length: { type: "string", default: "3000" },
    shapes: { type: "string", default: TARGETS_SHAPE },
    starts: { type: "string", default: "at-once" },
    baseline: { type: "string" },
    modes: { type: "string" },
    streaming: { type: "string" },
    long: { type: "boolean", default: false },
    "long-scale": { type: "string" },
    "long-user-stop": { type: "boolean", default: false },
    "app-env": { type: "string" },
    "cpu-prof": { type: "string" },
    app: { type: "string" },
    /** Run the largest scenario again with 4× longer answers, to split CPU per run / per chunk. */
    split: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});

if (values.help) {
  console.log(
    "usage: npm run bench -- [--scenarios 1,10,50,1000|none] [--bursts 50x1,50x5,50x1m|none] [--scale 25] [--length 3000] [--shapes 6s,12s,60s,3m] [--starts at-once,over-1m] [--baseline CHECKOUT_DIR] [--modes auto,edit,native] [--long] [--long-scale N] [--long-user-stop] [--cpu-prof DIR] [--app CHECKOUT_DIR] [--app-env K=V,…] [--split]",
  );
  process.exit(0);
}

const scenarios =
  values.scenarios === "none" ? [] : values.scenarios.split(",").map((v) => Number(v.trim()));
const bursts = (values.bursts === "none" ? [] : values.bursts.split(",")).map((spec) => {
  const m = /^(\d+)x(\d+)(m?)$/.exec(spec.trim());
  return m ? { tasks: Number(m[1]), channels: Number(m[2]), mention: m[3] === "m" } : undefined;
});
const largeScale = Number(values.scale);
const answerLength = Number(values.length);
const MODES: readonly StreamingMode[] = ["auto", "edit", "native"];
const modes = (values.modes ?? values.streaming ?? MODES.join(","))
  .split(",")
  .map((m) => m.trim()) as StreamingMode[];
const longScale = Number(values["long-scale"] ?? (values.long ? "1" : "0"));
const appEnv = Object.fromEntries(
  (values["app-env"] ?? "")
    .split(",")
    .filter((kv) => kv.includes("="))
    .map((kv) => [kv.slice(0, kv.indexOf("=")).trim(), kv.slice(kv.indexOf("=") + 1)]),
);
if (
  modes.length === 0 ||
  modes.some((m) => !MODES.includes(m)) ||
  !(longScale >= 0) ||
  (values["long-scale"] !== undefined && !(longScale >= 1)) ||
  (values["app-env"] !== undefined && Object.keys(appEnv).length === 0)
) {
  console.error(
    "bad arguments: --modes takes auto,edit,native; --long-scale N ≥ 1; --app-env K=V,K=V",
  );
  process.exit(2);
}
if (
  scenarios.some((n) => !Number.isInteger(n) || n < 1 || n > 5000) ||
  bursts.some((b) => b === undefined || b.tasks < 1 || b.channels < 1 || b.channels > b.tasks) ||
  !(largeScale >= 1) ||
  !(answerLength >= 100)
) {
  console.error(
    "bad arguments: --scenarios takes run counts 1..5000, --bursts TASKSxCHANNELS[m], --scale ≥ 1, --length ≥ 100",
  );
  process.exit(2);
}

const shapes = parseShapes(values.shapes, answerLength);
const startsList = parseStarts(values.starts);
for (const parsed of [shapes, startsList]) {
  if (typeof parsed === "string") {
    console.error(`bad arguments: ${parsed}`);
    process.exit(2);
  }
}
const shapeList = shapes as AnswerShape[];
const starts = startsList as Starts[];
const progress = (line: string) => process.stderr.write(`${line}\n`);
const results: ScenarioResult[] = [];
const started = Date.now();
let failed = false;
/** A mode the app under test rejects at start-up (e.g. `auto` before issue 24). */
const unsupported = (err: unknown, mode: StreamingMode): string | undefined => {
  const text = err instanceof Error ? err.message : String(err);
  return /at start-up/.test(text) && text.includes("SLACK_STREAMING")
    ? `not supported by this app (SLACK_STREAMING=${mode} rejected at start-up)`
    : undefined;
};
const outcomes: ModeOutcome[] = [];
/** The same scenarios against `--baseline`'s app. */
const before: ModeOutcome[] = [];
const runOne = async (
  k: ScenarioKey,
  mode: StreamingMode,
  o: { readonly appDir?: string | undefined; readonly into?: ModeOutcome[] } = {},
): Promise<ScenarioResult | undefined> => {
  const { runs, shape } = k;
  const scale = runs > 50 ? largeScale : 1;
  const length = answerChars(shape);
  progress(
    `scenario: ${runs} concurrent run(s) started ${k.starts}, ${mode} mode, budgets ${scale === 1 ? "real" : `×${scale}`}, ${describeShape(shape)}${o.appDir === undefined ? "" : `, app in ${o.appDir}`}`,
  );
  try {
    const result = await runScenario({
      runs,
      scale,
      answerLength: length,
      chunkChars: shape.chunkChars,
      delayMs: shape.delayMs,
      startOffsetMs: (i) => startOffsetMs(k.starts, i, runs),
      // Generous: runs are started as fast as the budgets allow, then need their final edits
      // (counted from the last /task sent).
      timeoutMs: 60_000 + (runs * 4000) / scale + shape.chunks * shape.delayMs[1],
      sendConcurrency: 50,
      streaming: mode,
      appEnv,
      progress,
      cpuProfileDir: values["cpu-prof"],
      appDir: o.appDir,
    });
    progress(`  done in ${Math.round(result.wallMs / 1000)} s`);
    o.into?.push({ ...k, mode, result });
    return result;
  } catch (err) {
    const reason = unsupported(err, mode);
    if (reason !== undefined) {
      progress(`  ${reason}`);
      o.into?.push({ ...k, mode, unsupported: reason });
      return undefined;
    }
    failed = true;
    progress(
      `  scenario failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    return undefined;
  }
};
const keys: ScenarioKey[] = shapeList.flatMap((shape) =>
  scenarios.flatMap((runs) => starts.map((s) => ({ runs, shape, starts: s }))),
);
/** Issue 4's figures are for the benchmark's answer before issue 33, all runs asked at once. */
const isIssue4 = (k: ScenarioKey) => k.shape.name === TARGETS_SHAPE && k.starts === "at-once";
for (const k of keys) {
  for (const mode of modes) {
    const result = await runOne(k, mode, { appDir: values.app, into: outcomes });
    if (result && isIssue4(k)) results.push(result);
    if (values.baseline !== undefined) {
      await runOne(k, mode, { appDir: values.baseline, into: before });
    }
  }
}
// The issue-4 figures and the CPU split: in edit mode when measured, else the first mode.
const mainMode = modes.includes("edit") ? "edit" : (modes[0] ?? "edit");
const largest = results
  .filter((r) => r.mode === mainMode)
  .reduce<ScenarioResult | undefined>(
    (a, b) => (a === undefined || b.runs > a.runs ? b : a),
    undefined,
  );
const longShape = shapeList.find((sh) => sh.name === TARGETS_SHAPE);
const longer =
  values.split && largest && longShape
    ? await runOne(
        {
          runs: largest.runs,
          shape: { ...longShape, chunks: longShape.chunks * 4 },
          starts: "at-once",
        },
        mainMode,
        { appDir: values.app },
      )
    : undefined;

const burstResults: BurstResult[] = [];
for (const b of bursts) {
  if (!b) continue;
  const via = b.mention ? "mention" : "command";
  progress(`burst: ${b.tasks} tasks by ${via} in ${b.channels} channel(s), real budgets`);
  try {
    const r = await runBurst({
      tasks: b.tasks,
      channels: b.channels,
      via,
      answerLength: 600,
      // Two posts per task at about one per second per channel, then the final edits.
      timeoutMs: 120_000 + ((b.tasks * 2) / b.channels) * 1500,
      progress,
      appDir: values.app,
    });
    progress(`  done in ${Math.round(r.wallMs / 1000)} s`);
    burstResults.push(r);
  } catch (err) {
    failed = true;
    progress(`  burst failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  }
}

const longRun =
  longScale > 0
    ? await runLongCheck({
        scale: longScale,
        mode: "native",
        userStop: values["long-user-stop"],
        appDir: values.app,
        appEnv,
        progress,
      }).catch((err: unknown) => {
        failed = true;
        progress(
          `  long run failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
        );
        return undefined;
      })
    : undefined;

const scaled = results.find((r) => r.scale !== 1)?.scale;
console.log("");
if (outcomes.length > 0) {
  console.log(
    `Benchmark: answers ${shapeList.map(describeShape).join("; ")}; runs started ${starts.map((st) => (st === "at-once" ? "all at once" : `evenly over ${spreadMs(st) / 1000} s`)).join(" / ")}; one channel per run, one workspace, SLACK_EDIT_INTERVAL_MS=1000, modes ${modes.join(", ")}.`,
  );
}
console.log(`App: node src/main.ts in ${values.app ?? "this checkout"}.`);
if (values.baseline !== undefined) {
  console.log(`Baseline ("before"): node src/main.ts in ${values.baseline}.`);
}
if (scaled !== undefined) {
  console.log(
    `Runs > 50: budgets ×${scaled} (local Slack's tiers and the app's SLACK_RATE_LIMITS alike): same shape, ${scaled}× faster; chunk timing unchanged.`,
  );
}
for (const mode of modes) {
  const ofMode = results.filter((r) => r.mode === mode);
  if (ofMode.length === 0) continue;
  console.log("");
  console.log(`Issue 4 figures, ${mode} mode:`);
  console.log(table(ofMode));
  console.log("");
  console.log(targetsText(ofMode));
  console.log("");
  console.log(baselineText(ofMode));
  console.log("");
  console.log(detailsText(ofMode));
}
if (outcomes.length > 0) {
  // The bound depends on the scenario only: the same runs, chunks, delays and start times.
  const bounds = new Map<string, Bound>();
  for (const k of keys) {
    const workload = scenarioWorkload(k.shape, k.runs, k.starts);
    bounds.set(keyOf(k), physicalBound(workload, { scale: k.runs > 50 ? largeScale : 1 }));
  }
  console.log("");
  console.log(
    "Issue 24 and 33 figures: each scenario in each streaming mode; physical bound = the lag ideal schedulers reach spending all of Slack's budgets, with the same runs, chunks and start times (docs/benchmarks.md):",
  );
  console.log(budgetTable(outcomes, bounds));
  console.log("");
  console.log(budgetTargetsText(outcomes, bounds));
  console.log("");
  console.log(budgetDetailsText(outcomes));
  if (values.baseline !== undefined) {
    console.log("");
    console.log(beforeAfterText(before, outcomes));
  }
}
if (longRun) {
  console.log("");
  console.log(longRunText(longRun));
}
if (largest && longer) {
  console.log("");
  console.log(cpuSplitText(largest, longer));
}
if (burstResults.length > 0) {
  console.log("");
  console.log(burstReport(burstResults));
}
console.log("");
console.log(`Total time: ${Math.round((Date.now() - started) / 1000)} s`);
process.exit(failed ? 1 : 0);
