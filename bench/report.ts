/** The benchmark's printed figures: one table row per scenario, then the targets. */
import type { ScenarioResult } from "./scenario.ts";

const s = (ms: number | undefined) => (ms === undefined ? "–" : `${(ms / 1000).toFixed(2)}`);
const pct = (x: number | undefined) => (x === undefined ? "n/a" : `${Math.round(x * 100)} %`);
const mb = (b: number | undefined) => (b === undefined ? "–" : `${Math.round(b / 1024 / 1024)} MB`);
const num = (x: number, digits = 1) =>
  Number.isInteger(x) ? String(x) : x.toFixed(digits).replace(/\.?0+$/, "");

function callsCell(r: ScenarioResult): string {
  const order = ["chat.update", "chat.postMessage"];
  const parts = order
    .filter((m) => r.callsPerRun[m] !== undefined)
    .map((m) => `${m.replace(/^chat\./, "")} ${num(r.callsPerRun[m] ?? 0)}`);
  for (const [m, n] of Object.entries(r.callsPerRun)) {
    if (!order.includes(m)) parts.push(`${m.replace(/^(chat|conversations)\./, "")} ${num(n)}`);
  }
  return parts.join(", ");
}

function budgetCell(r: ScenarioResult): string {
  if (r.budget.windowMs === 0) return "n/a (never ≥ 5)";
  const window = `${Math.round(r.budget.windowMs / 1000)} s`;
  if (r.budget.share === undefined) return `n/a (only ${window})`;
  return `${pct(r.budget.share)} (${window})`;
}

export function table(results: readonly ScenarioResult[]): string {
  const head = [
    "runs",
    "budgets",
    "lag p50 / p95 / max (s)",
    "Slack calls per run",
    "text calls vs baseline",
    "429s",
    "chat.update budget used while ≥ 5 stream",
    "peak active",
    "CPU per chunk",
    "peak RSS",
    "complete",
    "wall",
  ];
  const rows = results.map((r) => [
    r.runs.toLocaleString("en-US"),
    r.scale === 1 ? "real tiers" : `×${r.scale}`,
    `${s(r.lag.p50)} / ${s(r.lag.p95)} / ${s(r.lag.max)}`,
    callsCell(r),
    `${r.textCalls.toLocaleString("en-US")} / ${r.baselineCalls.toLocaleString("en-US")} = 1/${r.textCalls > 0 ? Math.round(r.baselineCalls / r.textCalls) : "∞"}`,
    `${r.rateLimited.slack} (app: ${r.rateLimited.app})`,
    budgetCell(r),
    String(r.peakStreaming),
    r.cpuUsPerChunk === undefined ? "–" : `${Math.round(r.cpuUsPerChunk)} µs`,
    mb(r.peakRssBytes),
    `${r.complete}/${r.runs}`,
    `${Math.round(r.wallMs / 1000)} s`,
  ]);
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
}

export interface Verdict {
  readonly target: string;
  readonly measured: string;
  readonly pass: boolean | undefined;
}

export function verdicts(results: readonly ScenarioResult[]): Verdict[] {
  const out: Verdict[] = [];
  const at = (n: number) => results.find((r) => r.runs === n);
  const fifty = at(50);
  if (fifty) {
    out.push({
      target: "0 × 429 at 50 concurrent runs",
      measured: `${fifty.rateLimited.slack} (app counted ${fifty.rateLimited.app})`,
      pass: fifty.rateLimited.slack === 0 && fifty.rateLimited.app === 0,
    });
  }
  const one = at(1);
  if (one) {
    out.push({
      target: "1 run: lag p50 ≤ 1.2 s",
      measured: `${s(one.lag.p50)} s`,
      pass: one.lag.p50 !== undefined && one.lag.p50 <= 1200,
    });
    out.push({
      target: "1 run: lag p95 ≤ 2 s",
      measured: `${s(one.lag.p95)} s`,
      pass: one.lag.p95 !== undefined && one.lag.p95 <= 2000,
    });
  }
  for (const r of results) {
    if (r.runs < 5) continue;
    out.push({
      target: `${r.runs} runs: ≥ 80 % of the chat.update budget used while ≥ 5 runs stream`,
      measured: budgetCell(r),
      pass: r.budget.share === undefined ? undefined : r.budget.share >= 0.8,
    });
  }
  for (const r of results) {
    out.push({
      target: `${r.runs} run${r.runs === 1 ? "" : "s"}: ≤ 1/20 of the baseline's calls`,
      measured: `${r.textCalls} vs ${r.baselineCalls} (1/${r.textCalls > 0 ? Math.round(r.baselineCalls / r.textCalls) : "∞"})`,
      pass: r.textCalls * 20 <= r.baselineCalls,
    });
  }
  const big = at(1000);
  if (big) {
    out.push({
      target: "1,000 runs complete",
      measured: `${big.complete}/${big.runs}`,
      pass: big.complete === big.runs,
    });
    out.push({
      target: "1,000 runs: peak RSS ≤ 400 MB",
      measured: mb(big.peakRssBytes),
      pass: big.peakRssBytes !== undefined && big.peakRssBytes <= 400 * 1024 * 1024,
    });
    out.push({
      target: "1,000 runs: ≤ 30 µs CPU per chunk",
      measured: big.cpuUsPerChunk === undefined ? "–" : `${Math.round(big.cpuUsPerChunk)} µs`,
      pass: big.cpuUsPerChunk !== undefined && big.cpuUsPerChunk <= 30,
    });
  }
  for (const r of results) {
    if (r.runs === 1000 || r.complete === r.runs) continue;
    out.push({
      target: `${r.runs} runs complete`,
      measured: `${r.complete}/${r.runs}`,
      pass: false,
    });
  }
  return out;
}

export function targetsText(results: readonly ScenarioResult[]): string {
  return verdicts(results)
    .map((v) => {
      const mark = v.pass === undefined ? "n/a " : v.pass ? "PASS" : "FAIL";
      return `${mark}  ${v.target}: ${v.measured}`;
    })
    .join("\n");
}

/** The edit-per-chunk baseline against the app, over every scenario of this run. */
export function baselineText(results: readonly ScenarioResult[]): string {
  const lines = results.map((r) => {
    const minutes = r.wallMs / 60_000;
    const baselinePerMinute = minutes > 0 ? r.baselineCalls / minutes : 0;
    const tier = 50 * r.scale;
    return `  ${r.runs} run${r.runs === 1 ? "" : "s"}: baseline ${r.baselineCalls.toLocaleString("en-US")} edits (${Math.round(baselinePerMinute).toLocaleString("en-US")}/min = ${num(baselinePerMinute / tier)}× the chat.update tier) vs app ${r.textCalls.toLocaleString("en-US")} text calls: app/baseline = ${(r.textCalls / Math.max(1, r.baselineCalls)).toFixed(3)}`;
  });
  return ["Baseline (one edit per chunk) vs app:", ...lines].join("\n");
}

/** Where the time went: the app's own lag and scheduler queue waits. */
export function detailsText(results: readonly ScenarioResult[]): string {
  const lines = results.map((r) => {
    const waits = Object.entries(r.queueWaitMs)
      .map(([m, w]) => `${m} ${s(w.mean)}/${s(w.max)}`)
      .join(", ");
    return `  ${r.runs} runs: start spread ${s(r.startSpreadMs)} s; app-reported lag mean ${s(r.appLagMs.mean)} s, max ${s(r.appLagMs.max)} s; scheduler queue wait mean/max (s): ${waits}; superseded edits ${r.superseded}; chunks ${r.chunks.toLocaleString("en-US")}, unseen ${r.lag.unseen}; benchmark process CPU ${Math.round(r.benchCpuShare * 100)} %${r.problems.length > 0 ? `\n    problems: ${r.problems.join(" | ")}` : ""}`;
  });
  return ["Details:", ...lines].join("\n");
}

/**
 * Splits the app's CPU time into a cost per run and a cost per chunk, from the same number of
 * runs with two answer lengths (a straight line through two points): what a run costs whatever
 * its length (the /task request, posts, edits, task creation, store records) and what each
 * further chunk adds (reading, parsing and reconciling the stream, showing it).
 */
export function cpuSplitText(short: ScenarioResult, long: ScenarioResult): string {
  if (short.cpuUs === undefined || long.cpuUs === undefined || long.chunks <= short.chunks) {
    return "CPU split: not measurable (no CPU figures, or no more chunks in the longer pass)";
  }
  const perChunk = (long.cpuUs - short.cpuUs) / (long.chunks - short.chunks);
  const perRun = (short.cpuUs - perChunk * short.chunks) / short.runs;
  const fmt = (n: number) => n.toLocaleString("en-US");
  return [
    `CPU split (${fmt(short.runs)} runs, ${fmt(short.answerLength)}- and ${fmt(long.answerLength)}-char answers):`,
    `  ${fmt(short.chunks)} chunks: ${(short.cpuUs / 1e6).toFixed(2)} s CPU; ${fmt(long.chunks)} chunks: ${(long.cpuUs / 1e6).toFixed(2)} s CPU`,
    `  each further chunk: ${perChunk.toFixed(1)} µs; each run, whatever its length: ${(perRun / 1000).toFixed(1)} ms (${Math.round(perRun / (short.chunks / short.runs))} µs per chunk at ${Math.round(short.chunks / short.runs)} chunks per run)`,
  ].join("\n");
}
