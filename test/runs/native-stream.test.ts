/**
 * Native streaming on its own: an answer goes into the stream in whole lines while it fits one
 * message, and the run goes back to editing messages before a piece Slack would refuse.
 */
import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import { NativeStream } from "../../src/runs/answer/native-stream.ts";
import type { SlackWriter } from "../../src/runs/ports.ts";
import { MESSAGE_MARKDOWN_LIMIT } from "../../src/view/render.ts";
import { SLACK_LIMITS } from "../../tools/local-slack/index.ts";

/** The three stream calls, recorded as tried; Slack's 12,000 characters of markdown_text enforced. */
function streamingWriter() {
  const sent: { method: string; markdown: string }[] = [];
  const record = (method: string, markdown: string) => {
    sent.push({ method, markdown });
    if (markdown.length > SLACK_LIMITS.markdownTextMax) throw new Error("msg_too_long");
  };
  const writer = {
    startStream: async (_c: string, _t: string, _r: unknown, markdown: string) => {
      record("startStream", markdown);
      return "1700000000.000200";
    },
    appendStream: async (_c: string, _ts: string, markdown: string) => {
      record("appendStream", markdown);
    },
    stopStream: async () => {
      sent.push({ method: "stopStream", markdown: "" });
    },
  };
  return { writer: writer as unknown as SlackWriter, sent };
}

function stream(writer: SlackWriter, left: string[]) {
  return new NativeStream({
    writer,
    channelId: "C1",
    threadTs: "1700000000.000100",
    recipient: { userId: "U1", teamId: "T1" },
    log: pino({ level: "silent" }),
    onStarted: async () => undefined,
    onLeft: () => left.push("left"),
  });
}

const line = `${"word ".repeat(19)}word\n`; // 100 characters

describe("native streaming", () => {
  it("sends no piece Slack would refuse: an answer that arrives whole and long is edited in instead", async () => {
    // Found by fuzzing: 15,000 characters at once went to chat.startStream, which Slack refuses.
    const { writer, sent } = streamingWriter();
    const left: string[] = [];
    const native = stream(writer, left);
    expect(await native.append(() => line.repeat(150))).toBe(false);
    expect(native.on).toBe(false);
    await vi.waitFor(() => expect(left).toEqual(["left"]));
    expect(sent).toEqual([]);
  });

  it("reads the answer once per append sent, however many deltas arrive while one waits", async () => {
    const { writer, sent } = streamingWriter();
    let release = () => {};
    const slow = {
      ...writer,
      appendStream: async (c: string, ts: string, markdown: string) => {
        await new Promise<void>((r) => (release = r));
        await writer.appendStream(c, ts, markdown, []);
      },
    } as unknown as SlackWriter;
    const native = stream(slow, []);
    let text = line;
    let reads = 0;
    const latest = () => {
      reads++;
      return text;
    };
    expect(await native.append(latest)).toBe(true); // starts the stream
    text += line;
    const first = native.append(latest); // waits for Slack
    await vi.waitFor(() => expect(reads).toBe(2));
    const results: Promise<boolean>[] = [];
    for (let i = 0; i < 50; i++) {
      text += line;
      results.push(native.append(latest));
    }
    release();
    await first;
    await vi.waitFor(() => expect(reads).toBe(3));
    release();
    expect((await Promise.all(results)).filter(Boolean)).toHaveLength(1);
    expect(reads).toBe(3); // the start, the append that waited, and one for all 50 deltas
    expect(sent.map((s) => s.method)).toEqual(["startStream", "appendStream", "appendStream"]);
  });

  it("streams whole lines while they fit one message, then leaves before passing it", async () => {
    const { writer, sent } = streamingWriter();
    const left: string[] = [];
    const native = stream(writer, left);
    expect(await native.append(() => line.repeat(60))).toBe(true);
    expect(await native.append(() => `${line.repeat(99)}half a li`)).toBe(true);
    expect(await native.append(() => line.repeat(101))).toBe(false);
    await vi.waitFor(() => expect(left).toEqual(["left"]));
    expect(sent.map((s) => s.method)).toEqual(["startStream", "appendStream", "stopStream"]);
    expect(sent.map((s) => s.markdown).join("")).toBe(line.repeat(99));
    expect(sent.map((s) => s.markdown).join("").length).toBeLessThanOrEqual(MESSAGE_MARKDOWN_LIMIT);
  });
});
