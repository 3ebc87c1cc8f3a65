/**
 * The Markdown → mrkdwn converter as it was before it converted only what an excerpt shows
 * (src/view/mrkdwn.ts), with the mention replacements as they were: the oracle the converter
 * must still give exactly, whole and in excerpts (its inline half: mrkdwn-inline-reference.ts).
 */
import { isSpace } from "../../src/view/markdown-scan.ts";
import { inline } from "./mrkdwn-inline-reference.ts";
import { ZWSP } from "../../src/view/sanitize.ts";
import {
  escapeBefore as escapeText,
  neutralizeBefore as neutralizeMentions,
} from "./markdown-reference.ts";

const FENCE_OUT = "```";
const RULE_OUT = "──────────";
/** A table cell wider than this does not widen its column further (it just runs on). */
const MAX_COLUMN = 40;

/** Slack mrkdwn for a Markdown text. */
export function toMrkdwnBefore(markdown: string): string {
  const { quoted, rests } = stripQuotes(markdown);
  const out: string[] = [];
  let fence: { char: string; length: number } | undefined;
  for (let i = 0; i < rests.length; i++) {
    const rest = rests[i] ?? "";
    const prefix = quoted[i] === 1 ? "> " : "";
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
    const next = rests[i + 1];
    if (next !== undefined && rest.includes("|") && isDelimiterRow(next)) {
      let end = i + 2;
      const rows = [cells(rest)];
      for (; end < rests.length; end++) {
        const row = rests[end] ?? "";
        if (row.trim() === "" || !row.includes("|")) break;
        rows.push(cells(row));
      }
      for (const line of renderTable(rows)) out.push(prefix + line);
      i = end - 1;
      continue;
    }
    if (next !== undefined && isSetextUnderline(next) && isParagraph(rest)) {
      out.push(prefix + boldLine(rest.trim()));
      i++;
      continue;
    }
    out.push(prefix + blockLine(rest));
  }
  if (fence) out.push(FENCE_OUT); // an unclosed fence runs to the end, as in CommonMark
  // Each output line is one line (no "\n"): guarded as it will be joined.
  const state = { inCode: false };
  for (let k = 0; k < out.length; k++) out[k] = guardLine(out[k] ?? "", state);
  return neutralizeMentions(out.join("\n"));
}

/**
 * At most `limit` characters of mrkdwn for a Markdown text: cut at a line end where it can
 * (never inside a link or an entity), an open code block closed, "…" where it was cut.
 */
export function mrkdwnExcerptBefore(markdown: string, limit: number): string {
  const full = toMrkdwnBefore(markdown);
  if (full.length <= limit) return full;
  const room = Math.max(0, limit - FENCE_OUT.length - 3);
  let cut = full.lastIndexOf("\n", room);
  if (cut < room / 2) cut = safeCut(full, room);
  // Cut inside a code span, what it held is formatted again: guard it once more.
  const head = guard(full.slice(0, cut).trimEnd());
  // Lines that are "```" or "> ```" (found by their fence: most lines have none).
  let open = false;
  for (let at = head.indexOf(FENCE_OUT); at >= 0; at = head.indexOf(FENCE_OUT, at + 3)) {
    const start = head.startsWith("> ", at - 2) ? at - 2 : at;
    const lineStart = start === 0 || head.charCodeAt(start - 1) === 10;
    if (lineStart && (at + 3 === head.length || head.charCodeAt(at + 3) === 10)) open = !open;
  }
  return `${head}${open ? `\n${FENCE_OUT}` : ""}\n…`;
}

/**
 * A notification's `text` (what the push and the channel list show): the head of an answer as
 * mrkdwn. Only the head is converted, so a long answer costs no more than a short one.
 */
export const notificationTextBefore = (markdown: string, limit: number): string =>
  mrkdwnExcerptBefore(markdown.slice(0, limit * 4).replace(/[\uD800-\uDBFF]$/, ""), limit);

/**
 * One line of plain mrkdwn text for a link's label (a task's title on the App Home tab): the
 * first line with text, converted, without markers (a label shows none) and without links
 * (no link inside a link); `|` would end the label and becomes `¦`.
 */
export function mrkdwnLabelBefore(markdown: string, limit: number): string {
  const first = markdown.split("\n").find((l) => l.trim() !== "") ?? "";
  const line = toMrkdwnBefore(first.slice(0, limit * 4).replace(/[\uD800-\uDBFF]$/, ""))
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

/**
 * Each line (a "\r" before its "\n" dropped) without its leading `>` markers (any depth:
 * mrkdwn quotes one level), and whether it had any (1) or not (0).
 */
function stripQuotes(markdown: string): { quoted: Uint8Array; rests: string[] } {
  const rests = markdown.split("\n");
  const quoted = new Uint8Array(rests.length);
  for (let k = 0; k < rests.length; k++) {
    let line = rests[k] ?? "";
    if (line.charCodeAt(line.length - 1) === 13) line = line.slice(0, -1);
    let i = 0;
    for (;;) {
      let j = i;
      while (j < line.length && j - i < 3 && line.charCodeAt(j) === 32) j++;
      if (line.charCodeAt(j) !== 62) break; // >
      quoted[k] = 1;
      i = j + 1;
      if (line.charCodeAt(i) === 32) i++;
    }
    rests[k] = i > 0 ? line.slice(i) : line;
  }
  return { quoted, rests };
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
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 45)
      dash = true; // -
    else if (c === 124)
      pipe = true; // |
    else if (c !== 58 && c !== 32 && c !== 9) return false; // :, space, tab
  }
  return dash && pipe;
}

/** `/^ {0,3}(?:=+|-{2,})[ \t]*$/`, searched only on a line that starts like one. */
function isSetextUnderline(line: string): boolean {
  const c = line.charCodeAt(0);
  return (c === 32 || c === 61 || c === 45) && /^ {0,3}(?:=+|-{2,})[ \t]*$/.test(line);
}

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
  const state = { inCode: false };
  return text
    .split("\n")
    .map((line) => guardLine(line, state))
    .join("\n");
}

/** `guard` of one line (no "\n"), after the lines before it left `state`. */
function guardLine(line: string, state: { inCode: boolean }): string {
  const body = line.startsWith("> ") ? line.slice(2) : line;
  if (body === FENCE_OUT) {
    state.inCode = !state.inCode;
    return line;
  }
  if (state.inCode) return line;
  // Without a star there is no "**" to break (a line of code spans: one call each).
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
