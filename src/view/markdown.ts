/** Markdown for Slack `markdown` blocks: repairing a half-written answer while it streams, and
 * splitting a long one into message-sized parts without breaking code blocks. Not the remend
 * package (1.4.0): it never closes a code fence and it rewrites finished lines (an unfinished link
 * swallows what follows), so posted messages would change. */
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
  readShortLines,
  scanFences,
} from "./markdown-scan.ts";

/** Closes what a stream left open so that a partial answer renders as it will look when done: an
 * open code fence is closed; on the last line, an unpaired `**`, `~~` or backtick is dropped, and a
 * link or image whose target is still being written is cut off. */
export function repairPartialMarkdown(text: string): string {
  const { kept, closing } = repairPartial(text);
  return kept + closing;
}

/** `repairPartialMarkdown` as the text it keeps and the closing fence it adds (or ""). */
export function repairPartial(text: string): { kept: string; closing: string } {
  // Searched forwards first: backwards is a unit at a time.
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
  line = cutDanglingLink(line);
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

/** Splits Markdown into parts of at most `limit` characters: at a blank line, else a line end, else
 * a space; a code block cut in two is closed and reopened (same language). A cut depends only on
 * the text before it, so parts already shown stay the same while an answer grows. */
export function splitMarkdown(text: string, limit: number): string[] {
  if (limit < 200) throw new RangeError("limit too small to split Markdown sensibly");
  const parts: string[] = [];
  const blanks = new BlankLines(text);
  const ahead = new Ahead(text);
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
      // A "fence" line that runs on for pages is no language tag: repeating it leaves no room.
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
  has: ReturnType<Ahead["in"]>,
): { cut: number; fence: FenceState } {
  // The last line end past `min` of each kind: outside code before a blank line, outside
  // code, any (with the fence open there).
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
    any = has.breaks ? window.lastIndexOf("\n") : -1;
    if (any < min) any = -1;
    else if (state.open === undefined) {
      outside = any;
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
  // One very long line: cut at a space, else anywhere but inside a surrogate pair.
  const fence = noFence ? state : scanFences(reopen + window);
  const space = lastSpace(window, min);
  let cut = space >= min ? space + 1 : budget;
  const code = window.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return { cut, fence: { open: fence.open, info: fence.info } };
}

const BLANK = /[^\S\n]/g;

/** The last line end at or after `min` that a blank line follows, or -1. */
function lastBeforeBlank(text: string, min: number): number {
  // Near the end first (paragraphs are short), then every one from `min`.
  for (let nl = text.lastIndexOf("\n"), n = 0; nl >= min && n < 64; n++) {
    if (blankFrom(text, nl + 1)) return nl;
    nl = text.lastIndexOf("\n", nl - 1);
  }
  // The last match of `/\n[^\S\n]*(?:\n|$)/g` from `min`, found from each line's first blank
  // (not every line end: a page of short lines stays cheap).
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

/** Where a part may end at the earliest, in a window of `budget` characters. */
const minCut = (budget: number) => Math.floor(budget * 0.4);

/** What each window of a text being split holds, from searches forward: windows only move forward,
 * so the text is searched once per kind however many windows (a megabyte line has a hundred). */
class Ahead {
  readonly #text: string;
  /** The next "\n", fence run and blank line's start, from where each was last looked (-1: none). */
  readonly #next = [-2, -2, -2];

  constructor(text: string) {
    this.#text = text;
  }

  /** What the window of `length` characters from `pos` holds, as far as choosing its cut needs:
   * line ends, a run of three backticks or tildes (any fence line has one), and from `pos + min`
   * (where a cut may be) a blank line. */
  in(pos: number, length: number, min: number) {
    const end = pos + length;
    const has = (kind: number, from: number, size: number) => {
      let at = this.#next[kind] ?? -1;
      if (at !== -1 && at < from) {
        const search = SEARCHES[kind] ?? LINE_FEED;
        search.lastIndex = from;
        at = search.exec(this.#text)?.index ?? -1;
        this.#next[kind] = at;
      }
      return at >= 0 && at + size <= end;
    };
    const breaks = has(0, pos, 1);
    return { breaks, fenceRuns: has(1, pos, 3), blankLines: breaks && has(2, pos + min, 1) };
  }
}

const LINE_FEED = /\n/g;
/** A line end and a blank or another line end: where any blank line follows one. */
const BLANK_AFTER_BREAK = /\n\s/g;
const SEARCHES = [LINE_FEED, /`{3}|~{3}/g, BLANK_AFTER_BREAK];
/** A space or a tab, as a class: V8 searches one character by one of its bytes, which a page of
 * zero-width spaces (U+200B) holds in every other unit. */
const BLANK_OR_TAB = /[ \t]/g;

/** The last space of `window`, or -1 when none from `min`: looked for forwards from `min` first
 * (searching backwards reads a long line without one a unit at a time). */
function lastSpace(window: string, min: number): number {
  BLANK_OR_TAB.lastIndex = min;
  return BLANK_OR_TAB.test(window) ? window.lastIndexOf(" ") : -1;
}

/** The part of a growing answer that will not change any more, for native streaming: whole lines; a
 * table only once a line follows it; a paragraph with an unpaired `**`, `~~` or backtick only once
 * it pairs up or ends. In a code block every finished line is final. */
export function streamablePrefix(text: string): string {
  return new StreamablePrefix().of(text);
}

/** `streamablePrefix` of a growing answer, reading each line once (not once per delta). */
export class StreamablePrefix {
  #state: FenceState;
  /** The paragraph's backticks, and ** and ~~ outside code spans. */
  #counts = { ticks: 0, strong: 0, strike: 0, under: 0 };
  #marker = -1;
  #fence = -1;
  #notable = -1;
  /** Where the first line not read yet starts, and how far it is known to have no "\n". */
  #next = 0;
  #searched = 0;
  #safe = 0;
  /** The end of the longest streamable prefix that ends outside a code block. */
  #outside = 0;
  readonly #start: FenceState;

  /** `inCode`: the code block a text starts in. */
  constructor(inCode?: FenceState) {
    this.#start = { open: inCode?.open, info: inCode?.open === undefined ? "" : inCode.info };
    this.#state = { ...this.#start };
    if (this.#start.open !== undefined) this.#outside = -1;
  }

  /** The code block open where the streamable prefix ends, if any. */
  get fence(): FenceState | undefined {
    return this.#state.open === undefined ? undefined : { ...this.#state };
  }

  /** The longest streamable prefix that ends outside a code block, or -1. */
  get outsideCode(): number {
    return this.#outside;
  }

  /** The streamable prefix of `text`, which extends the text of the previous call. */
  of(text: string): string {
    if (text.length < this.#searched) return new StreamablePrefix(this.#start).of(text); // not an extension
    const fresh = text.indexOf("\n", Math.max(this.#next, this.#searched));
    const end = fresh < 0 ? this.#next : text.lastIndexOf("\n") + 1;
    this.#searched = text.length;
    while (this.#next < end) {
      const start = this.#next;
      if (this.#notable < start) {
        const first = text.charCodeAt(start);
        this.#notable = MAY_BE_NOTABLE.has(first) ? start : nextNotable(text, start);
      }
      if (this.#notable > start) {
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
    if (wasOpen || this.#state.open !== undefined || first === nl) {
      counts.ticks = counts.strong = counts.strike = 0;
      this.#final(nl + 1);
      return;
    }
    if (text.charCodeAt(first) === 124) return; // a table row
    if (nl - start < 64) {
      countMarkers(text, start, nl, counts, start); // a short line: read it at once
    } else {
      if (this.#marker < start) this.#marker = nextMarker(text, start);
      if (this.#marker < nl) countMarkerParities(text, start, nl, counts, this.#marker);
    }
    if (balanced(counts)) this.#final(nl + 1);
  }

  #final(end: number): void {
    this.#safe = end;
    if (this.#state.open === undefined) this.#outside = end;
  }
}

const balanced = (c: MarkerCounts) => c.ticks % 2 === 0 && c.strong % 2 === 0 && c.strike % 2 === 0;

/** What can make a line more than plain text: `*`, `~`, a backtick, a blank line, a table row. */
const NOTABLE = /[`*~]|^[^\S\n]*[|\n]/gm;
const nextNotable = (text: string, from: number): number => {
  NOTABLE.lastIndex = from;
  return NOTABLE.exec(text)?.index ?? text.length;
};
const MAY_BE_NOTABLE = new Set([96, 42, 126, 124, 10, 13, 32, 9]);
const TABLE_ROWS = /(?:[^\S\n]*\|[^\n]*\n)+/y;
const BLANK_LINES = /(?:[^\S\n]*\n)+/y;
