/**
 * Native streaming's reading of a page of short lines (markdown.ts, `StreamablePrefix`): what
 * `countMarkers` and a balance check do to each, a unit at a time in one loop.
 *
 * A streamed answer is a string built by concatenation, which V8 reads a unit at a time
 * (`charCodeAt`) several times slower than a typed array: half a million one-character lines
 * took 7 ms that way, against 2 ms for prose of the same size (read by regular expressions).
 * The lines are copied into a reused array of UTF-16 units instead, a little ahead of where
 * the reading is (twice as far each time, so the copying stays within twice what is read).
 */
import { Buffer } from "node:buffer";
import { isSpace, type MarkerCounts } from "../markdown-scan.ts";

/** Lines this long or longer are left to `countMarkers` and its searches. */
const SHORT_LINE = 64;

/** The units read at most at once, the first time, and the array they are copied into. */
const CHUNK = 1 << 14;
const FIRST_CHUNK = 64;
const BYTES = Buffer.allocUnsafeSlow(CHUNK * 2);
const UNITS = new Uint16Array(BYTES.buffer, BYTES.byteOffset, CHUNK);

/**
 * What `countMarkers` and a balance check do to each of the short lines of a paragraph from
 * `start`, read a unit at a time in one loop: a page of one-character lines costs its length,
 * not searches and calls for each line. It stops before the first line that may be blank, a
 * table row, a fence or long (the caller's general path reads those), or at `end`, a line
 * start. Adds to `counts`; returns where it stopped and the last line end after which the
 * backticks, `**` and `~~` were balanced (-1 if none).
 */
export function readShortLines(
  text: string,
  start: number,
  end: number,
  counts: MarkerCounts,
): { stop: number; balancedAt: number } {
  let balancedAt = -1;
  // The parities of the backticks and of the `**` and `~~` (1: odd), and the backticks of
  // lines without other markers, not yet added to the counts.
  let ticksOdd = counts.ticks & 1;
  let othersOdd = (counts.strong | counts.strike) & 1;
  let added = 0;
  let at = start; // where the line being read starts
  // UNITS holds the text from `from`, `copied` units; the next copy takes `size` (in one
  // function, not a class: V8 reads locals faster than fields or module variables).
  let from = start;
  let copied = 0;
  let size = FIRST_CHUNK;
  lines: while (at < end) {
    if (at >= from + copied) {
      [from, copied, size] = copy(text, at, end, size);
    }
    const c0 = UNITS[at - from] ?? 0;
    if (c0 === 124 || ((c0 <= 32 || c0 >= 0xa0) && isSpace(c0))) break;
    if (c0 === 96 || c0 === 126) {
      const k = at + 1 - from;
      const c1 = k < copied ? UNITS[k] : text.charCodeAt(at + 1);
      const c2 = k + 1 < copied ? UNITS[k + 1] : text.charCodeAt(at + 2);
      if (c1 === c0 && c2 === c0) break; // may be a fence
    }
    // A line whose only markers are backticks adds them all, whatever spans they make (each
    // pair is a span, an odd last one stays).
    const limit = Math.min(at + SHORT_LINE, end);
    let ticks = 0;
    let i = at;
    for (;;) {
      if (i >= from + copied) [from, copied, size] = copy(text, i, end, size);
      const c = UNITS[i - from] ?? 0;
      if (c === 10) break;
      if (i === limit - 1) break lines; // a long line: left to the general path
      if (c === 96) ticks++;
      else if (c === 42 || c === 126 || c === 95) {
        // Other markers: the line is read again by the rules for all of them.
        counts.ticks += added;
        added = ticks = 0;
        i = markedLine(text, at, limit, counts);
        if (i < 0) break lines;
        ticksOdd = counts.ticks & 1;
        othersOdd = (counts.strong | counts.strike) & 1;
        break;
      }
      i++;
    }
    added += ticks;
    ticksOdd ^= ticks & 1;
    at = i + 1;
    if ((ticksOdd | othersOdd) === 0) balancedAt = at; // all even
  }
  counts.ticks += added;
  return { stop: at, balancedAt };
}

/**
 * The text's units from `i` (at most `size`, not past `end`) copied into UNITS: where they
 * start, how many, and how many the next copy takes (twice as many, up to CHUNK).
 */
function copy(text: string, i: number, end: number, size: number): [number, number, number] {
  const n = Math.min(size, end - i);
  BYTES.write(text.slice(i, i + n), 0, "ucs2"); // units as they are, none decoded
  return [i, n, Math.min(size * 2, CHUNK)];
}

/**
 * `countMarkers` on the line from `at` (one with `*`, `~` or `_`), a character at a time,
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
