/**
 * The searches that choose where `splitMarkdown` (markdown.ts) cuts a text into parts, made
 * forwards and not repeated for the next window: a megabyte on one line has a hundred windows,
 * each of which was searched backwards for a line end and a space it does not hold, and each
 * window of a page of short lines was searched for a blank line, line by line.
 */

/** What a window of the text may hold, as far as choosing its cut needs (false: none): line
 * ends, a run of three backticks or tildes (what any fence line has), and from where a cut may
 * be, a line end before a blank line. */
export interface WindowHas {
  readonly breaks: boolean;
  readonly fenceRuns: boolean;
  readonly blankLines: boolean;
}

/** Where a part may end at the earliest, in a window of `budget` characters. */
export const minCut = (budget: number) => Math.floor(budget * 0.4);

/**
 * What each window of a text being split holds, from searches forward that each find the next
 * one from a position: windows only move forward, so the text is searched once for each kind
 * however many windows it has (a megabyte on one line has a hundred, each of them otherwise
 * searched from its end for a line end it does not hold).
 */
export class Ahead {
  readonly #text: string;
  /** The next "\n", fence run and blank line's start, from where each was last looked for
   * (-1: none). */
  readonly #next = [-2, -2, -2];

  constructor(text: string) {
    this.#text = text;
  }

  /** What the window of `length` characters from `pos` holds, blank lines from `pos + min`. */
  in(pos: number, length: number, min: number): WindowHas {
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
/**
 * A space, or a tab (which only makes the window searched for a space): searching for one
 * character, V8 looks for one of its bytes, and a page of zero-width spaces (U+200B, a
 * mention broken) holds the byte 0x20 in every other unit; two characters are searched for
 * as a class, a unit at a time.
 */
const BLANK_OR_TAB = /[ \t]/g;

/** The last space of `window` at or after `min`, or one before it, or -1: looked for forwards
 * from `min` first (searching backwards reads a long line without one a unit at a time). */
export function lastSpace(window: string, min: number): number {
  BLANK_OR_TAB.lastIndex = min;
  return BLANK_OR_TAB.test(window) ? window.lastIndexOf(" ") : -1;
}
/** Three backticks or tildes. */
const FENCE_RUN = /`{3}|~{3}/g;
/** A line end and a blank or another line end: where any blank line follows one. */
const BLANK_AFTER_BREAK = /\n\s/g;
const SEARCHES = [LINE_FEED, FENCE_RUN, BLANK_AFTER_BREAK];
