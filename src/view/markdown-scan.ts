/**
 * The character-level scanners behind the Markdown helpers, each one pass over its text.
 *
 * Answers are hostile input: a model asked for "60,000 `[` on one line" writes them, and a
 * broken service can send anything. The regular expressions these replace backtracked on such
 * lines (`/!?\[[^\]\n]*\]\([^)\s]*$/` tries every `[` and runs to the end of the line from
 * each one; `/\s+$/` does the same in every run of spaces), so one render took seconds and
 * froze the process. Each function here says which expression it stands for; the fuzz tests
 * check that it gives exactly what the expression gave.
 */

/** JavaScript's `\s` (WhiteSpace and LineTerminator): the characters `trim()` removes. */
export function isSpace(c: number): boolean {
  return (
    (c >= 9 && c <= 13) ||
    c === 32 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Whether `s` from `start` to `end` is blanks only (what `trim` removes), or nothing. */
export function blank(s: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (!isSpace(s.charCodeAt(i))) return false;
  return true;
}

/**
 * The fence line `text.slice(start, end)` is, `/^ {0,3}(`{3,}|~{3,})(.*)$/`: the end of its
 * marker (the whole run of backticks or tildes), or -1 for any other line.
 */
export function fenceEnd(text: string, start: number, end: number): number {
  let i = start;
  while (i < start + 3 && i < end && text.charCodeAt(i) === 32) i++;
  const c = i < end ? text.charCodeAt(i) : 0;
  if (c !== 96 && c !== 126) return -1; // ` or ~
  // The run, and a line end in the rest, found by the regular expression engine: a "fence"
  // line may be a megabyte of backticks. (Both searches stop at the line's own end.)
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

/** Three backticks or tildes: where a fence line's marker may be. */
const FENCE_RUN = /`{3}|~{3}/g;
/** What `^` follows in a multiline regular expression. */
const LINE_BREAK = /[\n\r\u2028\u2029]/g;

/**
 * Where the first line at or after `from` that may be a fence starts (the text's length if
 * none): `/^ {0,3}(?:`{3}|~{3})/gm` from `from` (so a few that are not: `^` also follows
 * "\r"). Every fence line is found; a caller checks that what it finds starts a line. The
 * search is for the marker, then back over its indent: searching for the line start would
 * try every space of a page of spaces.
 */
export function nextFenceLine(text: string, from: number): number {
  for (let at = from; ;) {
    FENCE_RUN.lastIndex = at;
    const run = FENCE_RUN.exec(text)?.index;
    if (run === undefined) return text.length;
    let start = run;
    while (start > from && run - start < 3 && text.charCodeAt(start - 1) === 32) start--;
    const before = start === 0 ? 10 : text.charCodeAt(start - 1);
    if (before === 10 || before === 13 || before === 0x2028 || before === 0x2029) return start;
    // Not at a line start: no line before the next line break can be one.
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

/** Occurrences of `sub` in `s`, not overlapping, from the left (`s.split(sub).length - 1`). */
export function countOf(s: string, sub: string): number {
  let n = 0;
  for (let i = s.indexOf(sub); i >= 0; i = s.indexOf(sub, i + sub.length)) n++;
  return n;
}

/**
 * One line (no "\n") without a link or image whose target, or label, is still being
 * written: `line.replace(/!?\[[^\]\n]*\]\([^)\s]*$/, "").replace(/!?\[[^\]\n]*$/, "")`.
 */
export function cutDanglingLink(line: string): string {
  if (!line.includes("[")) return line;
  // "[label](target…" to the end: the target has no ")" and no space, so its "](" comes after
  // the last of those; its label starts at the first "[" after the "]" before that "](".
  const lastStop = lastTargetStop(line);
  let cut = -1;
  let open = -1; // the first "[" after some point, looked for again only once passed
  // A "](" at 0 has no label before it: the search starts at 1. Nor is there one before the
  // first "(" (searching for "](" through a page of "]" stops at every one of them).
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
  // "[label…" to the end: the first "[" after the last "]".
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
  // Far from the end: each start of this expression fails at once or runs to the next stop.
  return /[)\s][^)\s]*$/.exec(line)?.index ?? -1;
}

/** What a line's emphasis markers add up to, outside its code spans. */
export interface MarkerCounts {
  ticks: number;
  /** Non-overlapping `**`, `~~` and `__`, as `countOf` would count them. */
  strong: number;
  strike: number;
  under: number;
}

const MARKER = /[`*~_]/g;

/** Where the first backtick, `*`, `~` or `_` at or after `from` is (the text's length if none). */
export function nextMarker(text: string, from: number): number {
  MARKER.lastIndex = from;
  return MARKER.exec(text)?.index ?? text.length;
}

/**
 * Counts the backticks of `text.slice(start, end)` (one line), and its `**`, `~~` and `__`
 * once its code spans are taken out (`line.replace(/`[^`]*`/g, "")`: each backtick pairs with
 * the next; an odd last one stays). Adds to `into`, and returns it. `first` is where the
 * first marker at or after `start` is (a caller going line by line finds it once for many).
 */
export function countMarkers(
  text: string,
  start: number,
  end: number,
  into: MarkerCounts = { ticks: 0, strong: 0, strike: 0, under: 0 },
  first = nextMarker(text, start),
): MarkerCounts {
  // Most lines have no marker at all: `first`, found by the regular expression engine, says so.
  // Outside code, a run of one marker character of length L holds floor(L / 2) pairs; a
  // code span taken out joins the text around it into one run.
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
      if (runOf === 42) into.strong += run >> 1;
      else if (runOf === 126) into.strike += run >> 1;
      else if (runOf === 95) into.under += run >> 1;
      runOf = c;
      run = 0;
    }
    // A run of `*`, `~` or `_` in one search (a line of them is a megabyte long).
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

/**
 * `countMarkers` as far as its parities go (all its callers but tests look at): a line with
 * no `*`, `~` or `_` adds its backticks, found in pairs by one search (a megabyte of code
 * spans, "`\r`\r…", is read by the regular expression engine, not a character at a time), so
 * its ticks count 1 or 0. Any other line is counted. `end` is where the line ends: a "\n" or
 * the text's end.
 */
export function countMarkerParities(
  text: string,
  start: number,
  end: number,
  into: MarkerCounts = { ticks: 0, strong: 0, strike: 0, under: 0 },
  first = nextMarker(text, start),
): MarkerCounts {
  if (first >= end) return into;
  // Pairs of backticks, then one more or none, up to the line's end (no search passes a "\n")
  // unless a `*`, `~` or `_` comes first.
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

/**
 * The counts of a line once its last backtick, at `at`, is taken out, when it was unpaired
 * (`countMarkers` gave an odd number): what counting the line again would give, found around
 * it. It paired with nothing, so the spans stay; it ended the run before it (counting the
 * spans taken out), which now joins the run after it if they are of the same character.
 */
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
  const joined = ((before + after) >> 1) - (before >> 1) - (after >> 1);
  if (of === 42) counts.strong += joined;
  else if (of === 126) counts.strike += joined;
  else counts.under += joined;
}

const STARS = /\*+/y;
const TILDE_RUN = /~+/y;
const UNDERSCORES = /_+/y;

/** An image's "!" goes with its "[". */
const withBang = (s: string, at: number) => (at > 0 && s.charCodeAt(at - 1) === 33 ? at - 1 : at);

const WHITESPACE = /\s*/y;

/**
 * Where a text goes on after the blank lines at `pos` (what `/^\s*\n/` removes from the text
 * from `pos`). Positions only move forward, and a run of whitespace is scanned once however
 * many times it is asked about.
 */
export class BlankLines {
  readonly #text: string;
  #runStart = 0;
  #runEnd = 0;
  /** The last "\n" of the run, or -1. */
  #lastBreak = -1;

  constructor(text: string) {
    this.#text = text;
  }

  skip(pos: number): number {
    if (pos < this.#runStart || pos >= this.#runEnd) {
      WHITESPACE.lastIndex = pos;
      WHITESPACE.test(this.#text);
      const end = WHITESPACE.lastIndex;
      const inRun = this.#text.slice(pos, end).lastIndexOf("\n"); // searched within the run
      this.#runStart = pos;
      this.#runEnd = end;
      this.#lastBreak = inRun < 0 ? -1 : pos + inRun;
    }
    return this.#lastBreak >= pos ? this.#lastBreak + 1 : pos;
  }
}
