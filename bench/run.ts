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
 * `--cpu-prof DIR` writes a V8 CPU profile of each app process; `--app DIR` runs the
 * `src/main.ts` of another checkout (e.g. `git archive HEAD`, node_modules linked).
 */
import { parseArgs } from "node:util";
import { baselineText, cpuSplitText, detailsText, table, targetsText } from "./report.ts";
import { type BurstResult, burstReport, runBurst } from "./burst.ts";
import { runScenario, type ScenarioResult } from "./scenario.ts";

const { values } = parseArgs({
  options: {
    scenarios: { type: "string", default: "1,10,50,1000" },
    bursts: { type: "string", default: "50x1,50x5,50x1m" },
    scale: { type: "string", default: "25" },
    length: { type: "string", default: "3000" },
    streaming: { type: "string", default: "edit" },
    "cpu-prof": { type: "string" },
    app: { type: "string" },
    /** Run the largest scenario again with 4× longer answers, to split CPU per run / per chunk. */
    split: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});

if (values.help) {
  console.log(
    "usage: npm run bench -- [--scenarios 1,10,50,1000|none] [--bursts 50x1,50x5,50x1m|none] [--scale 25] [--length 3000] [--streaming edit|native] [--cpu-prof DIR] [--app CHECKOUT_DIR] [--split]",
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
const streaming = values.streaming === "native" ? "native" : "edit";
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

const progress = (line: string) => process.stderr.write(`${line}\n`);
const results: ScenarioResult[] = [];
const started = Date.now();
let failed = false;
const runOne = async (runs: number, length: number): Promise<ScenarioResult | undefined> => {
  const scale = runs > 50 ? largeScale : 1;
  progress(
    `scenario: ${runs} concurrent run(s), budgets ${scale === 1 ? "real" : `×${scale}`}, ${length}-char answers`,
  );
  try {
    const result = await runScenario({
      runs,
      scale,
      answerLength: length,
      chunkChars: 24,
      delayMs: [40, 60],
      // Generous: runs are started as fast as the budgets allow, then need their final edits.
      timeoutMs: 60_000 + (runs * 4000) / scale + (length / 24) * 60,
      sendConcurrency: 50,
      streaming,
      progress,
      cpuProfileDir: values["cpu-prof"],
      appDir: values.app,
    });
    progress(`  done in ${Math.round(result.wallMs / 1000)} s`);
    return result;
  } catch (err) {
    failed = true;
    progress(
      `  scenario failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    return undefined;
  }
};
for (const runs of scenarios) {
  const result = await runOne(runs, answerLength);
  if (result) results.push(result);
}
const largest = results.reduce<ScenarioResult | undefined>(
  (a, b) => (a === undefined || b.runs > a.runs ? b : a),
  undefined,
);
const longer = values.split && largest ? await runOne(largest.runs, answerLength * 4) : undefined;

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

const scaled = results.find((r) => r.scale !== 1)?.scale;
console.log("");
console.log(
  `Benchmark: ${answerLength}-char answers, ~24 chars per chunk, 40–60 ms between chunks, one channel per run, one workspace, SLACK_EDIT_INTERVAL_MS=1000, ${streaming} streaming.`,
);
console.log(`App: node src/main.ts in ${values.app ?? "this checkout"}.`);
if (scaled !== undefined) {
  console.log(
    `Runs > 50: budgets ×${scaled} (local Slack's tiers and the app's SLACK_RATE_LIMITS alike): same shape, ${scaled}× faster; chunk timing unchanged.`,
  );
}
if (results.length > 0) {
  console.log("");
  console.log(table(results));
  console.log("");
  console.log(targetsText(results));
  console.log("");
  console.log(baselineText(results));
  console.log("");
  console.log(detailsText(results));
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
