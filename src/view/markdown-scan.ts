/** The character-level scanners behind the Markdown helpers, each one pass over its text: the
 * regular expressions they stand for (each function names its own) backtracked on hostile answers
 * ("60,000 `[` on one line"); the fuzz tests check that they give what it gave. */

/** JavaScript's `\s` (WhiteSpace and LineTerminator): the characters `trim()` removes. */
const SPACES = new Uint8Array(0x10000).fill(1, 0x2000, 0x200b);
for (const c of "\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff") {
  SPACES[c.charCodeAt(0)] = 1;
}
export const isSpace = (c: number): boolean => SPACES[c] === 1;

/** Whether `s` from `start` to `end` is only what `trim` removes. */
export function blank(s: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (!isSpace(s.charCodeAt(i))) return false;
  return true;
}

/** `/^ {0,3}(`{3,}|~{3,})(.*)$/` on a line: the end of its fence marker, or -1. */
function fenceEnd(text: string, start: number, end: number): number {
  let i = start;
  while (i < start + 3 && i < end && text.charCodeAt(i) === 32) i++;
  const c = i < end ? text.charCodeAt(i) : 0;
  if (c !== 96 && c !== 126) return -1; // ` or ~
  // Searched by the regular expression engine: a "fence" line may be a megabyte of backticks.
  const run = c === 96 ? BACKTICKS : TILDES;
  run.lastIndex = i;
  run.test(text);
  const j = Math.min(run.lastIndex, end);
  if (j - i < 3) return -1;
  LINE_END.lastIndex = j;
  const stop = LINE_END.exec(text)?.index ?? text.length;
  return stop < end ? -1 : j;
}

const BACKTICKS = /`*/y;
const TILDES = /~*/y;
const LINE_END = /[\n\r\u2028\u2029]/g;

export interface FenceState {
  open: string | undefined; // the fence marker, e.g. "```"
  info: string;
}

/** The fence state after one more line, `text.slice(start, end)` (CommonMark fenced code). */
export function advanceFence(state: FenceState, text: string, start = 0, end = text.length): void {
  // CRLF answers: "." does not match "\r".
  const last = end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end;
  const markerEnd = fenceEnd(text, start, last);
  if (markerEnd < 0) return;
  let from = start;
  while (text.charCodeAt(from) === 32) from++;
  const marker = text.slice(from, markerEnd);
  const rest = text.slice(markerEnd, last);
  // CommonMark: a backtick fence's info string has no backticks ("```npm i``` …" is inline code).
  if (marker[0] === "`" && rest.includes("`")) return;
  if (state.open === undefined) {
    state.open = marker;
    state.info = rest.trim();
  } else if (marker[0] === state.open[0] && marker.length >= state.open.length && !rest.trim()) {
    state.open = undefined;
    state.info = "";
  }
}

const FENCE_RUN = /`{3}|~{3}/g;
const LINE_BREAK = /[\n\r\u2028\u2029]/g; // what `^` follows in a multiline regular expression

/** `/^ {0,3}(?:`{3}|~{3})/gm` from `from`: where the next line that may be a fence starts, or the
 * text's length: the marker is searched, then its indent (a search for line starts tries every
 * space of a page of spaces). */
export function nextFenceLine(text: string, from: number): number {
  for (let at = from; ;) {
    FENCE_RUN.lastIndex = at;
    const run = FENCE_RUN.exec(text)?.index;
    if (run === undefined) return text.length;
    let start = run;
    while (start > from && run - start < 3 && text.charCodeAt(start - 1) === 32) start--;
    const before = start === 0 ? 10 : text.charCodeAt(start - 1);
    if (before === 10 || before === 13 || before === 0x2028 || before === 0x2029) return start;
    LINE_BREAK.lastIndex = run;
    const next = LINE_BREAK.exec(text)?.index;
    if (next === undefined) return text.length;
    at = next + 1;
  }
}

/** The fence state after the lines of `text`, found by `nextFenceLine`. */
export function scanFences(text: string, state: FenceState = { open: undefined, info: "" }) {
  for (let at = nextFenceLine(text, 0); at < text.length;) {
    const nl = text.indexOf("\n", at);
    const end = nl < 0 ? text.length : nl;
    if (at === 0 || text.charCodeAt(at - 1) === 10) advanceFence(state, text, at, end);
    at = nextFenceLine(text, end);
  }
  return state;
}

/** One line (no "\n") without a link or image whose target, or label, is still being written:
 * `line.replace(/!?\[[^\]\n]*\]\([^)\s]*$/, "").replace(/!?\[[^\]\n]*$/, "")`. */
export function cutDanglingLink(line: string): string {
  if (!line.includes("[")) return line;
  // "[label](target…": the target has no ")" and no space, so its "](" comes after the last
  // of those; its label starts at the first "[" after the "]" before that "](".
  const lastStop = lastTargetStop(line);
  let cut = -1;
  let open = -1; // the first "[" after some point, looked for again only once passed
  // No "](" at 0 or before the first "(" (a page of "]" would stop the search at each).
  const paren = line.indexOf("(", lastStop + 1);
  const from = paren < 0 ? -1 : Math.max(lastStop + 1, paren - 1, 1);
  for (let q = from < 0 ? -1 : line.indexOf("](", from); q > 0; q = line.indexOf("](", q + 1)) {
    const before = line.lastIndexOf("]", q - 1);
    if (open <= before) open = line.indexOf("[", before + 1);
    if (open < 0) break;
    if (open < q) {
      cut = open;
      break;
    }
  }
  let out = cut < 0 ? line : line.slice(0, withBang(line, cut));
  const label = out.indexOf("[", out.lastIndexOf("]") + 1);
  if (label >= 0) out = out.slice(0, withBang(out, label));
  return out;
}

/** The last ")" or space of a line, or -1. */
function lastTargetStop(line: string): number {
  const near = Math.max(0, line.length - 256);
  for (let i = line.length - 1; i >= near; i--) {
    const c = line.charCodeAt(i);
    if (c === 41 || isSpace(c)) return i;
  }
  return /[)\s][^)\s]*$/.exec(line)?.index ?? -1;
}

/** What a line's emphasis markers add up to, outside its code spans. */
export interface MarkerCounts {
  ticks: number;
  /** Non-overlapping `**`, `~~` and `__`. */
  strong: number;
  strike: number;
  under: number;
}

const MARKER = /[`*~_]/g;

export function nextMarker(text: string, from: number): number {
  MARKER.lastIndex = from;
  return MARKER.exec(text)?.index ?? text.length;
}

/** Adds to `into` a line's backticks, and its `**`, `~~` and `__` outside code spans
 * (`line.replace(/`[^`]*`/g, "")`). `first`: the first marker from `start`. */
export function countMarkers(
  text: string,
  start: number,
  end: number,
  into: MarkerCounts = { ticks: 0, strong: 0, strike: 0, under: 0 },
  first = nextMarker(text, start),
): MarkerCounts {
  // A run of L markers holds floor(L / 2) pairs; a code span taken out joins the text around it.
  let run = 0;
  let runOf = 0;
  for (let i = first; i <= end; i++) {
    const c = i < end ? text.charCodeAt(i) : -1;
    if (c === 96) {
      let close = i + 1;
      while (close < end && text.charCodeAt(close) !== 96) close++;
      if (close < end) {
        into.ticks += 2; // a code span
        i = close;
        continue;
      }
      into.ticks += 1; // the odd last one stays
    }
    if (c !== runOf) {
      addPairs(into, runOf, run);
      runOf = c;
      run = 0;
    }
    // One search for a run (a line of them may be a megabyte long).
    const rest = c === 42 ? STARS : c === 126 ? TILDE_RUN : c === 95 ? UNDERSCORES : undefined;
    if (rest === undefined) {
      run++;
      continue;
    }
    rest.lastIndex = i;
    rest.test(text);
    const to = Math.min(rest.lastIndex, end);
    run += to - i;
    i = to - 1;
  }
  return into;
}

/** `countMarkers`, right only as to parities: a line with no `*`, `~` or `_` has its backticks
 * found in pairs by one search (a megabyte of code spans is not read a character at a time). */
export function countMarkerParities(
  text: string,
  start: number,
  end: number,
  into: MarkerCounts = { ticks: 0, strong: 0, strike: 0, under: 0 },
  first = nextMarker(text, start),
): MarkerCounts {
  if (first >= end) return into;
  TICK_PAIRS.lastIndex = first;
  TICK_PAIRS.test(text);
  ONE_TICK_MORE.lastIndex = TICK_PAIRS.lastIndex;
  const odd = ONE_TICK_MORE.exec(text)?.[1] === "`";
  if (ONE_TICK_MORE.lastIndex < end) return countMarkers(text, start, end, into, first);
  if (odd) into.ticks += 1;
  return into;
}

const TICK_PAIRS = /(?:[^`\n*~_]*`[^`\n*~_]*`)*/y;
const ONE_TICK_MORE = /[^`\n*~_]*(`?)[^`\n*~_]*/y;

/** Updates `counts` for the line without its unpaired last backtick at `at`: the spans stay, and
 * the run before it may join the run after it. */
export function dropUnpairedTick(line: string, at: number, counts: MarkerCounts): void {
  counts.ticks -= 1;
  let before = 0;
  let of = 0;
  for (let i = at - 1; i >= 0;) {
    const c = line.charCodeAt(i);
    if (c === 96) {
      i = line.lastIndexOf("`", i - 1) - 1; // a code span (every backtick before pairs up)
      continue;
    }
    if (of === 0) of = c;
    if (c !== of) break;
    before++;
    i--;
  }
  if (before === 0 || (of !== 42 && of !== 126 && of !== 95)) return;
  let after = 0;
  while (line.charCodeAt(at + 1 + after) === of) after++;
  const joined = ((before + after) >> 1) - (before >> 1) - (after >> 1); // 0 or 1
  addPairs(counts, of, joined * 2);
}

/** Adds the pairs in a run of `run` markers `of` (`*`, `~` or `_`; else nothing) to `counts`. */
function addPairs(counts: MarkerCounts, of: number, run: number): void {
  if (of === 42) counts.strong += run >> 1;
  else if (of === 126) counts.strike += run >> 1;
  else if (of === 95) counts.under += run >> 1;
}

const STARS = /\*+/y;
const TILDE_RUN = /~+/y;
const UNDERSCORES = /_+/y;

const withBang = (s: string, at: number) => (at > 0 && s.charCodeAt(at - 1) === 33 ? at - 1 : at);

const WHITESPACE = /\s*/y;

/** Where a text goes on after the blank lines at `pos` (what `/^\s*\n/` removes). A run of
 * whitespace is scanned once however many times it is asked about. */
export class BlankLines {
  readonly #text: string;
  #runStart = 0;
  #runEnd = 0;
  #lastBreak = -1;

  constructor(text: string) {
    this.#text = text;
  }

  skip(pos: number): number {
    if (pos < this.#runStart || pos >= this.#runEnd) {
      WHITESPACE.lastIndex = pos;
      WHITESPACE.test(this.#text);
      const end = WHITESPACE.lastIndex;
      const inRun = this.#text.slice(pos, end).lastIndexOf("\n");
      this.#runStart = pos;
      this.#runEnd = end;
      this.#lastBreak = inRun < 0 ? -1 : pos + inRun;
    }
    return this.#lastBreak >= pos ? this.#lastBreak + 1 : pos;
  }
}

const SHORT_LINE = 64; // lines this long or longer are left to `countMarkers` and its searches

/** Short lines (63 characters at most) with no `*`, `~` or `_`, none of them blank, a table row or
 * a fence: one that starts with a backtick has no two more after it. */
const BACKTICK_LINES = /(?:[^\s|*~_`][^*~_\n]{0,62}\n|`(?!``)[^*~_\n]{0,62}\n)+/y;
const ANY_TICK_PAIRS = /(?:[^`]*`[^`]*`)*/y; // backticks in pairs, then one more
const ONE_TICK = /[^`]*`/y;

/** Native streaming's reading of a paragraph's short lines from `start` (a page of one-backtick
 * lines took 7 ms a character at a time: V8 reads a streamed, concatenated string slower). Adds to
 * `counts` what `countMarkers` would (only the backticks' parity on lines without other markers);
 * stops before a line that may be blank, a table row, a fence or long, or at `end`. Returns where
 * it stopped and the last line end where backticks, `**` and `~~` were balanced (-1 if none). */
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
      ANY_TICK_PAIRS.lastIndex = 0;
      ANY_TICK_PAIRS.test(lines);
      ONE_TICK.lastIndex = ANY_TICK_PAIRS.lastIndex;
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

/** Where the last line of `lines` with an odd number of backticks starts, or -1. */
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

/** `countMarkers` on the line from `at`: where its "\n" is, or -1 (counts untouched) if past `limit`. */
function markedLine(text: string, at: number, limit: number, counts: MarkerCounts): number {
  const n = { ...counts };
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
      addPairs(n, runOf, run);
      runOf = run = 0;
      if (open === i - 1) break; // nothing follows it
      i = open;
      open = -1;
      continue;
    }
    if (c === 96) {
      n.ticks++;
      open = open < 0 ? i : -1; // a closed span is taken out: the text around it joins
      continue;
    }
    if (open >= 0) continue; // in a code span
    const marker = c === 42 || c === 126 || c === 95 ? c : 0;
    if (marker !== runOf) {
      addPairs(n, runOf, run);
      runOf = marker;
      run = 0;
    }
    run++;
  }
  addPairs(n, runOf, run);
  Object.assign(counts, n);
  return i;
}
