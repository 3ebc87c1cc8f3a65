/**
 * Fuzzing Slack's native streaming (chat.startStream / appendStream / stopStream): an answer
 * that grows in pieces of any size, with agent steps between them, goes through NativeStream
 * and the real WebClient writer; every call is one Slack accepts (oracle: tools/local-slack's
 * validateStreamContent, what its chat-stream methods check), nothing pings, and the stream
 * holds the answer's finished lines.
 */
import type { WebClient } from "@slack/web-api";
import fc from "fast-check";
import { pino } from "pino";
import { describe, expect } from "vitest";
import { validateStreamContent } from "../../tools/local-slack/index.ts";
import { NativeStream } from "../../src/runs/answer/native-stream.ts";
import { toolStep } from "../../src/service/stream.ts";
import { webClientWriter } from "../../src/slack/web-writer.ts";
import { streamablePrefix } from "../../src/view/markdown.ts";
import { neutralizeMentions } from "../../src/view/sanitize.ts";
import { inline, markdown, rawMention } from "./arbitraries.ts";
import { fuzz } from "./fuzz.ts";

type Args = Record<string, unknown>;

/** The three chat methods of a WebClient, answering like Slack and keeping what was sent. */
function streamingClient() {
  const calls: { method: string; args: Args }[] = [];
  const call = (method: string) => async (args: Args) => {
    calls.push({ method, args });
    const problem = validateStreamContent(args);
    // As WebClient rejects on `ok: false`; NativeStream then goes back to editing messages.
    if (problem) throw Object.assign(new Error(problem.error), { data: problem });
    return { ok: true, ts: "1700000000.000100" };
  };
  const chat = {
    startStream: call("chat.startStream"),
    appendStream: call("chat.appendStream"),
    stopStream: call("chat.stopStream"),
  };
  return { client: { chat } as unknown as WebClient, calls };
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

describe("fuzz: native streaming", () => {
  fuzz("NativeStream: Slack accepts every call, nothing pings, the stream is the answer", () =>
    fc.asyncProperty(
      markdown,
      fc.array(fc.tuple(fc.nat(), fc.option(stepTitle, { nil: undefined })), { maxLength: 10 }),
      async (text, cuts) => {
        const { client, calls } = streamingClient();
        const stream = new NativeStream({
          writer: webClientWriter(client),
          channelId: "C0123ABCD",
          threadTs: "1700000000.000001",
          recipient: { userId: "U0123ABCD", teamId: "T0123ABCD" },
          log: pino({ level: "silent" }),
          onStarted: async () => undefined,
          onLeft: () => undefined,
        });
        const ends = cuts.map(([c, step]) => ({ end: c % (text.length + 1), step }));
        ends.sort((a, b) => a.end - b.end);
        for (const { end, step } of [...ends, { end: text.length, step: undefined }]) {
          if (step !== undefined) await stream.step(step);
          await stream.append(() => text.slice(0, end));
        }
        // It leaves when the answer outgrows one message, or when Slack says no.
        const leftEarly = !stream.on;
        await stream.leave("the run ended");

        const sent: string[] = [];
        for (const { method, args } of calls) {
          expect(validateStreamContent(args), method).toBeUndefined();
          for (const shown of shownTexts(args)) expect(rawMention(shown)).toBeUndefined();
          if (typeof args.markdown_text === "string") sent.push(args.markdown_text);
          for (const c of (args.chunks ?? []) as Args[]) {
            if (c.type === "markdown_text") sent.push(String(c.text));
          }
        }
        // What the stream holds is the answer's finished lines (all of them if it never left).
        const streamed = sent.join("");
        const finished = neutralizeMentions(streamablePrefix(text));
        if (leftEarly) expect(finished.startsWith(streamed)).toBe(true);
        else expect(streamed).toBe(finished);
      },
    ),
  );
});
