/**
 * Pure Markdown helpers for showing an answer in Slack `markdown` blocks: making a
 * half-written answer render cleanly while it streams, and splitting a long answer into
 * message-sized parts at sensible boundaries without breaking code blocks.
 *
 * The repair is kept over the remend package (1.4.0), which failed the property tests: it
 * never closes a code fence ("```ts\nx" stays open), and it rewrites finished lines, so posted
 * messages change: an unfinished link swallows what follows ("a [b](https://x\n\nnext" becomes
 * "a b") and "_x\n\n" gains a "_" on the earlier line. It also completes "**bo" where the tests
 * drop the marker. Run before this repair it still lost those lines, at about 8 times the cost.
 */

import {
  advanceFence,
  BlankLines,
  countMarkerParities,
  countMarkers,
  dropUnpairedTick,
  cutDanglingLink,
  type FenceState,
  isSpace,
  type MarkerCounts,
  nextFenceLine,
  nextMarker,
  scanFences,
} from "./markdown-scan.ts";
import { readShortLines } from "./scan/short-lines.ts";
import { Ahead, lastSpace, minCut, type WindowHas } from "./scan/windows.ts";

/**
 * Closes what a stream left open so that a partial answer renders as it will look when done:
 * an open code fence is closed; on the last line, an unpaired `**`, `~~` or backtick is
 * dropped, and a link or image whose target is still being written is cut off.
 */
export function repairPartialMarkdown(text: string): string {
  const { kept, closing } = repairPartial(text);
  return kept + closing;
}

/**
 * `repairPartialMarkdown` as what it keeps of the text and the line it adds after it: a code
 * block's closing fence ("\n" and backticks or tildes, which no mention can start, end or run
 * into), or nothing.
 */
export function repairPartial(text: string): { kept: string; closing: string } {
  // One line has no break: searched forwards first (backwards is a unit at a time).
  const lastBreak = text.indexOf("\n") < 0 ? -1 : text.lastIndexOf("\n");
  const head = text.slice(0, lastBreak + 1);
  let line = text.slice(lastBreak + 1);
  const state = scanFences(head);
  // The last line just closed a code block: its ``` or ~~~ is no unpaired marker.
  const headOpen = state.open !== undefined;
  advanceFence(state, line);
  if (state.open !== undefined) {
    return { kept: text, closing: `${text.endsWith("\n") ? "" : "\n"}${state.open}` };
  }
  if (headOpen) return { kept: text, closing: "" };
  // A dangling link: "[label](http://exa" or "[label" with no closing bracket yet.
  line = cutDanglingLink(line);
  // Inline code first: markers inside code spans do not count.
  const outsideCode = countMarkerParities(line, 0, line.length);
  if (outsideCode.ticks % 2 === 1) {
    const last = line.lastIndexOf("`");
    dropUnpairedTick(line, last, outsideCode); // the counts without it, as a second count gave
    line = line.slice(0, last) + line.slice(last + 1);
  }
  if (outsideCode.strong % 2 === 1) line = removeLast(line, "**");
  if (outsideCode.strike % 2 === 1) line = removeLast(line, "~~");
  if (outsideCode.under % 2 === 1) line = removeLast(line, "__");
  return { kept: head + line, closing: "" };
}

function removeLast(s: string, marker: string): string {
  const i = s.lastIndexOf(marker);
  return i < 0 ? s : s.slice(0, i) + s.slice(i + marker.length);
}

/**
 * Splits Markdown into parts of at most `limit` characters. It cuts at a blank line where
 * it can, then at a line end, then at a space; a code block cut in two is closed at the end
 * of one part and reopened (same language) at the start of the next. Splitting depends only
 * on the text up to each cut, so parts already shown stay the same while an answer grows.
 */
export function splitMarkdown(text: string, limit: number): string[] {
  if (limit < 200) throw new RangeError("limit too small to split Markdown sensibly");
  const parts: string[] = [];
  const blanks = new BlankLines(text);
  const ahead = new Ahead(text);
  // What is left to split is always the text from `pos`: each pass looks at one part's window.
  let pos = 0;
  let reopen = "";
  while (reopen.length + text.length - pos > limit) {
    const budget = limit - reopen.length - 5; // room to close a fence: "\n````"
    const window = text.slice(pos, pos + budget);
    const has = ahead.in(pos, window.length, minCut(budget));
    const { cut, fence } = chooseCut(reopen, window, budget, has);
    let part = reopen + window.slice(0, cut);
    let nextReopen = "";
    if (fence.open !== undefined) {
      const closed = `${part.endsWith("\n") ? part : `${part}\n`}${fence.open}`;
      if (closed.length <= limit) part = closed; // a marker longer than 4 may not fit
      nextReopen = `${fence.open}${fence.info}\n`;
      // A "fence" line that runs on for pages is no language tag: repeating it would leave
      // the next part no room (and no progress at all once it fills the part).
      if (nextReopen.length > limit / 4) nextReopen = "";
    }
    const trimmed = part.trimEnd();
    if (trimmed !== "") parts.push(trimmed); // a long run of spaces is no message
    pos += cut;
    if (fence.open === undefined) pos = blanks.skip(pos);
    else if (text.charCodeAt(pos) === 10) pos++;
    reopen = nextReopen;
  }
  const last = (reopen + text.slice(pos)).trimEnd();
  if (last !== "" || parts.length === 0) parts.push(last);
  return parts;
}

function chooseCut(
  reopen: string,
  window: string,
  budget: number,
  has: WindowHas,
): { cut: number; fence: FenceState } {
  // Fence state at each line end of the window; the last line end past `min` of each kind:
  // outside code before a blank line, outside code, any (with the fence open there).
  const state: FenceState = { open: undefined, info: "" };
  if (reopen) advanceFence(state, reopen.replace(/\n$/, ""));
  const min = minCut(budget);
  let beforeBlank = -1;
  let outside = -1;
  let any = -1;
  let anyFence: FenceState = { open: undefined, info: "" };
  let fenceLine = has.fenceRuns ? nextFenceLine(window, 0) : window.length;
  const noFence = fenceLine >= window.length;
  if (noFence) {
    // No fence line: the state is the same at every line end, found by searching.
    any = has.breaks ? window.lastIndexOf("\n") : -1;
    if (any < min) any = -1;
    else if (state.open === undefined) {
      outside = any;
      // Without a blank line from `min`, only the window's end can be (the text's end follows).
      if (has.blankLines) beforeBlank = lastBeforeBlank(window, min);
      else beforeBlank = window.endsWith("\n") && window.length - 1 >= min ? window.length - 1 : -1;
    } else anyFence = { ...state };
  }
  for (let start = noFence ? window.length : 0; ;) {
    const nl = window.indexOf("\n", start);
    if (nl < 0) break;
    if (fenceLine < start) fenceLine = nextFenceLine(window, start);
    if (fenceLine === start) advanceFence(state, window, start, nl);
    start = nl + 1;
    if (nl < min) continue;
    any = nl;
    if (state.open !== undefined) {
      if (anyFence.open !== state.open || anyFence.info !== state.info) anyFence = { ...state };
      continue;
    }
    outside = nl;
    if (blankFrom(window, start)) beforeBlank = nl;
  }
  const closed = { open: undefined, info: "" };
  if (beforeBlank >= 0) return { cut: beforeBlank + 1, fence: closed };
  if (outside >= 0) return { cut: outside + 1, fence: closed };
  if (any >= 0) return { cut: any + 1, fence: anyFence };
  // One very long line: cut at a space, else anywhere that does not split a surrogate pair.
  // Without a fence line in the window, the state is what the reopened fence left.
  const fence = noFence ? state : scanFences(reopen + window);
  const space = lastSpace(window, min);
  let cut = space >= min ? space + 1 : budget;
  const code = window.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return { cut, fence: { open: fence.open, info: fence.info } };
}

/** A blank other than a line break. */
const BLANK = /[^\S\n]/g;

/** The last line end at or after `min` that a blank line follows, or -1. */
function lastBeforeBlank(text: string, min: number): number {
  // Near the end first (paragraphs are short), then every one from `min` (blank lines are
  // sparse there, or the first search would have found one).
  for (let nl = text.lastIndexOf("\n"), n = 0; nl >= min && n < 64; n++) {
    if (blankFrom(text, nl + 1)) return nl;
    nl = text.lastIndexOf("\n", nl - 1);
  }
  // The last match of `/\n[^\S\n]*(?:\n|$)/g` from `min`: a line end followed by an empty
  // line ("\n\n", or the end), or by a line of blanks, found from its first blank (at most one
  // per line is looked at). Not trying every line end keeps a page of short lines cheap.
  let last = text.endsWith("\n") ? text.length - 1 : text.lastIndexOf("\n\n");
  BLANK.lastIndex = min + 1;
  for (let m = BLANK.exec(text); m; m = BLANK.exec(text)) {
    if (text.charCodeAt(m.index - 1) === 10 && blankFrom(text, m.index)) {
      last = Math.max(last, m.index - 1);
    }
    const next = text.indexOf("\n", m.index);
    if (next < 0) break;
    BLANK.lastIndex = next + 1;
  }
  return last >= min ? last : -1;
}

/** Whether the line of `text` from `start` is blank (or the text ends there). */
function blankFrom(text: string, start: number): boolean {
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) return true;
    if (!isSpace(c)) return false;
  }
  return true;
}

/**
 * The part of a growing answer that will not change any more, for append-only (native)
 * streaming: whole lines only; a table is held back until a line after it shows it is
 * complete; a paragraph with an unpaired `**`, `~~` or backtick is held back until it pairs
 * up or ends. Inside a code block every finished line is final.
 */
export function streamablePrefix(text: string): string {
  return new StreamablePrefix().of(text);
}

/**
 * `streamablePrefix` of an answer as it grows: each call reads only the lines finished since
 * the last one, so following an answer costs its length once, not once per delta.
 */
export class StreamablePrefix {
  #state: FenceState;
  /** The paragraph so far, as counts (each line once): backticks, and ** and ~~ outside code
   * spans. A code span ends on its line, so a line's spans are its own. */
  #counts = { ticks: 0, strong: 0, strike: 0, under: 0 };
  /** The next marker character and the next line that may be a fence, each looked for again
   * only once passed. */
  #marker = -1;
  #fence = -1;
  /** The next place that can make a line more than plain text (see NOTABLE). */
  #notable = -1;
  /** Where the first line not read yet starts, and how far it is known to have no "\n". */
  #next = 0;
  #searched = 0;
  #safe = 0;
  /** The end of the longest streamable prefix that ends outside a code block. */
  #outside = 0;
  readonly #start: FenceState;

  /** A text that starts inside a code block (its fence opened before it) is read as code. */
  constructor(inCode?: FenceState) {
    this.#start = { open: inCode?.open, info: inCode?.open === undefined ? "" : inCode.info };
    this.#state = { ...this.#start };
    if (this.#start.open !== undefined) this.#outside = -1;
  }

  /**
   * The code block open where the streamable prefix ends, if any (a later line that is held
   * back is outside code: a fence line makes everything before it final).
   */
  get fence(): FenceState | undefined {
    return this.#state.open === undefined ? undefined : { ...this.#state };
  }

  /**
   * The length of the longest streamable prefix, as of the last call, that ends outside a code
   * block: where a message can end with nothing left open. -1 when none (the text starts in a
   * code block that is still open).
   */
  get outsideCode(): number {
    return this.#outside;
  }

  /** The streamable prefix of `text`, which extends the text of the previous call. */
  of(text: string): string {
    if (text.length < this.#searched) return new StreamablePrefix(this.#start).of(text); // not an extension
    // Whole lines only: they end at the last "\n" (looked for once in each character).
    const fresh = text.indexOf("\n", Math.max(this.#next, this.#searched));
    const end = fresh < 0 ? this.#next : text.lastIndexOf("\n") + 1;
    this.#searched = text.length;
    while (this.#next < end) {
      const start = this.#next;
      if (this.#notable < start) {
        // A line that may be notable at its first character is read as one (no search).
        const first = text.charCodeAt(start);
        this.#notable = MAY_BE_NOTABLE.has(first) ? start : nextNotable(text, start);
      }
      if (this.#notable > start) {
        // Plain lines up to the next notable one change nothing but what is final.
        const stop = this.#notable >= end ? end : text.lastIndexOf("\n", this.#notable - 1) + 1;
        if (stop > start) {
          if (this.#state.open !== undefined || balanced(this.#counts)) this.#final(stop);
          this.#next = stop;
          continue;
        }
      }
      const first = text.charCodeAt(start);
      const spaced = first === 32 || first === 9 || first === 13;
      TABLE_ROWS.lastIndex = start;
      if ((first === 124 || spaced) && this.#state.open === undefined && TABLE_ROWS.test(text)) {
        this.#next = TABLE_ROWS.lastIndex; // a table is final only once a line follows it
        continue;
      }
      BLANK_LINES.lastIndex = start;
      if ((first === 10 || spaced) && BLANK_LINES.test(text)) {
        // Blank lines: each one ends a paragraph and is final.
        this.#counts.ticks = this.#counts.strong = this.#counts.strike = 0;
        this.#next = BLANK_LINES.lastIndex;
        this.#final(this.#next);
        continue;
      }
      // Short lines of a paragraph (a page of "`" lines): one loop, no search per line.
      if (this.#state.open === undefined) {
        const { stop, balancedAt } = readShortLines(text, start, end, this.#counts);
        if (stop > start) {
          if (balancedAt > 0) this.#final(balancedAt);
          this.#next = stop;
          continue;
        }
      }
      const nl = text.indexOf("\n", start);
      this.#line(text, start, nl);
      this.#next = nl + 1;
    }
    // A line still being written may yet become notable, or a fence: look again next time.
    if (this.#notable >= this.#next) this.#notable = -1;
    if (this.#fence >= this.#next) this.#fence = -1;
    return text.slice(0, this.#safe);
  }

  #line(text: string, start: number, nl: number): void {
    const wasOpen = this.#state.open !== undefined;
    if (this.#fence < start) this.#fence = nextFenceLine(text, start);
    if (this.#fence === start) {
      advanceFence(this.#state, text, start, text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl);
    }
    let first = start;
    while (first < nl && isSpace(text.charCodeAt(first))) first++;
    const counts = this.#counts;
    // In (or opening, or closing) a code block finished lines are final; so is a blank line.
    if (wasOpen || this.#state.open !== undefined || first === nl) {
      counts.ticks = counts.strong = counts.strike = 0;
      this.#final(nl + 1);
      return;
    }
    // A table row: nothing is final until a line after the table.
    if (text.charCodeAt(first) === 124) return;
    if (nl - start < 64) {
      countMarkers(text, start, nl, counts, start); // a short line: read it at once
    } else {
      if (this.#marker < start) this.#marker = nextMarker(text, start);
      if (this.#marker < nl) countMarkerParities(text, start, nl, counts, this.#marker);
    }
    if (balanced(counts)) this.#final(nl + 1);
  }

  /** The text up to `end` is final (and, outside a code block, a place a message may end). */
  #final(end: number): void {
    this.#safe = end;
    if (this.#state.open === undefined) this.#outside = end;
  }
}

const balanced = (c: MarkerCounts) => c.ticks % 2 === 0 && c.strong % 2 === 0 && c.strike % 2 === 0;

/**
 * What can make a line of a paragraph more than plain text: a backtick, `*` or `~` (a fence
 * starts with one too), or a line that is blank or a table row. (`^` also follows "\r": that
 * only makes a plain line read like the others.)
 */
const NOTABLE = /[`*~]|^[^\S\n]*[|\n]/gm;
const nextNotable = (text: string, from: number): number => {
  NOTABLE.lastIndex = from;
  return NOTABLE.exec(text)?.index ?? text.length;
};
/** The first characters of lines that may be notable. */
const MAY_BE_NOTABLE = new Set([96, 42, 126, 124, 10, 13, 32, 9]);
/** One or more table rows, from where it is set. */
const TABLE_ROWS = /(?:[^\S\n]*\|[^\n]*\n)+/y;
/** One or more blank lines, from where it is set. */
const BLANK_LINES = /(?:[^\S\n]*\n)+/y;
