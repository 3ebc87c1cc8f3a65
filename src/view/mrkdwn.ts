/**
 * Standard Markdown (what the agent writes) as Slack mrkdwn, for the surfaces that take no
 * `markdown` block: modals (History), context lines, the Continue form's quote, notification
 * text. Headings become bold lines, `**bold**` `*bold*`, `[label](url)` `<url|label>`, lists
 * bullets, block quotes `>` lines, fenced code a plain ``` block, pipe tables aligned
 * monospace in a ``` block; `&`, `<`, `>` are escaped and mentions neutralised.
 *
 * Written here rather than taken from slackify-markdown 5.0.0 (remark, 71 packages): on hostile
 * input that library overflowed the stack on 2,000 nested `> ` (a 4,000-character answer),
 * took 9 times longer for 4 times more "[a](", left `<@U…>` and `<!channel>` live, and kept
 * pipe tables with their `|---|` rule line, which mrkdwn shows raw. This converter is one pass
 * over lines and one over each line's characters (every lookup ahead goes through a table of
 * positions built once per line), so its work is linear in the text's length.
 */
import { neutralizeMentions } from "./sanitize.ts";

const ZWSP = "\u200B";
const FENCE_OUT = "```";
const RULE_OUT = "──────────";
/** A table cell wider than this does not widen its column further (it just runs on). */
const MAX_COLUMN = 40;

const escapeText = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Slack mrkdwn for a Markdown text. */
export function toMrkdwn(markdown: string): string {
  const lines = markdown.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  const out: string[] = [];
  let fence: { char: string; length: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const { quoted, rest } = stripQuote(lines[i] ?? "");
    const prefix = quoted ? "> " : "";
    if (fence) {
      const f = fenceOf(rest);
      if (f && f.char === fence.char && f.length >= fence.length && f.info.trim() === "") {
        fence = undefined;
        out.push(prefix + FENCE_OUT);
      } else out.push(prefix + codeLine(rest));
      continue;
    }
    const opened = fenceOf(rest);
    if (opened && !(opened.char === "`" && opened.info.includes("`"))) {
      fence = opened;
      out.push(prefix + FENCE_OUT);
      continue;
    }
    const next = i + 1 < lines.length ? stripQuote(lines[i + 1] ?? "").rest : undefined;
    if (next !== undefined && rest.includes("|") && isDelimiterRow(next)) {
      let end = i + 2;
      const rows = [cells(rest)];
      for (; end < lines.length; end++) {
        const row = stripQuote(lines[end] ?? "").rest;
        if (row.trim() === "" || !row.includes("|")) break;
        rows.push(cells(row));
      }
      for (const line of renderTable(rows)) out.push(prefix + line);
      i = end - 1;
      continue;
    }
    if (next !== undefined && isParagraph(rest) && isSetextUnderline(next)) {
      out.push(prefix + boldLine(rest.trim()));
      i++;
      continue;
    }
    out.push(prefix + blockLine(rest));
  }
  if (fence) out.push(FENCE_OUT); // an unclosed fence runs to the end, as in CommonMark
  return neutralizeMentions(guard(out.join("\n")));
}

/**
 * At most `limit` characters of mrkdwn for a Markdown text: cut at a line end where it can
 * (never inside a link or an entity), an open code block closed, "…" where it was cut.
 */
export function mrkdwnExcerpt(markdown: string, limit: number): string {
  const full = toMrkdwn(markdown);
  if (full.length <= limit) return full;
  const room = Math.max(0, limit - FENCE_OUT.length - 3);
  let cut = full.lastIndexOf("\n", room);
  if (cut < room / 2) cut = safeCut(full, room);
  // Cut inside a code span, what it held is formatted again: guard it once more.
  const head = guard(full.slice(0, cut).trimEnd());
  let open = false;
  for (const line of head.split("\n")) {
    if (line === FENCE_OUT || line === `> ${FENCE_OUT}`) open = !open;
  }
  return `${head}${open ? `\n${FENCE_OUT}` : ""}\n…`;
}

/**
 * A notification's `text` (what the push and the channel list show): the head of an answer as
 * mrkdwn. Only the head is converted, so a long answer costs no more than a short one.
 */
export const notificationText = (markdown: string, limit: number): string =>
  mrkdwnExcerpt(markdown.slice(0, limit * 4).replace(/[\uD800-\uDBFF]$/, ""), limit);

/**
 * One line of plain mrkdwn text for a link's label (a task's title on the App Home tab): the
 * first line with text, converted, without markers (a label shows none) and without links
 * (no link inside a link); `|` would end the label and becomes `¦`.
 */
export function mrkdwnLabel(markdown: string, limit: number): string {
  const first = markdown.split("\n").find((l) => l.trim() !== "") ?? "";
  const line = toMrkdwn(first.slice(0, limit * 4).replace(/[\uD800-\uDBFF]$/, ""))
    .replace(
      /<[^<>|]*\|([^<>]*)>|<([^<>|]*)>/g,
      (_m, label?: string, url?: string) => label ?? url ?? "",
    )
    .replace(/[*~`\u200B]/g, "")
    .replace(/\|/g, "¦")
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

/** A cut inside one long line: not inside `<…>`, `&…;` or an emoji's surrogate pair. */
function safeCut(text: string, at: number): number {
  let cut = at;
  const lt = text.lastIndexOf("<", cut - 1);
  if (lt >= 0 && text.lastIndexOf(">", cut - 1) < lt) cut = lt;
  const amp = text.lastIndexOf("&", cut - 1);
  if (amp >= 0 && amp > cut - 6 && text.lastIndexOf(";", cut - 1) < amp) cut = amp;
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return Math.max(0, cut);
}

/** Leading `>` markers (any depth: mrkdwn quotes one level) and what follows them. */
function stripQuote(line: string): { quoted: boolean; rest: string } {
  let i = 0;
  let quoted = false;
  for (;;) {
    let j = i;
    while (j < line.length && j - i < 3 && line[j] === " ") j++;
    if (line[j] !== ">") break;
    quoted = true;
    i = j + 1;
    if (line[i] === " ") i++;
  }
  return { quoted, rest: quoted ? line.slice(i) : line };
}

function fenceOf(line: string): { char: string; length: number; info: string } | undefined {
  let i = 0;
  while (i < 3 && line[i] === " ") i++;
  const char = line[i];
  if (char !== "`" && char !== "~") return undefined;
  let j = i;
  while (line[j] === char) j++;
  return j - i >= 3 ? { char, length: j - i, info: line.slice(j) } : undefined;
}

/** A line inside a code block: shown as is, except a ``` that would end Slack's block. */
const codeLine = (line: string): string => escapeText(line).replace(/```/g, `\`${ZWSP}\`\``);

/** `|---|:--:|`: only pipes, dashes, colons and blanks, with a dash and a pipe or colon. */
function isDelimiterRow(line: string): boolean {
  let dash = false;
  let pipe = false;
  for (const c of line) {
    if (c === "-") dash = true;
    else if (c === "|") pipe = true;
    else if (c !== ":" && c !== " " && c !== "\t") return false;
  }
  return dash && pipe;
}

const isSetextUnderline = (line: string): boolean => /^ {0,3}(?:=+|-{2,})[ \t]*$/.test(line);

function isParagraph(line: string): boolean {
  const t = line.trim();
  return t !== "" && headingOf(line) === undefined && !LIST_ITEM.test(line);
}

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
function width(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) n--;
  }
  return n;
}

/** Rows as aligned columns in a code block; a line of dashes under the header row. */
function renderTable(rows: readonly string[][]): string[] {
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
  const heading = headingOf(line);
  if (heading !== undefined) return boldLine(heading);
  const item = listItemOf(line);
  if (item !== undefined) return item;
  if (isThematicBreak(line)) return RULE_OUT;
  return inline(line.trimEnd(), true);
}

function isThematicBreak(line: string): boolean {
  const t = line.trim();
  const c = t[0];
  if (c !== "-" && c !== "*" && c !== "_") return false;
  let n = 0;
  for (const ch of t) {
    if (ch === c) n++;
    else if (ch !== " " && ch !== "\t") return false;
  }
  return n >= 3;
}

/**
 * The last safety net, outside code: a `**` left over (unpaired, or escaped in the source)
 * gets a zero-width space between its stars, a line that still reads as a heading or a table
 * rule is broken the same way, so nothing reaches Slack as Markdown it would show raw.
 */
function guard(text: string): string {
  let inCode = false;
  return text
    .split("\n")
    .map((line) => {
      const body = line.startsWith("> ") ? line.slice(2) : line;
      if (body === FENCE_OUT) {
        inCode = !inCode;
        return line;
      }
      if (inCode) return line;
      const lead = line.slice(0, line.length - body.length);
      let fixed = body.replace(/(`[^`\n]+`)|\*(?=\*)/g, (m, code: string | undefined) =>
        code === undefined ? `*${ZWSP}` : m,
      );
      if (/^ {0,3}#{1,6}(?:[ \t]|$)/.test(fixed)) fixed = `${ZWSP}${fixed}`;
      if (isDelimiterRow(fixed)) fixed = RULE_OUT;
      return lead + fixed;
    })
    .join("\n");
}

// ---------------------------------------------------------------------------------------
// Inline: code spans, links, emphasis, escapes, within one line.

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

/** Positions of the next occurrence of each of `chars` at or after each index. */
function nextTable(s: string, chars: string): Int32Array {
  const next = new Int32Array(s.length + 1).fill(-1);
  for (let i = s.length - 1; i >= 0; i--) {
    next[i] = chars.includes(s[i] ?? "") ? i : (next[i + 1] ?? -1);
  }
  return next;
}

/** One line of Markdown inline text as mrkdwn; `strong: false` drops bold (a heading is bold). */
function inline(s: string, strong: boolean, links = true): string {
  const pieces = tokenize(s, links, strong);
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
  const next = links && /[[<]/.test(s) ? linkTables(s) : undefined;
  let text = "";
  const flush = () => {
    if (text !== "") pieces.push(escapeText(text));
    text = "";
  };
  for (let i = 0; i < s.length;) {
    const c = s[i] ?? "";
    const close = code.get(i);
    if (close !== undefined) {
      flush();
      const run = code.run(i);
      const body = s
        .slice(i + run, close)
        .replace(/`/g, "'")
        .trim();
      pieces.push(body === "" ? escapeText(s.slice(i, close + run)) : `\`${escapeText(body)}\``);
      i = close + run;
      continue;
    }
    if (c === "`") {
      const run = code.run(i);
      text += s.slice(i, i + run);
      i += run;
      continue;
    }
    if (next && (c === "[" || c === "!" || c === "<")) {
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
  for (const [i, p] of pieces.entries()) {
    if (typeof p === "string") continue;
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

/** Code spans of a line: an opening run of backticks and the next run of the same length. */
function codeSpans(s: string): { get(i: number): number | undefined; run(i: number): number } {
  const runs = new Map<number, number>(); // start → length
  const byLength = new Map<number, number[]>();
  for (let i = 0; i < s.length;) {
    if (s[i] !== "`") {
      i++;
      continue;
    }
    let j = i;
    while (s[j] === "`") j++;
    runs.set(i, j - i);
    const list = byLength.get(j - i) ?? [];
    list.push(i);
    byLength.set(j - i, list);
    i = j;
  }
  const cursor = new Map<number, number>();
  return {
    run: (i) => runs.get(i) ?? 1,
    get(i) {
      const len = runs.get(i);
      if (len === undefined) return undefined;
      const list = byLength.get(len) ?? [];
      let k = cursor.get(len) ?? 0;
      while (k < list.length && (list[k] ?? 0) <= i) k++;
      cursor.set(len, k + 1); // the closer is used up either way
      return list[k];
    },
  };
}

interface LinkTables {
  readonly bracketClose: Int32Array;
  readonly bracketOpen: Int32Array;
  readonly parenClose: Int32Array;
  readonly parenOpen: Int32Array;
  readonly angleClose: Int32Array;
  readonly space: Int32Array;
}

function linkTables(s: string): LinkTables {
  return {
    bracketClose: nextTable(s, "]"),
    bracketOpen: nextTable(s, "["),
    parenClose: nextTable(s, ")"),
    parenOpen: nextTable(s, "("),
    angleClose: nextTable(s, ">"),
    space: nextTable(s, " \t"),
  };
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
  return {
    text: label === "" ? `<${slackUrl(url)}>` : `<${slackUrl(url)}|${label}>`,
    end: end + 1,
  };
}
