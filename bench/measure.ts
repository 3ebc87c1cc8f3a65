/**
 * Pure measurement helpers of the benchmark: how much of a service answer a Slack thread
 * shows, chunk → visible lag, percentiles, and the time windows in which enough runs stream.
 */

/** A line the app may add or drop around a split code block: a bare fence (```lang). */
const FENCE_LINE = /^\s*(`{3,}|~{3,})\S*\s*$/;
const ZWSP = /\u200B/g;

/**
 * Text for comparing what Slack shows with what the service sent: the zero-width spaces the
 * app puts into mentions, whitespace, and fence-only lines (the app closes and reopens a code
 * block where it splits an answer across messages) are dropped.
 */
export function comparable(text: string): string {
  return text
    .replace(ZWSP, "")
    .split("\n")
    .filter((line) => !FENCE_LINE.test(line))
    .join("")
    .replace(/\s+/g, "");
}

/**
 * `comparable(text)` together with, for every offset of `text`, how many comparable
 * characters precede it: `keptBefore[i]` = comparable length of `text.slice(0, i)`.
 */
export function comparableWithOffsets(text: string): { norm: string; keptBefore: Int32Array } {
  const keptBefore = new Int32Array(text.length + 1);
  let norm = "";
  let kept = 0;
  let lineStart = 0;
  while (lineStart <= text.length) {
    const nl = text.indexOf("\n", lineStart);
    const lineEnd = nl < 0 ? text.length : nl;
    const line = text.slice(lineStart, lineEnd);
    const dropLine = FENCE_LINE.test(line.replace(ZWSP, ""));
    for (let i = lineStart; i < lineEnd; i++) {
      keptBefore[i] = kept;
      const ch = text[i] ?? "";
      if (!dropLine && !/\s/.test(ch) && ch !== "\u200B") {
        norm += ch;
        kept++;
      }
    }
    if (nl < 0) {
      keptBefore[text.length] = kept;
      break;
    }
    keptBefore[nl] = kept; // the newline itself is whitespace
    lineStart = nl + 1;
  }
  return { norm, keptBefore };
}

export function commonPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** A chunk as the simulator emitted it: its end offset in the answer and when. */
export interface ChunkMark {
  readonly end: number;
  readonly at: number;
}

/** What a run's thread showed right after one Slack call: the comparable visible text. */
export interface VisibleMark {
  readonly at: number;
  readonly norm: string;
}

/**
 * Lag of every chunk: from its emission to the first Slack call, at or after it, after which
 * the thread shows the answer at least up to the chunk's end. Chunks never shown are counted
 * in `unseen`.
 */
export function chunkLags(
  answer: string,
  chunks: readonly ChunkMark[],
  visible: readonly VisibleMark[],
): { lags: number[]; unseen: number } {
  const { norm, keptBefore } = comparableWithOffsets(answer);
  const covered = visible.map((v) => ({ at: v.at, len: commonPrefixLength(v.norm, norm) }));
  const lags: number[] = [];
  let unseen = 0;
  for (const chunk of chunks) {
    const need = keptBefore[Math.min(chunk.end, answer.length)] ?? norm.length;
    const shown = covered.find((c) => c.at >= chunk.at && c.len >= need);
    if (shown) lags.push(shown.at - chunk.at);
    else unseen++;
  }
  return { lags, unseen };
}

/** Nearest-rank percentile of an ascending array (undefined when empty). */
export function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

/** The parts of time where at least `k` of the intervals overlap, merged, in order. */
export function windowsWithAtLeast(
  intervals: readonly (readonly [number, number])[],
  k: number,
): [number, number][] {
  const events: [number, number][] = [];
  for (const [start, end] of intervals) {
    if (end <= start) continue;
    events.push([start, 1], [end, -1]);
  }
  // Ends before starts at the same instant: touching intervals do not overlap.
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const windows: [number, number][] = [];
  let active = 0;
  let openedAt: number | undefined;
  for (const [at, delta] of events) {
    active += delta;
    if (active >= k && openedAt === undefined) openedAt = at;
    else if (active < k && openedAt !== undefined) {
      const last = windows.at(-1);
      if (last && last[1] === openedAt) last[1] = at;
      else if (at > openedAt) windows.push([openedAt, at]);
      openedAt = undefined;
    }
  }
  return windows;
}

/** How many of `times` fall inside one of the windows. */
export function countInWindows(
  times: readonly number[],
  windows: readonly (readonly [number, number])[],
): number {
  let n = 0;
  for (const t of times) if (windows.some(([a, b]) => t >= a && t < b)) n++;
  return n;
}

/** The largest number of intervals open at once. */
export function peakOverlap(intervals: readonly (readonly [number, number])[]): number {
  const events: [number, number][] = [];
  for (const [start, end] of intervals) events.push([start, 1], [end, -1]);
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let active = 0;
  let peak = 0;
  for (const [, delta] of events) {
    active += delta;
    peak = Math.max(peak, active);
  }
  return peak;
}
