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
import { isSpace } from "./markdown-scan.ts";
import { cells, codeLine, FENCE_OUT, inline, renderTable } from "./mrkdwn-inline.ts";
import { escapeShort, neutralizeMentions, safeCut, ZWSP } from "./sanitize.ts";

const RULE_OUT = "──────────";

/** Slack mrkdwn for a Markdown text. */
export const toMrkdwn = (markdown: string): string =>
  neutralizeMentions(mrkdwnLines(markdown, Number.POSITIVE_INFINITY).join("\n"));

/**
 * The mrkdwn lines of a Markdown text, each guarded, mentions not yet neutralised. With a
 * finite `need`, only as many as hold more than `need` characters once joined, the last one
 * maybe cut (a line of plain text converts character by character): then they are the head
 * of what all of it gives, joined.
 */
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
      // Its characters one by one: only as many as are needed. (Guarding changes none.)
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

/** What may start a code span, a link, an escape or emphasis (`<` only before an address:
 * the letter is looked for, so that V8 skips ahead, where `<[hm]` stopped at every "<"). */
const NOT_PLAIN = /[`[\\*_~]|(?<=<)[hm]/i;

/**
 * A line that converts character by character (escaped), to nothing that depends on what
 * follows: no block marker first, no code span, link, escape or emphasis, no table rule.
 * Its text, trimmed, or undefined.
 */
function plainText(line: string): string | undefined {
  if (mayStartBlock(line.charCodeAt(0)) || NOT_PLAIN.test(line)) return undefined;
  const text = line.trimEnd();
  return isDelimiterRow(text) ? undefined : text;
}

/**
 * At most `limit` characters of mrkdwn for a Markdown text: cut at a line end where it can
 * (never inside a link or an entity), an open code block closed, "…" where it was cut.
 */
export function mrkdwnExcerpt(markdown: string, limit: number): string {
  // What is shown is at most the first `limit` characters, and whether there are more: the
  // head of the conversion says both, and neutralising looks at most 10 characters ahead
  // ("@everyone" and a word boundary).
  const full = neutralizeMentions(mrkdwnLines(markdown, limit + 10).join("\n"));
  if (full.length <= limit) return full;
  const room = Math.max(0, limit - FENCE_OUT.length - 3);
  let cut = full.lastIndexOf("\n", room);
  if (cut < room / 2) cut = safeCut(full, room);
  const text = full.slice(0, cut).trimEnd();
  // The lines before the last are whole lines, guarded already (a second time changes none);
  // the last, cut inside a code span, has what it held formatted again: guarded once more.
  const lastLine = text.lastIndexOf("\n") + 1;
  const state = { inCode: fenceLinesOdd(text, lastLine) };
  const head = text.slice(0, lastLine) + guardLine(text.slice(lastLine), state);
  const open = state.inCode;
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

/** A character of a line that converts to itself: none that may start a link, an escape or
 * emphasis, or that is escaped, nor a "-" (no table rule), nor a backtick (see below). */
const TEXT = "[^\\n`[\\\\*_~<>&-]";
/** Its first (no block, quote, fence or setext underline starts so) and last (no blank). */
const FIRST = "[^\\s#*+\\-_0-9>`~=[\\\\<&]";
const LAST = "[^\\s`[\\\\*_~<>&-]";
/**
 * Lines that convert to themselves, and that no line after them can turn into a heading or a
 * table row: text as above with at most one run of backticks (a run with no other as long
 * on its line opens no code span; one of three first would be a fence).
 */
const PLAIN_LINES = new RegExp(
  `(?:(?:${FIRST}(?:${TEXT}*\`+)?|\`{1,2})(?:${TEXT}*${LAST})?\n)+`,
  "y",
);

/**
 * The lines of a text (a "\r" before its "\n" dropped) without their leading `>` markers (any
 * depth: mrkdwn quotes one level), and whether each had any; read only as far as asked.
 */
class QuotedLines {
  readonly #text: string;
  readonly #rests: string[] = [];
  /** 1: quoted, 2: plain lines read at once, which convert to themselves. */
  readonly #kinds: number[] = [];
  #pos = 0;

  constructor(text: string) {
    this.#text = text;
  }

  /**
   * Line `k` without its markers, or undefined past the last line. A run of lines of plain
   * text (see PLAIN_LINES) read at once is one "line": they convert to themselves. Table rows
   * are read `lineByLine`.
   */
  rest(k: number, lineByLine = false): string | undefined {
    while (this.#rests.length <= k && this.#pos <= this.#text.length) this.#read(lineByLine);
    return this.#rests[k];
  }

  quoted(k: number): boolean {
    return this.#kinds[k] === 1;
  }

  /** Whether line `k` is lines read at once (PLAIN_LINES), which convert to themselves. */
  asIs(k: number): boolean {
    return this.#kinds[k] === 2;
  }

  #read(lineByLine: boolean): void {
    PLAIN_LINES.lastIndex = this.#pos;
    if (!lineByLine && PLAIN_LINES.test(this.#text)) {
      // All but the last: what follows it may make it a heading or a table's first row.
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
  // The run in one search: a part's notification may start with a line of 1,200 backticks.
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

/** `|---|:--:|`: only pipes, dashes, colons and blanks, with a dash and a pipe or colon. */
function isDelimiterRow(line: string): boolean {
  if (!line.includes("-")) return false; // one search (a line of 1,200 pipes has none)
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

/** Whether the lines of `text` before `end` (a line start) hold an odd number of "```" lines. */
function fenceLinesOdd(text: string, end: number): boolean {
  // Lines that are "```" or "> ```" (found by their fence: most lines have none).
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

/**
 * The last safety net, outside code, for one line (no "\n") after the lines before it left
 * `state`: a `**` left over (unpaired, or escaped in the source) gets a zero-width space between
 * its stars, a line that still reads as a heading or a table rule is broken the same way, so
 * nothing reaches Slack as Markdown it would show raw.
 */
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
