/**
 * `--baseline DIR`: every scenario measured against an earlier app ("before") in the same
 * invocation as against this one ("after"), their lag p95 side by side and whether this app is
 * no worse than before (bench/shapes.ts `noWorse`: ≤ before × 1.1 + 1 s).
 */
import { keyOf, labelOf, type ModeOutcome } from "./budget-report.ts";
import { noWorse, noWorseLimitMs } from "./shapes.ts";

const s = (ms: number | undefined) => (ms === undefined ? "–" : (ms / 1000).toFixed(2));

const p95Of = (o: ModeOutcome | undefined): number | undefined =>
  o && "result" in o ? o.result.lag.p95 : undefined;

const sameScenario = (a: ModeOutcome, b: ModeOutcome) => keyOf(a) === keyOf(b) && a.mode === b.mode;

/** One line per scenario and mode: "PASS  10 runs, 12s, over-1m, auto: p95 before 9.10 s, after 6.20 s (≤ 11.01 s)". */
export function beforeAfterLines(
  before: readonly ModeOutcome[],
  after: readonly ModeOutcome[],
): string[] {
  return after.map((a) => {
    const b = before.find((x) => sameScenario(x, a));
    const beforeP95 = p95Of(b);
    const afterP95 = p95Of(a);
    const pass = noWorse(afterP95, beforeP95);
    const mark = pass === undefined ? "n/a " : pass ? "PASS" : "FAIL";
    const why =
      b === undefined
        ? "before not measured"
        : "unsupported" in b
          ? `before: ${b.unsupported}`
          : `≤ ${s(noWorseLimitMs(beforeP95 ?? 0))} s`;
    return `${mark}  ${labelOf(a)}: lag p95 before ${s(beforeP95)} s, after ${s(afterP95)} s (${why})`;
  });
}

export function beforeAfterText(
  before: readonly ModeOutcome[],
  after: readonly ModeOutcome[],
): string {
  return [
    "Before / after (--baseline): no worse than before = after p95 ≤ before p95 × 1.1 + 1 s (run-to-run noise on a shared machine):",
    ...beforeAfterLines(before, after),
  ].join("\n");
}
