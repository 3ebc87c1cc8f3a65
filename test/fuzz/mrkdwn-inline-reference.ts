/**
 * The inline half of the Markdown → mrkdwn converter as it was before it took runs of plain
 * characters at once (src/view/mrkdwn.ts): with test/fuzz/mrkdwn-reference.ts, the
 * oracle the converter must still give exactly.
 */

import { ZWSP } from "../../src/view/sanitize.ts";
import { escapeBefore as escapeText } from "./markdown-reference.ts";
import { misleadingHost } from "../../src/view/scan/link-hosts.ts";

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
  const code = codeSpans(s);
  const next = links && /[[<]/.test(s) ? new LinkTables(s) : undefined;
  let text = "";
  const flush = () => {
    if (text !== "") pieces.push(escapeText(text));
    text = "";
  };
  for (let i = 0; i < s.length;) {
    const c = s[i] ?? "";
    const close = code.get(i);
    if (close !== undefined) {
      const run = code.run(i);
      const inner = s.slice(i + run, close);
      const body = (inner.includes("`") ? inner.replace(/`/g, "'") : inner).trim();
      if (body === "") {
        // An empty span stays as written: backticks around blanks, text with nothing to escape.
        text += s.slice(i, close + run);
      } else {
        flush();
        pieces.push(`\`${escapeText(body)}\``);
      }
      i = close + run;
      continue;
    }
    if (c === "`") {
      const run = code.run(i);
      text += s.slice(i, i + run);
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
      text += s[i + 1];
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
      } else text += s.slice(i, j);
      i = j;
      continue;
    }
    text += c;
    i++;
  }
  flush();
  return pieces;
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

interface CodeSpans {
  get(i: number): number | undefined;
  run(i: number): number;
}
const NO_CODE: CodeSpans = { get: () => undefined, run: () => 1 };

/** Code spans of a line: an opening run of backticks and the next run of the same length. */
function codeSpans(s: string): CodeSpans {
  // One run of backticks (or none) opens no span: it is text, read a backtick at a time.
  const first = s.indexOf("`");
  if (first < 0) return NO_CODE;
  let end = first + 1;
  while (s.charCodeAt(end) === 96) end++;
  if (s.indexOf("`", end) < 0) return NO_CODE;
  const runs = new Int32Array(s.length); // at a run's start, its length
  const closes = new Int32Array(s.length); // at a run's start, the next run as long (or 0)
  const lastOfLength = new Map<number, number>();
  for (let i = first; i >= 0; i = s.indexOf("`", i)) {
    let j = i + 1;
    while (s.charCodeAt(j) === 96) j++;
    runs[i] = j - i;
    const before = lastOfLength.get(j - i);
    if (before !== undefined) closes[before] = i;
    lastOfLength.set(j - i, i);
    i = j;
  }
  return {
    run: (i) => runs[i] || 1,
    // The line is read forwards, so the next run as long is the closer (none at 0).
    get: (i) => (runs[i] ? closes[i] || undefined : undefined),
  };
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
