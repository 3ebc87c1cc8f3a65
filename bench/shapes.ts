/**
 * Issue 33's benchmark matrix, pure: the shapes of an answer (how many chunks, how big, how far
 * apart, i.e. how long it streams), when the runs of a scenario are started, the workload the
 * physical bound is computed on, and the verdicts against the bound and against a baseline.
 */
import { benchWorkload, type RunWorkload } from "./budgets.ts";

/** How an answer streams: the simulator's `[sim:length=…] [sim:chunk=…] [sim:delay=…]`. */
export interface AnswerShape {
  readonly name: string;
  readonly chunks: number;
  readonly chunkChars: number;
  /** Each run gets a fixed chunk delay in this range (ms); lo = hi for a fixed delay. */
  readonly delayMs: readonly [number, number];
}

/**
 * What one message holds: the app rolls a native stream over at 9,000 UTF-8 bytes and an
 * edited message at 10,000 Markdown characters. Every shape's answer is ASCII and below both
 * (with room for the simulator's "about N characters"), so each answer fits one message.
 */
export const ONE_MESSAGE_CHARS = 8000;

/**
 * The shapes `--shapes` takes. `6s` is the benchmark's answer before issue 33 (its length is
 * `--length`, default 3,000: 125 chunks); the others are the issue's measurements.
 */
export const SHAPES: Readonly<Record<string, Omit<AnswerShape, "name">>> = {
  /** ~6 s: 3,000 characters in 24-character chunks 40–60 ms apart (per run). */
  "6s": { chunks: 125, chunkChars: 24, delayMs: [40, 60] },
  /** ~12 s: 60 chunks of 50 characters every 200 ms (3,000 characters). */
  "12s": { chunks: 60, chunkChars: 50, delayMs: [200, 200] },
  /** ~60 s: 120 chunks of 50 characters every 500 ms (6,000 characters). */
  "60s": { chunks: 120, chunkChars: 50, delayMs: [500, 500] },
  /** ~3 min: 180 chunks of 40 characters every second (7,200 characters). */
  "3m": { chunks: 180, chunkChars: 40, delayMs: [1000, 1000] },
};

export const answerChars = (s: AnswerShape): number => s.chunks * s.chunkChars;

/** How long an answer of this shape streams (ms), at the mean of its delay range. */
export const streamMs = (s: AnswerShape): number => (s.chunks * (s.delayMs[0] + s.delayMs[1])) / 2;

/** A one-line description: "12s (60 chunks of 50 chars every 200 ms, 3,000 chars)". */
export function describeShape(s: AnswerShape): string {
  const [lo, hi] = s.delayMs;
  const every = lo === hi ? `every ${lo} ms` : `${lo}–${hi} ms apart`;
  return `${s.name} (${s.chunks} chunks of ${s.chunkChars} chars ${every}, ${answerChars(s).toLocaleString("en-US")} chars)`;
}

/**
 * `--shapes 6s,12s,60s,3m` → the shapes, or a message naming what is accepted. `length` is
 * `--length`: the characters of the `6s` shape (in 24-character chunks).
 */
export function parseShapes(spec: string, length: number): AnswerShape[] | string {
  const names = spec
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
  const unknown = names.filter((n) => !Object.hasOwn(SHAPES, n));
  if (names.length === 0 || unknown.length > 0) {
    return `--shapes takes a list of ${Object.keys(SHAPES).join(", ")}${unknown.length > 0 ? ` (not ${unknown.join(", ")})` : ""}`;
  }
  return [...new Set(names)].map((name) => {
    const shape = SHAPES[name] as Omit<AnswerShape, "name">;
    return name === "6s"
      ? { ...shape, name, chunks: Math.ceil(length / shape.chunkChars) }
      : { ...shape, name };
  });
}

/** When the runs of a scenario send their `/task`: all at once, or evenly over a minute. */
export type Starts = "at-once" | "over-1m";
export const STARTS: readonly Starts[] = ["at-once", "over-1m"];
const SPREAD_MS: Readonly<Record<Starts, number>> = { "at-once": 0, "over-1m": 60_000 };

export function parseStarts(spec: string): Starts[] | string {
  const names = spec
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
  const unknown = names.filter((n) => !(STARTS as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length > 0) {
    return `--starts takes a list of ${STARTS.join(", ")}${unknown.length > 0 ? ` (not ${unknown.join(", ")})` : ""}`;
  }
  return [...new Set(names)] as Starts[];
}

/** How long (ms) the starts of a scenario are spread over. */
export const spreadMs = (starts: Starts): number => SPREAD_MS[starts];

/**
 * When run `index` of `runs` sends its `/task` (ms from the scenario's start): evenly over
 * the spread, the first at 0 and the last one step before its end (50 runs over a minute: one
 * every 1.2 s, the last at 58.8 s).
 */
export function startOffsetMs(starts: Starts, index: number, runs: number): number {
  return runs <= 1 ? 0 : Math.round((index * spreadMs(starts)) / runs);
}

/** The chunk delay of run `index`: spread over the range, fixed per run. */
export function chunkDelayOf(index: number, [lo, hi]: readonly [number, number]): number {
  return lo + ((index * 7) % (hi - lo + 1));
}

/** The workload of a scenario without the app: the same runs, chunks, delays and start times. */
export function scenarioWorkload(shape: AnswerShape, runs: number, starts: Starts): RunWorkload[] {
  return benchWorkload(
    runs,
    shape.chunks,
    (i) => chunkDelayOf(i, shape.delayMs),
    (i) => startOffsetMs(starts, i, runs),
  );
}

// ---- verdicts -------------------------------------------------------------------------------

/** Issue 33's target: auto mode's lag p95 within twice the physical bound's p95, plus 5 s. */
export const nearBoundLimitMs = (boundP95Ms: number): number => 2 * boundP95Ms + 5000;

export function nearBound(lagP95Ms: number | undefined, boundP95Ms: number | undefined) {
  if (lagP95Ms === undefined || boundP95Ms === undefined) return false;
  return lagP95Ms <= nearBoundLimitMs(boundP95Ms);
}

/** p95 / bound p95; undefined when the bound is 0 (one run: every chunk can show at once). */
export function boundRatio(lagP95Ms: number | undefined, boundP95Ms: number | undefined) {
  if (lagP95Ms === undefined || boundP95Ms === undefined || boundP95Ms <= 0) return undefined;
  return lagP95Ms / boundP95Ms;
}

/**
 * "No worse than before": the same scenario against the baseline app in the same invocation
 * may be 10 % + 1 s slower at p95 and still pass. The two apps are measured one after the
 * other on a shared machine: the 10 % is run-to-run noise of the many-run scenarios (their p95
 * is set by when budgets free up, which shifts with the start spread), the 1 s that of the
 * few-run ones (the app's one edit a second: a chunk may just miss an edit).
 */
export const noWorseLimitMs = (beforeP95Ms: number): number => beforeP95Ms * 1.1 + 1000;

export function noWorse(afterP95Ms: number | undefined, beforeP95Ms: number | undefined) {
  if (beforeP95Ms === undefined) return undefined;
  if (afterP95Ms === undefined) return false;
  return afterP95Ms <= noWorseLimitMs(beforeP95Ms);
}
