/**
 * Fuzzing the answer's way into Slack: repairing a half-streamed answer, splitting it into
 * messages, the native stream's final prefix, capping a huge answer, and the messages the app
 * posts (renderRun, renderPrompt, renderLeftOutFiles, renderContinued), over hostile Markdown.
 * Oracle: tools/local-slack's validateMessageContent (what chat.postMessage / chat.update refuse).
 */
import fc from "fast-check";
import { describe, expect } from "vitest";
import { validateMessageContent } from "../../tools/local-slack/index.ts";
import { repairPartialMarkdown, splitMarkdown, streamablePrefix } from "../../src/view/markdown.ts";
import { capAnswer, MAX_ANSWER_CHARS } from "../../src/runs/answer/cap.ts";
import {
  type FileNote,
  MESSAGE_MARKDOWN_LIMIT,
  type RunView,
  renderContinued,
  renderLeftOutFiles,
  renderPrompt,
  renderRun,
} from "../../src/view/render.ts";
import type { RunState } from "../../src/store/types.ts";
import { neutralizeMentions } from "../../src/view/sanitize.ts";
import { revealLinkHosts } from "../../src/view/scan/link-hosts.ts";
import {
  channelId,
  inline,
  leaksJs,
  markdown,
  overlongTextObject,
  parsedTexts,
  rawMention,
  shownTexts,
  ts,
  userId,
} from "./arbitraries.ts";
import { fuzz } from "./fuzz.ts";

/**
 * "Equal modulo rendering": the parts, concatenated, are the source once whitespace is
 * ignored (a part is trimmed at its cut, blank lines between parts are dropped) and once the
 * fence lines the splitter adds are taken out: a code block cut in two is closed by a last
 * line of its part (```) and reopened by the first line of the next (```ts).
 */
const FENCE_LINE = /^ {0,3}(?:`{3,}|~{3,})[^\n]*$/;
const squash = (s: string) => s.replace(/\s+/g, "");

function variants(part: string): string[] {
  const lines = part.split("\n");
  const lead = lines.length > 1 && FENCE_LINE.test(lines[0] ?? "");
  const trail = lines.length > 1 && FENCE_LINE.test(lines.at(-1) ?? "");
  const out = [part];
  if (lead) out.push(lines.slice(1).join("\n"));
  if (trail) out.push(lines.slice(0, -1).join("\n"));
  if (lead && trail) out.push(lines.slice(1, -1).join("\n"));
  return out.map(squash);
}

function sameText(parts: readonly string[], source: string): boolean {
  const src = squash(source);
  const options = parts.map(variants);
  const failed = new Set<string>();
  const match = (i: number, at: number): boolean => {
    if (i === options.length) return at === src.length;
    if (failed.has(`${i}:${at}`)) return false;
    for (const v of new Set(options[i])) {
      if (src.startsWith(v, at) && match(i + 1, at + v.length)) return true;
    }
    failed.add(`${i}:${at}`);
    return false;
  };
  return match(0, 0);
}

function expectSameText(parts: readonly string[], source: string): void {
  if (!sameText(parts, source)) {
    expect(parts.map(squash).join("")).toBe(squash(source)); // shows the difference
    expect.unreachable("the parts are the source only if fence lines are dropped elsewhere");
  }
}

const limit = fc.oneof(
  fc.integer({ min: 200, max: 1_000 }),
  fc.integer({ min: 200, max: MESSAGE_MARKDOWN_LIMIT }),
  fc.constant(MESSAGE_MARKDOWN_LIMIT),
);

describe("fuzz: splitMarkdown", () => {
  fuzz("splitMarkdown: parts within the limit, well-formed, the same text modulo rendering", () =>
    fc.property(markdown, limit, (text, max) => {
      const parts = splitMarkdown(text, max);
      for (const part of parts) {
        expect(part.length).toBeLessThanOrEqual(max);
        // A cut never separates the two halves of an emoji.
        if (text.isWellFormed()) expect(part.isWellFormed()).toBe(true);
      }
      if (text.trim() !== "") for (const part of parts) expect(part.trim()).not.toBe("");
      expectSameText(parts, text);
    }),
  );
});

describe("fuzz: repairPartialMarkdown", () => {
  fuzz("repairPartialMarkdown: closes an open block or only trims the last line", () =>
    fc.property(markdown, fc.nat(), (text, at) => {
      const prefix = text.slice(0, at % (text.length + 1));
      const repaired = repairPartialMarkdown(prefix);
      const head = prefix.slice(0, prefix.lastIndexOf("\n") + 1);
      expect(repaired.startsWith(head)).toBe(true);
      if (repaired.length > prefix.length) {
        // Only a code block left open: the prefix then its closing fence.
        expect(repaired.startsWith(prefix)).toBe(true);
        expect(repaired.slice(prefix.length)).toMatch(/^\n?( {0,3})?(`{3,}|~{3,})$/);
      } else {
        // The last line loses characters (markers, a dangling link), never gains any.
        expect(isSubsequence(repaired.slice(head.length), prefix.slice(head.length))).toBe(true);
      }
    }),
  );
});

function isSubsequence(small: string, big: string): boolean {
  let i = 0;
  for (let j = 0; j < big.length && i < small.length; j++) if (big[j] === small[i]) i++;
  return i === small.length;
}

describe("fuzz: streamablePrefix (native streaming)", () => {
  fuzz("streamablePrefix: grows append-only, and appended pieces never form a mention", () =>
    fc.property(markdown, fc.array(fc.nat(), { maxLength: 8 }), (text, cuts) => {
      const ends = [...cuts.map((c) => c % (text.length + 1)), text.length].sort((a, b) => a - b);
      let streamed = "";
      let sent = "";
      for (const end of ends) {
        const shown = text.slice(0, end);
        const safe = streamablePrefix(shown);
        expect(shown.startsWith(safe)).toBe(true);
        expect(safe === "" || safe.endsWith("\n")).toBe(true);
        expect(safe.startsWith(streamed)).toBe(true);
        // As the native stream does: each appended piece is neutralised on its own.
        sent += neutralizeMentions(safe.slice(streamed.length));
        streamed = safe;
      }
      expect(rawMention(sent)).toBeUndefined();
      expect(sent).toBe(neutralizeMentions(streamed));
    }),
  );
});

const runState = fc.constantFrom<RunState>("running", "completed", "failed", "stopped", "error");
const fileNote: fc.Arbitrary<FileNote> = fc.record(
  {
    name: fc.oneof(inline, fc.string({ maxLength: 300 })),
    size: fc.option(fc.nat({ max: 2 ** 40 }), { nil: undefined }),
    attached: fc.boolean(),
    reason: inline,
    url: fc.oneof(
      fc.webUrl(),
      fc.constantFrom("https://files.example/<!channel>|x>", "http://x", "javascript:alert(1)"),
      inline.map((s) => `https://example.com/${s}`),
    ),
  },
  { requiredKeys: ["name", "size", "attached"] },
);

const runView: fc.Arbitrary<RunView> = fc.record(
  {
    text: markdown,
    state: runState,
    elapsedMs: fc.nat({ max: 10 * 24 * 3600 * 1000 }),
    stoppedBy: userId,
    reason: fc.oneof(inline, fc.string({ maxLength: 4_000 })),
    stopValue: fc.record({ c: channelId, t: ts, r: fc.uuid() }).map((v) => JSON.stringify(v)),
    files: fc.array(fileNote, { maxLength: 25 }),
    remark: inline,
    serviceStatus: fc.oneof(fc.constantFrom("running", "queued", "in_progress"), inline),
    thread: fc.record({ channelId, threadTs: ts }),
    steps: fc.record({ count: fc.nat(), last: inline }),
  },
  { requiredKeys: ["text", "state", "elapsedMs"] },
);

describe("fuzz: the messages the app posts", () => {
  fuzz("renderRun: Slack accepts every message, nothing pings, the answer is all there", () =>
    fc.property(runView, limit, (view, max) => {
      const payloads = renderRun(view, max);
      expect(payloads.length).toBeGreaterThan(0);
      const allowed = view.stoppedBy ? [`<@${view.stoppedBy}>`] : [];
      const wellFormed = shownTexts(view).every((t) => t.isWellFormed());
      const answer: string[] = [];
      for (const payload of payloads) {
        expect(validateMessageContent({ ...payload })).toBeUndefined();
        expect(overlongTextObject(payload.blocks)).toBeUndefined();
        for (const text of [payload.text, ...parsedTexts(payload.blocks)]) {
          expect(rawMention(text, allowed)).toBeUndefined();
        }
        for (const text of [payload.text, ...shownTexts(payload.blocks)]) {
          expect(leaksJs(text)).toBe(false);
          // Cutting a text short never leaves half an emoji (JSON's RFC 8259 §8.2).
          if (wellFormed) expect(text.isWellFormed()).toBe(true);
        }
        for (const b of payload.blocks) if (b.type === "markdown") answer.push(b.text);
      }
      const source = view.state === "running" ? repairPartialMarkdown(view.text) : view.text;
      if (source.trim() !== "") {
        expectSameText(answer, neutralizeMentions(revealLinkHosts(source)));
      }
    }),
  );

  fuzz("renderPrompt and renderLeftOutFiles: accepted by Slack, nothing pings", () =>
    fc.property(
      userId,
      fc.oneof(markdown, fc.string({ maxLength: 40_000 })),
      fc.array(inline, { maxLength: 12 }),
      fc.array(
        fc.record({ name: fc.oneof(inline, fc.string({ maxLength: 255 })), reason: inline }),
        {
          minLength: 1,
          maxLength: 20,
        },
      ),
      fc.boolean(),
      (user, prompt, fileNames, leftOut, sentAny) => {
        const payload = renderPrompt(user, prompt, fileNames);
        expect(validateMessageContent({ ...payload })).toBeUndefined();
        expect(overlongTextObject(payload.blocks)).toBeUndefined();
        const wellFormed = [prompt, ...fileNames].every((t) => t.isWellFormed());
        for (const text of [payload.text, ...parsedTexts(payload.blocks)]) {
          expect(rawMention(text, [`<@${user}>`])).toBeUndefined();
          if (wellFormed) expect(text.isWellFormed()).toBe(true);
        }
        const note = renderLeftOutFiles(leftOut, sentAny);
        expect(validateMessageContent({ text: note })).toBeUndefined();
        expect(rawMention(note)).toBeUndefined();
      },
    ),
  );

  fuzz("renderContinued: the Continue form's message is accepted by Slack, nothing pings", () =>
    fc.property(
      userId,
      fc.oneof(markdown, fc.string({ maxLength: 3_000 }), fc.constant("")),
      fc.array(fc.oneof(inline, fc.string({ minLength: 1, maxLength: 255 })), { maxLength: 10 }),
      (user, text, fileNames) => {
        const payload = renderContinued(user, text, fileNames);
        expect(validateMessageContent({ ...payload })).toBeUndefined();
        expect(overlongTextObject(payload.blocks)).toBeUndefined();
        const wellFormed = [text, ...fileNames].every((t) => t.isWellFormed());
        for (const shown of [payload.text, ...parsedTexts(payload.blocks)]) {
          expect(rawMention(shown, [`<@${user}>`])).toBeUndefined();
          expect(leaksJs(shown)).toBe(false);
          if (wellFormed) expect(shown.isWellFormed()).toBe(true);
        }
      },
    ),
  );
});

describe("fuzz: capAnswer", () => {
  /** An answer around the cap: Markdown, then one piece repeated up to 59,990–60,010 characters. */
  const longAnswer = fc
    .tuple(
      markdown,
      fc.constantFrom("😀", "a", "lorem ipsum ", "👩‍👩‍👧‍👦", "é\n", "<!channel> "),
      fc.integer({ min: -10, max: 10 }),
    )
    .map(([head, piece, off]) => {
      const room = Math.max(0, MAX_ANSWER_CHARS + off - head.length);
      return head + piece.repeat(Math.ceil(room / piece.length));
    });

  fuzz(
    "capAnswer: keeps the answer's head whole, never half an emoji, then says where the rest is",
    () =>
      fc.property(fc.oneof(longAnswer, markdown), (text) => {
        const capped = capAnswer(text);
        if (text.length <= MAX_ANSWER_CHARS) {
          expect(capped).toBe(text);
          return;
        }
        const [head = "", note] = capped.split("\n\n_The answer is longer than ");
        expect(note).toMatch(/open History under the answer\._$/);
        expect(text.startsWith(head)).toBe(true);
        expect(head.length).toBeGreaterThanOrEqual(MAX_ANSWER_CHARS - 1);
        if (text.isWellFormed()) expect(capped.isWellFormed()).toBe(true);
      }),
  );
});
