/**
 * The line half of the Markdown → mrkdwn converter (mrkdwn.ts): one line's code spans, links,
 * emphasis and escapes, a code block's lines and a table's rows. Linear in the line's length:
 * each run of backticks knows the next run as long (one pass), links look ahead through tables
 * of next positions built at most once per line, and emphasis pairs each closer with the latest
 * opener of its kind in one pass.
 */

import { blank } from "./markdown-scan.ts";
import { codeSpans, LineText } from "./scan/inline-scan.ts";
import { escapeText, ZWSP } from "./sanitize.ts";
import { misleadingHost } from "./scan/link-hosts.ts";

export const FENCE_OUT = "```";
/** A table cell wider than this does not widen its column further (it just runs on). */
const MAX_COLUMN = 40;

type Kind = "strong" | "em" | "strike" | "strongEm";
interface Delim {
  readonly kind: Kind;
  readonly char: string;
  readonly text: string;
  readonly canOpen: boolean;
  readonly canClose: boolean;
  /** A letter or digit right before (after) it: Slack needs a break to see the marker. */
  readonly wordBefore: boolean;
  readonly wordAfter: boolean;
  /** The index of the delimiter it pairs with, once paired. */
  mate?: number;
  opener?: boolean;
}
type Piece = string | Delim;

const PUNCT = /[!-/:-@[-`{-~]/;
const isSpace = (c: string | undefined) => c === undefined || /\s/.test(c);
const isWord = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}]/u.test(c);

/** Positions of the next occurrence of the character `a` (or `b`) at or after each index. */
function nextTable(s: string, a: number, b = a): Int32Array {
  const next = new Int32Array(s.length + 1);
  let at = -1;
  next[s.length] = at;
  for (let i = s.length - 1; i >= 0; i--) {
    const c = s.charCodeAt(i);
    if (c === a || c === b) at = i;
    next[i] = at;
  }
  return next;
}

/** One line of Markdown inline text as mrkdwn; `strong: false` drops bold (a heading is bold). */
export function inline(s: string, strong: boolean, links = true): string {
  const pieces = tokenize(s, links, strong);
  if (pieces.length === 1 && typeof pieces[0] === "string") return pieces[0]; // plain text
  pair(pieces);
  let out = "";
  for (const p of pieces) {
    if (typeof p === "string") out += p;
    else if (p.mate === undefined) out += p.text;
    else {
      const m = marker(p.kind, p.opener === true, strong);
      const glue = m !== "" && (p.opener === true ? p.wordBefore : p.wordAfter);
      out += glue && p.opener === true ? `${ZWSP}${m}` : glue ? `${m}${ZWSP}` : m;
    }
  }
  return out;
}

function marker(kind: Kind, opener: boolean, strong: boolean): string {
  switch (kind) {
    case "strong":
      return strong ? "*" : "";
    case "em":
      return "_";
    case "strike":
      return "~";
    case "strongEm":
      if (!strong) return "_";
      return opener ? "*_" : "_*";
  }
}

function tokenize(s: string, links: boolean, strong: boolean): Piece[] {
  const pieces: Piece[] = [];
  const { runs, closes } = codeSpans(s);
  const next = links && /[[<]/.test(s) ? new LinkTables(s) : undefined;
  // A "[" opens a link only before a "](" that a ")" follows.
  const paren = next ? s.lastIndexOf(")") : -1;
  const lastLink = paren >= 2 ? s.lastIndexOf("](", paren - 2) : -1;
  const text = new LineText(s);
  const add = (start: number, end: number) => text.add(start, end);
  const flush = () => {
    const t = text.take();
    if (t !== "") pieces.push(escapeText(t));
  };
  for (let i = 0; i < s.length;) {
    // Characters that can start nothing are taken as one run (a line of "[" is text).
    const plain = plainEnd(s, i, lastLink, next !== undefined);
    if (plain > i) {
      add(i, plain);
      i = plain;
      continue;
    }
    const c = s[i] ?? "";
    const run = runs?.[i] || 1;
    const close = runs?.[i] ? closes?.[i] || -1 : -1;
    if (close >= 0) {
      if (blank(s, i + run, close)) {
        // An empty span stays as written: backticks around blanks, text with nothing to escape.
        add(i, close + run);
      } else {
        const inner = s.slice(i + run, close);
        const body = (inner.includes("`") ? inner.replace(/`/g, "'") : inner).trim();
        flush();
        pieces.push(`\`${escapeText(body)}\``);
      }
      i = close + run;
      continue;
    }
    if (c === "`") {
      add(i, i + run);
      i += run;
      continue;
    }
    if (next && (c === "[" || c === "<" || (c === "!" && s[i + 1] === "["))) {
      const link = linkAt(s, i, next, strong);
      if (link) {
        flush();
        pieces.push(link.text);
        i = Math.max(i + 1, link.end); // always forward, whatever a lookup answered
        continue;
      }
    }
    if (c === "\\" && PUNCT.test(s[i + 1] ?? "")) {
      add(i + 1, i + 2);
      i += 2;
      continue;
    }
    if (c === "*" || c === "_" || c === "~") {
      let j = i;
      while (s[j] === c) j++;
      const delim = delimiter(s, i, j, c);
      if (delim) {
        flush();
        pieces.push(delim);
      } else add(i, j);
      i = j;
      continue;
    }
    add(i, i + 1);
    i++;
  }
  flush();
  return pieces;
}

/**
 * Where the first character at or after `i` is that may start a code span, an escape, emphasis
 * or a link: a "[" (or "![") before `lastLink`, a "<" before what may be an address.
 */
function plainEnd(s: string, i: number, lastLink: number, autolinks: boolean): number {
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 96 || c === 42 || c === 95 || c === 126 || c === 92) return i; // ` * _ ~ \
    if ((c === 91 || c === 33) && i < lastLink) return i; // [ !
    if (c === 60 && autolinks) {
      const d = s.charCodeAt(i + 1) | 0x20; // lower case
      if (d === 104 || d === 109) return i; // <h…, <m…: http(s):// or mailto:
    }
  }
  return i;
}

function delimiter(s: string, from: number, to: number, c: string): Delim | undefined {
  const len = to - from;
  const kind: Kind | undefined =
    c === "~"
      ? len === 2
        ? "strike"
        : undefined
      : len === 1
        ? "em"
        : len === 2
          ? "strong"
          : len === 3
            ? "strongEm"
            : undefined;
  if (kind === undefined) return undefined;
  const before = s[from - 1];
  const after = s[to];
  let canOpen = !isSpace(after);
  let canClose = !isSpace(before);
  if (c === "_") {
    // snake_case is no emphasis: `_` opens only after a non-word, closes only before one.
    canOpen &&= !isWord(before);
    canClose &&= !isWord(after);
  }
  return {
    kind,
    char: c,
    text: s.slice(from, to),
    canOpen,
    canClose,
    wordBefore: isWord(before),
    wordAfter: isWord(after),
  };
}

/** Pairs each closer with the latest open delimiter of its kind and character; linear. */
function pair(pieces: Piece[]): void {
  const open = new Map<string, number>();
  for (let i = 0; i < pieces.length; i++) {
    const p = pieces[i];
    if (p === undefined || typeof p === "string") continue;
    const key = `${p.kind}${p.char}`;
    const o = open.get(key);
    if (p.canClose && o !== undefined) {
      const opener = pieces[o] as Delim;
      opener.mate = i;
      opener.opener = true;
      p.mate = o;
      open.delete(key);
    } else if (p.canOpen) open.set(key, i);
  }
}

/** The next-position tables a line's links are read with, each built when first asked for. */
class LinkTables {
  readonly #s: string;
  #bracketClose?: Int32Array;
  #bracketOpen?: Int32Array;
  #parenClose?: Int32Array;
  #parenOpen?: Int32Array;
  #angleClose?: Int32Array;
  #space?: Int32Array;

  constructor(s: string) {
    this.#s = s;
  }

  get bracketClose(): Int32Array {
    return (this.#bracketClose ??= nextTable(this.#s, 93)); // ]
  }
  get bracketOpen(): Int32Array {
    return (this.#bracketOpen ??= nextTable(this.#s, 91)); // [
  }
  get parenClose(): Int32Array {
    return (this.#parenClose ??= nextTable(this.#s, 41)); // )
  }
  get parenOpen(): Int32Array {
    return (this.#parenOpen ??= nextTable(this.#s, 40)); // (
  }
  get angleClose(): Int32Array {
    return (this.#angleClose ??= nextTable(this.#s, 62)); // >
  }
  get space(): Int32Array {
    return (this.#space ??= nextTable(this.#s, 32, 9)); // space, tab
  }
}

const SAFE_URL = /^(?:https?:\/\/|mailto:)[^\s<>|]+$/i;
const slackUrl = (url: string) => url.replace(/[|<>]/g, encodeURIComponent).replace(/&/g, "&amp;");

/** `[label](url "title")`, `![alt](url)` or `<https://…>` at `i`, as a Slack link. */
function linkAt(
  s: string,
  i: number,
  t: LinkTables,
  strong: boolean,
): { text: string; end: number } | undefined {
  if (s[i] === "<") {
    const gt = t.angleClose[i + 1] ?? -1;
    const sp = t.space[i + 1] ?? -1;
    if (gt < 0 || (sp >= 0 && sp < gt)) return undefined;
    const url = s.slice(i + 1, gt);
    return SAFE_URL.test(url) ? { text: `<${slackUrl(url)}>`, end: gt + 1 } : undefined;
  }
  const open = s[i] === "!" ? i + 1 : i;
  if (s[open] !== "[") return undefined;
  const close = t.bracketClose[open + 1] ?? -1;
  const nested = t.bracketOpen[open + 1] ?? -1;
  if (close < 0 || (nested >= 0 && nested < close) || s[close + 1] !== "(") return undefined;
  let end = t.parenClose[close + 2] ?? -1;
  if (end < 0) return undefined;
  // One level of parentheses inside the address: https://en.wikipedia.org/wiki/Go_(game)
  const inner = t.parenOpen[close + 2] ?? -1;
  const outer = inner >= 0 && inner < end ? (t.parenClose[end + 1] ?? -1) : -1;
  if (outer >= 0) end = outer;
  const sp = t.space[close + 2] ?? -1;
  const urlEnd = sp >= 0 && sp < end ? sp : end;
  const url = s.slice(close + 2, urlEnd);
  const label = inline(s.slice(open + 1, close), strong, false).trim();
  if (!SAFE_URL.test(url)) return { text: label === "" ? escapeText(url) : label, end: end + 1 };
  if (label === "") return { text: `<${slackUrl(url)}>`, end: end + 1 };
  // A label that looks like an address of another host is followed by the real one.
  const host = misleadingHost(s.slice(open + 1, close), url);
  const shown = host === undefined ? label : `${label} (${escapeText(host)})`;
  return { text: `<${slackUrl(url)}|${shown}>`, end: end + 1 };
}

/** A line inside a code block: shown as is, except a ``` that would end Slack's block. */
export const codeLine = (line: string): string => escapeText(line).replace(/```/g, `\`${ZWSP}\`\``);

/** A table row's cells, outer pipes dropped, `\|` kept as a pipe. */
export function cells(row: string): string[] {
  const parts: string[] = [];
  let from = 0;
  let cell = "";
  for (let i = row.indexOf("|"); i >= 0; i = row.indexOf("|", i + 1)) {
    if (row[i - 1] === "\\") {
      cell += `${row.slice(from, i - 1)}|`;
    } else {
      parts.push(cell + row.slice(from, i));
      cell = "";
    }
    from = i + 1;
  }
  parts.push(cell + row.slice(from));
  if (parts.length > 1 && (parts[0] ?? "").trim() === "") parts.shift();
  if (parts.length > 1 && (parts.at(-1) ?? "").trim() === "") parts.pop();
  return parts.map((p) => plainCell(p.trim()));
}

/** A cell's text without Markdown markers (a code block shows them raw). */
const plainCell = (cell: string): string =>
  cell
    .replace(/\*\*|__|~~|`/g, "")
    .replace(/\[([^[\]\n]*)\]\([^()\s]*\)/g, "$1")
    .replace(/\t/g, " ");

/** Characters as a monospace font shows them (an emoji's two halves are one). */
function width(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) n--;
  }
  return n;
}

/** Rows as aligned columns in a code block; a line of dashes under the header row. */
export function renderTable(rows: readonly string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    for (let i = 0; i < row.length; i++) {
      widths[i] = Math.min(MAX_COLUMN, Math.max(widths[i] ?? 1, width(row[i] ?? "")));
    }
  }
  const line = (row: readonly string[]) => {
    let text = "";
    for (let i = 0; i < row.length; i++) {
      const c = row[i] ?? "";
      text +=
        i === row.length - 1 ? c : `${c}${" ".repeat(Math.max(0, (widths[i] ?? 0) - width(c)))}  `;
    }
    return codeLine(text.trimEnd());
  };
  const out = [FENCE_OUT, line(rows[0] ?? []), widths.map((w) => "-".repeat(w)).join("  ")];
  for (let r = 1; r < rows.length; r++) out.push(line(rows[r] ?? []));
  out.push(FENCE_OUT);
  return out;
}
