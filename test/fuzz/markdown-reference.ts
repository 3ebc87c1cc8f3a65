/**
 * The Markdown helpers as they were written with regular expressions (before the linear
 * scanners of src/view/markdown-scan.ts), kept as the oracle of the equivalence fuzz target:
 * on texts small enough for their backtracking not to matter, the scanners must give exactly
 * what these gave.
 */
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

interface FenceState {
  open: string | undefined; // the fence marker, e.g. "```"
  info: string;
}

function scanFences(text: string): FenceState {
  const state: FenceState = { open: undefined, info: "" };
  for (const line of text.split("\n")) advanceFence(state, line);
  return state;
}

function advanceFence(state: FenceState, line: string): void {
  const m = FENCE.exec(line.replace(/\r$/, "")); // CRLF answers: "." does not match "\r"
  if (!m) return;
  const marker = m[1] ?? "";
  // CommonMark: a backtick fence's info string has no backticks ("```npm i``` …" is inline code).
  if (marker[0] === "`" && m[2]?.includes("`")) return;
  if (state.open === undefined) {
    state.open = marker;
    state.info = (m[2] ?? "").trim();
  } else if (marker[0] === state.open[0] && marker.length >= state.open.length && !m[2]?.trim()) {
    state.open = undefined;
    state.info = "";
  }
}

/**
 * Closes what a stream left open so that a partial answer renders as it will look when done:
 * an open code fence is closed; on the last line, an unpaired `**`, `~~` or backtick is
 * dropped, and a link or image whose target is still being written is cut off.
 */
export function repairBefore(text: string): string {
  const state = scanFences(text);
  if (state.open !== undefined) {
    return `${text}${text.endsWith("\n") ? "" : "\n"}${state.open}`;
  }
  const lastBreak = text.lastIndexOf("\n");
  const head = text.slice(0, lastBreak + 1);
  // The last line just closed a code block: its ``` or ~~~ is no unpaired marker.
  if (scanFences(head).open !== undefined) return text;
  let line = text.slice(lastBreak + 1);
  // A dangling link: "[label](http://exa" or "[label" with no closing bracket yet.
  line = line.replace(/!?\[[^\]\n]*\]\([^)\s]*$/, "").replace(/!?\[[^\]\n]*$/, "");
  // Inline code first: markers inside code spans do not count.
  if ((line.match(/`/g) ?? []).length % 2 === 1) line = removeLast(line, "`");
  const outsideCode = line.replace(/`[^`]*`/g, "");
  for (const marker of ["**", "~~", "__"]) {
    if (countOf(outsideCode, marker) % 2 === 1) line = removeLast(line, marker);
  }
  return head + line;
}

const countOf = (s: string, sub: string) => s.split(sub).length - 1;

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
export function splitBefore(text: string, limit: number): string[] {
  if (limit < 200) throw new RangeError("limit too small to split Markdown sensibly");
  const parts: string[] = [];
  let rest = text;
  let reopen = "";
  while (reopen.length + rest.length > limit) {
    const budget = limit - reopen.length - 5; // room to close a fence: "\n````"
    const window = rest.slice(0, budget);
    const { cut, fence } = chooseCut(reopen, window, budget);
    let part = reopen + rest.slice(0, cut);
    let nextReopen = "";
    if (fence.open !== undefined) {
      const closed = `${part.replace(/\n?$/, "\n")}${fence.open}`;
      if (closed.length <= limit) part = closed; // a marker longer than 4 may not fit
      nextReopen = `${fence.open}${fence.info}\n`;
      // A "fence" line that runs on for pages is no language tag: repeating it would leave
      // the next part no room (and no progress at all once it fills the part).
      if (nextReopen.length > limit / 4) nextReopen = "";
    }
    const trimmed = part.replace(/\s+$/, "");
    if (trimmed !== "") parts.push(trimmed); // a long run of spaces is no message
    rest = rest.slice(cut);
    if (fence.open === undefined) rest = rest.replace(/^\s*\n/, "");
    else rest = rest.replace(/^\n/, "");
    reopen = nextReopen;
  }
  const last = (reopen + rest).replace(/\s+$/, "");
  if (last !== "" || parts.length === 0) parts.push(last);
  return parts;
}

function chooseCut(
  reopen: string,
  window: string,
  budget: number,
): { cut: number; fence: FenceState } {
  // Fence state at each line end of the window.
  const state: FenceState = { open: undefined, info: "" };
  if (reopen) advanceFence(state, reopen.replace(/\n$/, ""));
  const lineEnds: Array<{ at: number; open: string | undefined; info: string; blank: boolean }> =
    [];
  let start = 0;
  for (;;) {
    const nl = window.indexOf("\n", start);
    if (nl < 0) break;
    advanceFence(state, window.slice(start, nl));
    const nextNl = window.indexOf("\n", nl + 1);
    const nextLine = window.slice(nl + 1, nextNl < 0 ? undefined : nextNl);
    lineEnds.push({ at: nl, open: state.open, info: state.info, blank: nextLine.trim() === "" });
    start = nl + 1;
  }
  const min = Math.floor(budget * 0.4);
  const pick = (pred: (e: (typeof lineEnds)[number]) => boolean) => {
    for (let i = lineEnds.length - 1; i >= 0; i--) {
      const e = lineEnds[i];
      if (e && e.at >= min && pred(e)) return e;
    }
    return undefined;
  };
  const chosen =
    pick((e) => e.open === undefined && e.blank) ??
    pick((e) => e.open === undefined) ??
    pick(() => true);
  if (chosen) return { cut: chosen.at + 1, fence: { open: chosen.open, info: chosen.info } };
  // One very long line: cut at a space, else anywhere that does not split a surrogate pair.
  const fence = scanFences(reopen + window);
  const space = window.lastIndexOf(" ");
  let cut = space >= min ? space + 1 : budget;
  const code = window.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return { cut, fence: { open: fence.open, info: fence.info } };
}

/**
 * The part of a growing answer that will not change any more, for append-only (native)
 * streaming: whole lines only; a table is held back until a line after it shows it is
 * complete; a paragraph with an unpaired `**`, `~~` or backtick is held back until it pairs
 * up or ends. Inside a code block every finished line is final.
 */
export function streamableBefore(text: string): string {
  const end = text.lastIndexOf("\n") + 1;
  const state: FenceState = { open: undefined, info: "" };
  let safe = 0;
  let offset = 0;
  let paragraph = "";
  for (const line of text.slice(0, end).split("\n").slice(0, -1)) {
    offset += line.length + 1;
    const wasOpen = state.open !== undefined;
    advanceFence(state, line.replace(/\r$/, ""));
    if (wasOpen || state.open !== undefined) {
      // In (or opening, or closing) a code block: finished lines are final.
      paragraph = "";
      safe = offset;
      continue;
    }
    if (line.trim() === "") {
      paragraph = "";
      safe = offset;
      continue;
    }
    // A table row: nothing is final until a line after the table.
    if (/^\s*\|/.test(line)) continue;
    paragraph += `${line}\n`;
    const plain = paragraph.replace(/`[^`\n]*`/g, "");
    const balanced =
      (paragraph.match(/`/g) ?? []).length % 2 === 0 &&
      countOf(plain, "**") % 2 === 0 &&
      countOf(plain, "~~") % 2 === 0;
    if (balanced) safe = offset;
  }
  return text.slice(0, safe);
}

/** escapeText (src/view/sanitize.ts) as it was: three replacements, whatever the text. */
export const escapeBefore = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export const neutralizeBefore = (text: string): string =>
  text
    .replace(/<([!@#])/g, "<\u200B$1")
    .replace(/(^|[^\w])@(channel|here|everyone)\b/gi, "$1@\u200B$2");
