/**
 * Fuzzing Slack's native streaming (chat.startStream / appendStream / stopStream): an answer
 * that grows in pieces of any size, with agent steps between them, goes through NativeStream
 * and the real WebClient writer. Every call is one Slack accepts (oracle: tools/local-slack's
 * validateStreamContent, and its count of the bytes a streamed message holds, what its
 * chat-stream methods check); every stream message stays within the app's byte budget and
 * leaves no code block open but the last; nothing pings; and the stream messages hold the
 * answer's finished lines, each message the part from where it started, with only the lines
 * that close a code block cut between two messages and open it again added.
 */
import type { WebClient } from "@slack/web-api";
import fc from "fast-check";
import { pino } from "pino";
import { describe, expect } from "vitest";
import {
  SLACK_LIMITS,
  streamedTextBytes,
  validateStreamContent,
} from "../../tools/local-slack/index.ts";
import { NativeStream } from "../../src/runs/answer/native-stream.ts";
import {
  asStreamed,
  reopeningLine,
  STREAM_MESSAGE_BYTES,
} from "../../src/runs/answer/stream-parts.ts";
import { toolStep } from "../../src/service/stream.ts";
import { webClientWriter } from "../../src/slack/web-writer.ts";
import { scanFences } from "../../src/view/markdown-scan.ts";
import { streamablePrefix } from "../../src/view/markdown.ts";
import { inline, markdown, rawMention } from "./arbitraries.ts";
import { fuzz } from "./fuzz.ts";

type Args = Record<string, unknown>;

/**
 * The three chat methods of a WebClient, answering like Slack (each start a new message, whose
 * text Slack takes up to its byte ceiling) and keeping what was sent and what was refused.
 */
function streamingClient() {
  const calls: { method: string; args: Args; ts: string }[] = [];
  const refused: string[] = [];
  const bytes = new Map<string, number>();
  let starts = 0;
  const call = (method: string) => async (args: Args) => {
    const ts =
      method === "chat.startStream"
        ? `1700000000.${String(++starts).padStart(6, "0")}`
        : String(args.ts);
    const total = (bytes.get(ts) ?? 0) + streamedTextBytes(args);
    const problem =
      validateStreamContent(args) ??
      (total > SLACK_LIMITS.streamMessageBytesMax ? { error: "msg_too_long" } : undefined);
    // As WebClient rejects on `ok: false`; NativeStream then goes back to editing messages.
    if (problem) {
      refused.push(`${method}: ${problem.error}`);
      throw Object.assign(new Error(problem.error), { data: problem });
    }
    calls.push({ method, args, ts });
    bytes.set(ts, total);
    return { ok: true, ts };
  };
  const chat = {
    startStream: call("chat.startStream"),
    appendStream: call("chat.appendStream"),
    stopStream: call("chat.stopStream"),
  };
  /** What each stream message holds, in the order they started. */
  const messages = () => {
    const texts = new Map<string, string>();
    for (const { args, ts } of calls) {
      let text = texts.get(ts) ?? "";
      if (typeof args.markdown_text === "string") text += args.markdown_text;
      for (const c of (args.chunks ?? []) as Args[]) {
        if (c.type === "markdown_text") text += String(c.text);
      }
      texts.set(ts, text);
    }
    return [...texts.values()];
  };
  return { client: { chat } as unknown as WebClient, calls, refused, bytes, messages };
}

/** The texts Slack shows from one call: its markdown_text, its chunks' texts and step titles. */
function shownTexts(args: Args): string[] {
  const texts = typeof args.markdown_text === "string" ? [args.markdown_text] : [];
  const chunks = Array.isArray(args.chunks) ? (args.chunks as Args[]) : [];
  for (const c of chunks) {
    if (typeof c.text === "string") texts.push(c.text);
    if (typeof c.title === "string") texts.push(c.title);
  }
  return texts;
}

/** A step as the result stream reports it: the title toolStep makes of a tool call. */
const stepTitle = fc
  .record({ tool: fc.oneof(inline, fc.string({ minLength: 1, maxLength: 90 })), path: inline })
  .map(({ tool, path }) => toolStep(JSON.stringify({ tool, args: { path } })))
  .filter((t): t is string => t !== undefined);

/** Answers long enough to fill several stream messages, or none. */
const answer = fc.array(markdown, { maxLength: 8 }).map((blocks) => blocks.join("\n\n"));

/** What stream message `i` (started at `starts[i]`, ending at `end`) should hold of the finished lines `done`. */
function expectedMessage(done: string, starts: readonly number[], i: number, end: number): string {
  const from = starts[i] ?? 0;
  const open = scanFences(done.slice(0, from));
  const closing = scanFences(done.slice(0, end)).open;
  return (
    (i > 0 ? reopeningLine(open) : "") +
    asStreamed(done.slice(from, end), open) +
    (i < starts.length - 1 && closing !== undefined ? `${closing}\n` : "")
  );
}

describe("fuzz: native streaming", () => {
  fuzz(
    "NativeStream: Slack accepts every call, each message within its bytes, nothing pings, the messages are the answer",
    () =>
      fc.asyncProperty(
        answer,
        fc.array(fc.tuple(fc.nat(), fc.option(stepTitle, { nil: undefined })), { maxLength: 10 }),
        async (text, cuts) => {
          const { client, calls, refused, bytes, messages } = streamingClient();
          const starts: number[] = [];
          const stream = new NativeStream({
            writer: webClientWriter(client),
            channelId: "C0123ABCD",
            threadTs: "1700000000.000001",
            recipient: { userId: "U0123ABCD", teamId: "T0123ABCD" },
            log: pino({ level: "silent" }),
            onStarted: async (_ts, from) => void starts.push(from),
            onLeft: () => undefined,
          });
          const ends = cuts.map(([c, step]) => ({ end: c % (text.length + 1), step }));
          ends.sort((a, b) => a.end - b.end);
          for (const { end, step } of [...ends, { end: text.length, step: undefined }]) {
            if (step !== undefined) await stream.step(step);
            await stream.append(() => text.slice(0, end));
          }
          // It leaves when a line is longer than a message holds, or when Slack says no.
          const leftEarly = !stream.on;
          await stream.leave("the run ended");

          expect(refused).toEqual([]);
          for (const { method, args } of calls) {
            expect(validateStreamContent(args), method).toBeUndefined();
            for (const shown of shownTexts(args)) expect(rawMention(shown)).toBeUndefined();
          }
          for (const n of bytes.values()) expect(n).toBeLessThanOrEqual(STREAM_MESSAGE_BYTES);
          // Each message holds the answer's finished lines from where it started (all of them
          // if it never left), a code block cut between two closed and opened again.
          const done = streamablePrefix(text);
          const shown = messages();
          expect(shown).toHaveLength(starts.length);
          for (const [i, message] of shown.entries()) {
            const last = i === shown.length - 1;
            if (!last) expect(scanFences(message).open, `message ${i}`).toBeUndefined();
            if (last && leftEarly) {
              const upTo = expectedMessage(done, starts, i, done.length);
              expect(upTo.startsWith(message), `message ${i}`).toBe(true);
            } else {
              const end = starts[i + 1] ?? done.length;
              expect(message, `message ${i}`).toBe(expectedMessage(done, starts, i, end));
            }
          }
          if (!leftEarly && done !== "") expect(starts.length).toBeGreaterThan(0);
        },
      ),
  );
});
