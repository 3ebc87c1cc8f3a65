/**
 * Issue 24's and 33's figures: each scenario (runs × answer shape × start pattern) in each
 * streaming mode (auto, edit, native) side by side, with the budget that ran out, the physical
 * bound of the scenario and the lag's ratio to it, and PASS/FAIL against the issues' targets.
 * Edit mode is "today's" for messages per answer.
 */
import type { ScenarioResult, StreamingMode } from "./scenario.ts";
import { type BucketUse, type PhysicalBound as Bound, ranOut } from "./budgets.ts";
import {
  type AnswerShape,
  answerChars,
  boundRatio,
  nearBound,
  nearBoundLimitMs,
  ONE_MESSAGE_CHARS,
  type Starts,
} from "./shapes.ts";

export type { Bound };

/** What sets a scenario apart from another (its physical bound depends on these alone). */
export interface ScenarioKey {
  readonly runs: number;
  readonly shape: AnswerShape;
  readonly starts: Starts;
}

export const keyOf = (k: ScenarioKey): string => `${k.runs}|${k.shape.name}|${k.starts}`;

/** A scenario in one mode: measured, or not supported by the app under test. */
export type ModeOutcome = ScenarioKey &
  (
    | { readonly mode: StreamingMode; readonly result: ScenarioResult }
    | { readonly mode: StreamingMode; readonly unsupported: string }
  );

/** The shape whose scenarios issue 24's lag targets are for (the benchmark's answer before 33). */
export const TARGETS_SHAPE = "6s";

/** Issue 24's lag targets (ms), by number of concurrent runs. */
export const LAG_TARGETS: Readonly<Record<number, { readonly p50: number; readonly p95: number }>> =
  {
    1: { p50: 500, p95: 1000 },
    10: { p50: 3000, p95: 7000 },
    50: { p50: 20_000, p95: 45_000 },
  };

const s = (ms: number | undefined) => (ms === undefined ? "–" : (ms / 1000).toFixed(2));
const num = (x: number, digits = 1) =>
  Number.isInteger(x) ? String(x) : x.toFixed(digits).replace(/\.?0+$/, "");

function callsCell(r: ScenarioResult): string {
  const text = [
    "chat.postMessage",
    "chat.update",
    "chat.startStream",
    "chat.appendStream",
    "chat.stopStream",
    "chat.delete",
  ];
  return text
    .filter((m) => r.callsPerRun[m] !== undefined)
    .map((m) => `${m.replace(/^chat\./, "")} ${num(r.callsPerRun[m] ?? 0)}`)
    .join(", ");
}

function budgetCell(u: BucketUse | undefined): string {
  if (!u) return "none (no call waited ≥ 2 s)";
  const wait = u.waitMaxMs === undefined ? "" : `waited ≤ ${s(u.waitMaxMs)} s`;
  const full = u.fullMs >= 500 ? `full ${Math.round(u.fullMs / 1000)} s` : "";
  return `${u.key} (${[wait, full].filter((x) => x !== "").join(", ")})`;
}

const editOf = (outcomes: readonly ModeOutcome[], k: ScenarioKey): ScenarioResult | undefined => {
  const o = outcomes.find((x) => keyOf(x) === keyOf(k) && x.mode === "edit");
  return o && "result" in o ? o.result : undefined;
};

const ratioCell = (lagP95: number | undefined, bound: Bound | undefined): string => {
  const ratio = boundRatio(lagP95, bound?.p95);
  return ratio === undefined ? (bound?.p95 === 0 ? "– (bound 0)" : "–") : `${num(ratio, 2)}×`;
};

export function budgetTable(
  outcomes: readonly ModeOutcome[],
  bounds: ReadonlyMap<string, Bound>,
): string {
  const head = [
    "runs",
    "shape",
    "starts",
    "mode",
    "lag p50 / p95 (s)",
    "physical bound p50 / p95 (s)",
    "p95 / bound p95",
    "429s",
    "complete",
    "messages per answer (edit = today's)",
    "Slack calls per run",
    "budget that ran out",
  ];
  const rows = outcomes.map((o) => {
    const bound = bounds.get(keyOf(o));
    const boundCell = bound
      ? `${s(bound.p50)} / ${s(bound.p95)} (steady ${s(bound.steady.p50)} / ${s(bound.steady.p95)})`
      : "–";
    const scenario = [String(o.runs), o.shape.name, o.starts, o.mode];
    if (!("result" in o)) {
      return [...scenario, "not supported by this app", boundCell, "", "", "", "", "", ""];
    }
    const r = o.result;
    const edit = editOf(outcomes, o);
    return [
      ...scenario,
      `${s(r.lag.p50)} / ${s(r.lag.p95)}`,
      boundCell,
      ratioCell(r.lag.p95, bound),
      `${r.rateLimited.slack} (app: ${r.rateLimited.app})`,
      `${r.complete}/${r.runs}`,
      `${num(r.messagesPerAnswer, 2)}${edit && r.mode !== "edit" ? ` (edit ${num(edit.messagesPerAnswer, 2)})` : ""}`,
      callsCell(r),
      budgetCell(ranOut(r.budgets)),
    ];
  });
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
}

interface Verdict {
  readonly target: string;
  readonly measured: string;
  readonly pass: boolean | undefined;
}

export const labelOf = (o: ScenarioKey & { readonly mode: StreamingMode }): string =>
  `${o.runs} run${o.runs === 1 ? "" : "s"}, ${o.shape.name}, ${o.starts}, ${o.mode}`;

/** Issue 33: lag p95 within 2 × the bound's p95 + 5 s. */
export function nearBoundVerdict(r: ScenarioResult, bound: Bound | undefined, label: string) {
  if (bound?.p95 === undefined) {
    return { target: `${label}: lag p95 ≤ 2 × bound p95 + 5 s`, measured: "no bound", pass: false };
  }
  const ratio = boundRatio(r.lag.p95, bound.p95);
  return {
    target: `${label}: lag p95 ≤ 2 × bound p95 + 5 s = ${s(nearBoundLimitMs(bound.p95))} s`,
    measured: `${s(r.lag.p95)} s (bound p95 ${s(bound.p95)} s${ratio === undefined ? "" : `, ratio ${num(ratio, 2)}`})`,
    pass: nearBound(r.lag.p95, bound.p95),
  };
}

function verdictsOf(
  o: ModeOutcome,
  outcomes: readonly ModeOutcome[],
  bounds: ReadonlyMap<string, Bound>,
): Verdict[] {
  const label = labelOf(o);
  if (!("result" in o)) {
    return [{ target: `${label}: measured`, measured: o.unsupported, pass: undefined }];
  }
  const r = o.result;
  const out: Verdict[] = [];
  const lag =
    o.shape.name === TARGETS_SHAPE && o.starts === "at-once" ? LAG_TARGETS[o.runs] : undefined;
  if (lag) {
    out.push({
      target: `${label}: lag p50 ≤ ${num(lag.p50 / 1000)} s`,
      measured: `${s(r.lag.p50)} s`,
      pass: r.lag.p50 !== undefined && r.lag.p50 <= lag.p50,
    });
    out.push({
      target: `${label}: lag p95 ≤ ${num(lag.p95 / 1000)} s`,
      measured: `${s(r.lag.p95)} s`,
      pass: r.lag.p95 !== undefined && r.lag.p95 <= lag.p95,
    });
  }
  out.push(nearBoundVerdict(r, bounds.get(keyOf(o)), label));
  out.push({
    target: `${label}: 0 × 429`,
    measured: `${r.rateLimited.slack} (app counted ${r.rateLimited.app})`,
    pass: r.rateLimited.slack === 0 && r.rateLimited.app === 0,
  });
  out.push({
    target: `${label}: every answer complete`,
    measured: `${r.complete}/${r.runs}`,
    pass: r.complete === r.runs,
  });
  if (answerChars(o.shape) <= ONE_MESSAGE_CHARS) {
    out.push({
      target: `${label}: one message per answer (${answerChars(o.shape)} chars fit one)`,
      measured: num(r.messagesPerAnswer, 2),
      pass: r.messagesPerAnswer <= 1,
    });
  }
  const edit = editOf(outcomes, o);
  out.push({
    target: `${label}: messages per answer ≤ edit mode's`,
    measured: edit
      ? `${num(r.messagesPerAnswer, 2)} vs ${num(edit.messagesPerAnswer, 2)}`
      : `${num(r.messagesPerAnswer, 2)} (edit mode not measured in this run)`,
    pass: edit ? r.messagesPerAnswer <= edit.messagesPerAnswer : undefined,
  });
  return out;
}

export function budgetTargetsText(
  outcomes: readonly ModeOutcome[],
  bounds: ReadonlyMap<string, Bound>,
): string {
  return outcomes
    .flatMap((o) => verdictsOf(o, outcomes, bounds))
    .map((v) => {
      const mark = v.pass === undefined ? "n/a " : v.pass ? "PASS" : "FAIL";
      return `${mark}  ${v.target}: ${v.measured}`;
    })
    .join("\n");
}

/** Every text budget of every measured scenario: calls, time full, the app's longest wait. */
export function budgetDetailsText(outcomes: readonly ModeOutcome[]): string {
  const lines: string[] = [];
  for (const o of outcomes) {
    if (!("result" in o)) continue;
    const cells = o.result.budgets
      .filter((u) => u.calls > 0)
      .map(
        (u) =>
          `${u.key} ${u.calls} calls${u.fullMs >= 500 ? `, full ${Math.round(u.fullMs / 1000)} s` : ""}${u.waitMaxMs === undefined ? "" : `, wait mean/max ${s(u.waitMeanMs)}/${s(u.waitMaxMs)} s`}`,
      );
    const errors = Object.entries(o.result.errors)
      .map(([k, n]) => `${k} ×${n}`)
      .join(", ");
    lines.push(`  ${labelOf(o)}: ${cells.join("; ")}${errors === "" ? "" : `; errors: ${errors}`}`);
  }
  return ["Budgets (full = its sliding minute held ≥ 90 % of the tier):", ...lines].join("\n");
}
