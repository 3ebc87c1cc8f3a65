/** Standard Markdown (what the agent writes) as Slack mrkdwn, for the surfaces that take no
 * `markdown` block (docs/usage.md lists what converts to what, and why not slackify-markdown). One
 * pass over lines and one over each line's characters: answers are hostile input. */
import { blank, isSpace } from "./markdown-scan.ts";
import { escapeShort, escapeText, neutralizeMentions, safeCut, ZWSP } from "./sanitize.ts";
import { codeSpans, LineText } from "./scan/inline-scan.ts";
import { misleadingHost } from "./scan/link-hosts.ts";

const RULE_OUT = "──────────";

export const toMrkdwn = (markdown: string): string =>
  neutralizeMentions(mrkdwnLines(markdown, Number.POSITIVE_INFINITY).join("\n"));

/** The mrkdwn lines of a Markdown text, guarded, mentions not yet neutralised: only enough to
 * hold more than `need` characters once joined (the last maybe cut). */
function mrkdwnLines(markdown: string, need: number): string[] {
  const lines = new QuotedLines(markdown);
  const out: string[] = [];
  const state = { inCode: false };
  let chars = -1; // of the lines joined with "\n"
  const push = (line: string) => {
    const guarded = guardLine(line, state);
    out.push(guarded);
    chars += guarded.length + 1;
  };
  let fence: { char: string; length: number } | undefined;
  for (let i = 0; chars <= need; i++) {
    const rest = lines.rest(i);
    if (rest === undefined) break;
    const prefix = lines.quoted(i) ? "> " : "";
    if (fence) {
      const f = fenceOf(rest);
      if (f && f.char === fence.char && f.length >= fence.length && f.info.trim() === "") {
        fence = undefined;
        push(prefix + FENCE_OUT);
      } else push(prefix + codeLine(rest));
      continue;
    }
    const opened = fenceOf(rest);
    if (opened && !(opened.char === "`" && opened.info.includes("`"))) {
      fence = opened;
      push(prefix + FENCE_OUT);
      continue;
    }
    const next = lines.rest(i + 1);
    if (next !== undefined && rest.includes("|") && isDelimiterRow(next)) {
      let end = i + 2;
      const rows = [cells(rest)];
      for (let row = lines.rest(end, true); row !== undefined; row = lines.rest(++end, true)) {
        if (row.trim() === "" || !row.includes("|")) break;
        rows.push(cells(row));
      }
      for (const line of renderTable(rows)) push(prefix + line);
      i = end - 1;
      continue;
    }
    if (next !== undefined && isSetextUnderline(next) && isParagraph(rest)) {
      push(prefix + boldLine(rest.trim()));
      i++;
      continue;
    }
    const plain = lines.asIs(i) ? rest : plainText(rest);
    if (plain === undefined) push(prefix + blockLine(rest));
    else {
      const line =
        prefix + escapeShort(plain.length > need - chars ? plain.slice(0, need - chars) : plain);
      out.push(line);
      chars += line.length + 1;
    }
  }
  // An unclosed fence runs to the end, as in CommonMark.
  if (fence && chars <= need) push(FENCE_OUT);
  return out;
}

/** What may start a code span, a link, an escape or emphasis (`<` only before an address: the
 * letter is looked for, so that V8 skips ahead). */
const NOT_PLAIN = /[`[\\*_~]|(?<=<)[hm]/i;

/** A line that converts character by character (escaped), trimmed; else undefined. */
function plainText(line: string): string | undefined {
  if (mayStartBlock(line.charCodeAt(0)) || NOT_PLAIN.test(line)) return undefined;
  const text = line.trimEnd();
  return isDelimiterRow(text) ? undefined : text;
}

/** At most `limit` characters of mrkdwn: cut at a line end where it can (never inside a link
 * or an entity), an open code block closed, "…" where it was cut. */
export function mrkdwnExcerpt(markdown: string, limit: number): string {
  // Neutralising looks at most 10 characters ahead ("@everyone" and a word boundary).
  const full = neutralizeMentions(mrkdwnLines(markdown, limit + 10).join("\n"));
  if (full.length <= limit) return full;
  const room = Math.max(0, limit - FENCE_OUT.length - 3);
  let cut = full.lastIndexOf("\n", room);
  if (cut < room / 2) cut = safeCut(full, room);
  const text = full.slice(0, cut).trimEnd();
  // The last line, maybe cut inside a code span, is guarded once more; guarding may lengthen it
  // (a break in every run of asterisks), so what does not fit then is cut again.
  const lastLine = text.lastIndexOf("\n") + 1;
  const state = { inCode: fenceLinesOdd(text, lastLine) };
  const guarded = guardLine(text.slice(lastLine), state);
  const tail = `${state.inCode ? `\n${FENCE_OUT}` : ""}\n…`;
  const fits = Math.max(0, limit - tail.length - lastLine);
  const last = guarded.length <= fits ? guarded : guarded.slice(0, safeCut(guarded, fits));
  return `${text.slice(0, lastLine)}${last}${tail}`;
}

/** A notification's `text` (the push and the channel list): the head of an answer as mrkdwn. */
export const notificationText = (markdown: string, limit: number): string =>
  mrkdwnExcerpt(markdown.slice(0, limit * 4).replace(/[\uD800-\uDBFF]$/, ""), limit);

/** One line of plain mrkdwn for a link's label (a task's title on App Home): the first line with
 * text, without markers or links; `|` would end the label and becomes `¦`. */
export function mrkdwnLabel(markdown: string, limit: number): string {
  const first = markdown.split("\n").find((l) => l.trim() !== "") ?? "";
  const line = toMrkdwn(first.slice(0, limit * 4).replace(/[\uD800-\uDBFF]$/, ""))
    .replace(
      /<[^<>|]*\|([^<>]*)>|<([^<>|]*)>/g,
      (_m, label?: string, url?: string) => label ?? url ?? "",
    )
    .replace(/[*~`\u200B]/g, "")
    .replace(/\|/g, "¦")
    .replace(/\s+/g, " ") // a fence or a table on the first line spans lines: one line here
    .trim();
  return neutralizeMentions(
    line.length > limit
      ? `${line
          .slice(0, limit - 1)
          .replace(/[\uD800-\uDBFF]$/, "")
          .replace(/&[a-z]*$/, "")}…`
      : line,
  );
}

/** A character that converts to itself and starts nothing (no "-": no table rule). */
const TEXT = "[^\\n`[\\\\*_~<>&-]";
/** Its first (no block, quote, fence or setext underline starts so) and last (no blank). */
const FIRST = "[^\\s#*+\\-_0-9>`~=[\\\\<&]";
const LAST = "[^\\s`[\\\\*_~<>&-]";
/** Lines that convert to themselves and that no later line can turn into a heading or a table
 * row: text with at most one run of backticks (a lone run opens no code span). */
const PLAIN_LINES = new RegExp(
  `(?:(?:${FIRST}(?:${TEXT}*\`+)?|\`{1,2})(?:${TEXT}*${LAST})?\n)+`,
  "y",
);

/** The lines of a text without their leading `>` markers (mrkdwn quotes one level), and whether
 * each had any; read only as far as asked. */
class QuotedLines {
  readonly #text: string;
  readonly #rests: string[] = [];
  /** 1: quoted, 2: plain lines read at once, which convert to themselves. */
  readonly #kinds: number[] = [];
  #pos = 0;

  constructor(text: string) {
    this.#text = text;
  }

  /** Line `k` without its markers (a run of PLAIN_LINES is one "line"), or undefined. */
  rest(k: number, lineByLine = false): string | undefined {
    while (this.#rests.length <= k && this.#pos <= this.#text.length) this.#read(lineByLine);
    return this.#rests[k];
  }

  quoted(k: number): boolean {
    return this.#kinds[k] === 1;
  }

  asIs(k: number): boolean {
    return this.#kinds[k] === 2;
  }

  #read(lineByLine: boolean): void {
    PLAIN_LINES.lastIndex = this.#pos;
    if (!lineByLine && PLAIN_LINES.test(this.#text)) {
      // All but the last: what follows may make it a heading or a table's first row.
      const last = this.#text.lastIndexOf("\n", PLAIN_LINES.lastIndex - 2) + 1;
      if (last > this.#pos) {
        this.#rests.push(this.#text.slice(this.#pos, last - 1));
        this.#kinds.push(2);
        this.#pos = last;
        return;
      }
    }
    const nl = this.#text.indexOf("\n", this.#pos);
    const end = nl < 0 ? this.#text.length : nl;
    let line = this.#text.slice(this.#pos, end);
    this.#pos = end + 1;
    if (line.charCodeAt(line.length - 1) === 13) line = line.slice(0, -1);
    let i = 0;
    let quoted = false;
    for (;;) {
      let j = i;
      while (j < line.length && j - i < 3 && line.charCodeAt(j) === 32) j++;
      if (line.charCodeAt(j) !== 62) break; // >
      quoted = true;
      i = j + 1;
      if (line.charCodeAt(i) === 32) i++;
    }
    this.#rests.push(i > 0 ? line.slice(i) : line);
    this.#kinds.push(quoted ? 1 : 0);
  }
}

function fenceOf(line: string): { char: string; length: number; info: string } | undefined {
  let i = 0;
  while (i < 3 && line.charCodeAt(i) === 32) i++;
  const c = line.charCodeAt(i);
  if (c !== 96 && c !== 126) return undefined;
  // One search: a notification may start with a line of 1,200 backticks.
  const run = c === 96 ? TICKS : TILDES;
  run.lastIndex = i;
  run.test(line);
  const j = run.lastIndex;
  return j - i >= 3
    ? { char: c === 96 ? "`" : "~", length: j - i, info: line.slice(j) }
    : undefined;
}

const TICKS = /`+/y;
const TILDES = /~+/y;

/** `|---|:--:|`: only pipes, dashes, colons and blanks, with a dash and a pipe (one search first:
 * a line of 1,200 pipes has no dash). */
const isDelimiterRow = (line: string): boolean =>
  line.includes("-") && line.includes("|") && /^[-|: \t]*$/.test(line);

/** `/^ {0,3}(?:=+|-{2,})[ \t]*$/`, searched only on a line that starts like one. */
function isSetextUnderline(line: string): boolean {
  const c = line.charCodeAt(0);
  return (c === 32 || c === 61 || c === 45) && /^ {0,3}(?:=+|-{2,})[ \t]*$/.test(line);
}

function isParagraph(line: string): boolean {
  const t = line.trim();
  return t !== "" && headingOf(line) === undefined && !LIST_ITEM.test(line);
}

function headingOf(line: string): string | undefined {
  let i = 0;
  while (i < 3 && line[i] === " ") i++;
  let j = i;
  while (line[j] === "#") j++;
  const level = j - i;
  if (level < 1 || level > 6 || (j < line.length && line[j] !== " " && line[j] !== "\t")) {
    return undefined;
  }
  // The closing sequence: trailing #s after a blank (`## Title ##`).
  let end = line.length;
  while (end > j && (line[end - 1] === " " || line[end - 1] === "\t")) end--;
  let k = end;
  while (k > j && line[k - 1] === "#") k--;
  if (k < end && (k === j || line[k - 1] === " " || line[k - 1] === "\t")) end = k;
  return line.slice(j, end).trim();
}

const LIST_ITEM = /^([ \t]*)([-*+]|\d{1,9}[.)])(?:[ \t]+|$)(.*)$/s;
const BULLETS = ["•", "◦", "▪"];

function listItemOf(line: string): string | undefined {
  const m = LIST_ITEM.exec(line);
  if (!m) return undefined;
  const indent = (m[1] ?? "").replace(/\t/g, "    ").length;
  const depth = Math.min(Math.floor(indent / 2), 6);
  const marker = m[2] ?? "-";
  let text = m[3] ?? "";
  let box = "";
  const task = /^\[([ xX])\](?:[ \t]|$)/.exec(text);
  if (task) {
    box = task[1] === " " ? "☐ " : "☑ ";
    text = text.slice(task[0].length);
  }
  const bullet = /\d/.test(marker) ? marker : (BULLETS[depth % BULLETS.length] ?? "•");
  return `${"    ".repeat(depth)}${bullet} ${box}${inline(text, true)}`;
}

const boldLine = (text: string): string => {
  const inner = inline(text, false).trim();
  return inner === "" ? "" : `*${inner}*`;
};

function blockLine(line: string): string {
  if (!mayStartBlock(line.charCodeAt(0))) return inline(line.trimEnd(), true);
  const heading = headingOf(line);
  if (heading !== undefined) return boldLine(heading);
  const item = listItemOf(line);
  if (item !== undefined) return item;
  if (isThematicBreak(line)) return RULE_OUT;
  return inline(line.trimEnd(), true);
}

/** Whether a line that starts with `c` may be a heading, a list item or a rule. */
const mayStartBlock = (c: number): boolean =>
  c === 35 || c === 42 || c === 43 || c === 45 || c === 95 || (c >= 48 && c <= 57) || isSpace(c);

/** Three or more `-`, `*` or `_` (the same), with blanks between them or not. */
const isThematicBreak = (line: string): boolean => /^([-*_])(?:[ \t]*\1){2,}$/.test(line.trim());

/** Whether the lines of `text` before `end` hold an odd number of "```" or "> ```" lines. */
function fenceLinesOdd(text: string, end: number): boolean {
  let odd = false;
  for (
    let at = text.indexOf(FENCE_OUT);
    at >= 0 && at < end;
    at = text.indexOf(FENCE_OUT, at + 3)
  ) {
    const start = text.startsWith("> ", at - 2) ? at - 2 : at;
    const lineStart = start === 0 || text.charCodeAt(start - 1) === 10;
    if (lineStart && text.charCodeAt(at + 3) === 10) odd = !odd;
  }
  return odd;
}

/** The last safety net for one line outside code: a `**` left over, a heading or a table rule
 * is broken, so nothing reaches Slack as Markdown it would show raw. */
function guardLine(line: string, state: { inCode: boolean }): string {
  const body = line.startsWith("> ") ? line.slice(2) : line;
  if (body === FENCE_OUT) {
    state.inCode = !state.inCode;
    return line;
  }
  if (state.inCode) return line;
  let fixed = body.includes("*")
    ? body.replace(/(`[^`\n]+`)|\*(?=\*)/g, (m, code: string | undefined) =>
        code === undefined ? `*${ZWSP}` : m,
      )
    : body;
  const first = fixed.charCodeAt(0);
  if ((first === 32 || first === 35) && /^ {0,3}#{1,6}(?:[ \t]|$)/.test(fixed)) {
    fixed = `${ZWSP}${fixed}`;
  }
  if (isDelimiterRow(fixed)) fixed = RULE_OUT;
  return fixed === body ? line : line.slice(0, line.length - body.length) + fixed;
}

// The line half, linear in the line's length: each run of backticks knows the next run as long,
// links look ahead through tables of next positions, emphasis pairs in one pass.

const FENCE_OUT = "```";
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
  mate?: number;
  opener?: boolean;
}
type Piece = string | Delim;

const PUNCT = /[!-/:-@[-`{-~]/;
const isBlankOrEnd = (c: string | undefined) => c === undefined || /\s/.test(c);
const isWord = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}]/u.test(c);

/** The emphasis a run of 1, 2 or 3 `*` or `_` is. */
const EMPHASIS: readonly (Kind | undefined)[] = [undefined, "em", "strong", "strongEm"];

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
  if (kind === "strongEm") return !strong ? "_" : opener ? "*_" : "_*";
  return kind === "strong" ? (strong ? "*" : "") : kind === "em" ? "_" : "~";
}

function tokenize(s: string, links: boolean, strong: boolean): Piece[] {
  const pieces: Piece[] = [];
  const { runs, closes } = codeSpans(s);
  const next = links && /[[<]/.test(s) ? linkTables(s) : undefined;
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

/** The first place from `i` that may start a code span, an escape, emphasis or a link. */
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
  const kind = c === "~" ? (to - from === 2 ? "strike" : undefined) : EMPHASIS[to - from];
  if (kind === undefined) return undefined;
  const before = s[from - 1];
  const after = s[to];
  let canOpen = !isBlankOrEnd(after);
  let canClose = !isBlankOrEnd(before);
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

/** A line's next-position table of a character (32: space or tab), built when first asked for. */
type LinkTables = (char: number) => Int32Array;
function linkTables(s: string): LinkTables {
  const made: Int32Array[] = [];
  return (c) => (made[c] ??= nextTable(s, c, c === 32 ? 9 : c));
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
    const gt = t(62)[i + 1] ?? -1; // >
    const sp = t(32)[i + 1] ?? -1;
    if (gt < 0 || (sp >= 0 && sp < gt)) return undefined;
    const url = s.slice(i + 1, gt);
    return SAFE_URL.test(url) ? { text: `<${slackUrl(url)}>`, end: gt + 1 } : undefined;
  }
  const open = s[i] === "!" ? i + 1 : i;
  if (s[open] !== "[") return undefined;
  const close = t(93)[open + 1] ?? -1; // ]
  const nested = t(91)[open + 1] ?? -1; // [
  if (close < 0 || (nested >= 0 && nested < close) || s[close + 1] !== "(") return undefined;
  let end = t(41)[close + 2] ?? -1; // )
  if (end < 0) return undefined;
  // One level of parentheses inside the address: https://en.wikipedia.org/wiki/Go_(game)
  const inner = t(40)[close + 2] ?? -1; // (
  const outer = inner >= 0 && inner < end ? (t(41)[end + 1] ?? -1) : -1;
  if (outer >= 0) end = outer;
  const sp = t(32)[close + 2] ?? -1;
  const urlEnd = sp >= 0 && sp < end ? sp : end;
  const url = s.slice(close + 2, urlEnd);
  const label = inline(s.slice(open + 1, close), strong, false).trim();
  if (!SAFE_URL.test(url)) return { text: label === "" ? escapeText(url) : label, end: end + 1 };
  if (label === "") return { text: `<${slackUrl(url)}>`, end: end + 1 };
  const host = misleadingHost(s.slice(open + 1, close), url);
  const shown = host === undefined ? label : `${label} (${escapeText(host)})`;
  return { text: `<${slackUrl(url)}|${shown}>`, end: end + 1 };
}

/** A line inside a code block: shown as is, except a ``` that would end Slack's block. */
const codeLine = (line: string): string => escapeText(line).replace(/```/g, `\`${ZWSP}\`\``);

/** A table row's cells, outer pipes dropped, `\|` kept as a pipe. */
function cells(row: string): string[] {
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
const width = (s: string): number => s.length - (s.match(/[\uD800-\uDBFF]/g)?.length ?? 0);

/** Rows as aligned columns in a code block; a line of dashes under the header row. */
function renderTable(rows: readonly string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    for (let i = 0; i < row.length; i++) {
      widths[i] = Math.min(MAX_COLUMN, Math.max(widths[i] ?? 1, width(row[i] ?? "")));
    }
  }
  const pad = (c: string, i: number) => c + " ".repeat(Math.max(0, (widths[i] ?? 0) - width(c)));
  const line = (row: readonly string[]) =>
    codeLine(
      row
        .map((c, i) => (i === row.length - 1 ? c : pad(c, i)))
        .join("  ")
        .trimEnd(),
    );
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  return [FENCE_OUT, line(rows[0] ?? []), rule, ...rows.slice(1).map(line), FENCE_OUT];
}
