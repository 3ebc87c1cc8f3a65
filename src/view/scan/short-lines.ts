/**
 * Native streaming's reading of a page of short lines (markdown.ts, `StreamablePrefix`): what
 * `countMarkers` and a balance check do to each, as far as the balance goes.
 *
 * Half a million one-character lines of backticks took 7 ms read a character at a time (V8
 * reads a string built by concatenation, as a streamed answer is, several times slower than
 * prose's regular-expression searches, 2 ms). Lines whose only markers are backticks change
 * nothing but the parity of the backticks: they are taken at once by one search, and their
 * backticks counted in pairs by another.
 */
import { isSpace, type MarkerCounts } from "../markdown-scan.ts";

/** Lines this long or longer are left to `countMarkers` and its searches. */
const SHORT_LINE = 64;

/**
 * Short lines (63 characters at most) with no `*`, `~` or `_`, none of them blank, a table
 * row or a fence: one that starts with a backtick has no two more after it.
 */
const BACKTICK_LINES = /(?:[^\s|*~_`][^*~_\n]{0,62}\n|`(?!``)[^*~_\n]{0,62}\n)+/y;
/** Backticks in pairs, then one more. */
const TICK_PAIRS = /(?:[^`]*`[^`]*`)*/y;
const ONE_TICK = /[^`]*`/y;

/**
 * What `countMarkers` and a balance check do to each of the short lines of a paragraph from
 * `start`: a page of one-character lines costs its length, not searches and calls for each
 * line. It stops before the first line that may be blank, a table row, a fence or long (the
 * caller's general path reads those), or at `end`, a line start. Adds to `counts` what
 * `countMarkers` would, but for the backticks of lines without other markers, of which it
 * adds the parity (the balance is all any caller reads); returns where it stopped and the
 * last line end after which the backticks, `**` and `~~` were balanced (-1 if none).
 */
export function readShortLines(
  text: string,
  start: number,
  end: number,
  counts: MarkerCounts,
): { stop: number; balancedAt: number } {
  let balancedAt = -1;
  let at = start; // where the line being read starts
  while (at < end) {
    BACKTICK_LINES.lastIndex = at;
    if (BACKTICK_LINES.test(text) && BACKTICK_LINES.lastIndex <= end) {
      const stop = BACKTICK_LINES.lastIndex;
      const lines = text.slice(at, stop);
      TICK_PAIRS.lastIndex = 0;
      TICK_PAIRS.test(lines);
      ONE_TICK.lastIndex = TICK_PAIRS.lastIndex;
      const odd = ONE_TICK.test(lines) ? 1 : 0;
      if (((counts.strong | counts.strike) & 1) === 0) {
        // Balanced at their end, or else where the last line with an odd number starts.
        const last = ((counts.ticks + odd) & 1) === 0 ? lines.length : lastOddLine(lines);
        if (last > 0) balancedAt = at + last;
      }
      counts.ticks += odd;
      at = stop;
      continue;
    }
    const c0 = text.charCodeAt(at);
    if (c0 === 124 || ((c0 <= 32 || c0 >= 0xa0) && isSpace(c0))) break;
    if (
      (c0 === 96 || c0 === 126) &&
      text.charCodeAt(at + 1) === c0 &&
      text.charCodeAt(at + 2) === c0
    ) {
      break; // may be a fence
    }
    const nl = markedLine(text, at, Math.min(at + SHORT_LINE, end), counts);
    if (nl < 0) break; // a long line: left to the general path
    at = nl + 1;
    if (((counts.ticks | counts.strong | counts.strike) & 1) === 0) balancedAt = at; // all even
  }
  return { stop: at, balancedAt };
}

/** Where the last line of `lines` (each ending in "\n") with an odd number of backticks
 * starts, or -1. */
function lastOddLine(lines: string): number {
  let odd = 0;
  for (let i = lines.length - 2; i >= -1; i--) {
    const c = i < 0 ? 10 : lines.charCodeAt(i);
    if (c === 96) odd ^= 1;
    else if (c === 10) {
      if (odd === 1) return i + 1;
      odd = 0;
    }
  }
  return -1;
}

/**
 * `countMarkers` on the line from `at`, a character at a time,
 * added to `counts`: where its "\n" is, or -1 (counts untouched) when none comes before `limit`.
 */
function markedLine(text: string, at: number, limit: number, counts: MarkerCounts): number {
  let { ticks, strong, strike, under } = counts;
  let run = 0;
  let runOf = 0; // the marker character of the current run, 0 for none
  let open = -1; // the backtick that opened a code span still open
  let i = at;
  for (; ; i++) {
    if (i === limit) return -1; // a long line: left to the general path
    const c = text.charCodeAt(i);
    if (c === 10) {
      if (open < 0) break;
      // The last backtick opened no span: it ends the run before it, and what follows it
      // (no backtick) is read again, as text.
      if (runOf === 42) strong += run >> 1;
      else if (runOf === 126) strike += run >> 1;
      else if (runOf === 95) under += run >> 1;
      runOf = run = 0;
      if (open === i - 1) break; // nothing follows it
      i = open;
      open = -1;
      continue;
    }
    if (c === 96) {
      ticks++;
      open = open < 0 ? i : -1; // a closed span is taken out: the text around it joins
      continue;
    }
    if (open >= 0) continue; // in a code span
    const marker = c === 42 || c === 126 || c === 95 ? c : 0;
    if (marker !== runOf) {
      if (runOf === 42) strong += run >> 1;
      else if (runOf === 126) strike += run >> 1;
      else if (runOf === 95) under += run >> 1;
      runOf = marker;
      run = 0;
    }
    run++;
  }
  if (runOf === 42) strong += run >> 1;
  else if (runOf === 126) strike += run >> 1;
  else if (runOf === 95) under += run >> 1;
  Object.assign(counts, { ticks, strong, strike, under });
  return i;
}
