/**
 * Native streaming on its own: an answer goes into the stream in whole lines, a stream message
 * holding at most STREAM_MESSAGE_BYTES of UTF-8 text (steps included), the answer going on in
 * the next one at a place where a message may end; no piece is one Slack would refuse.
 */
import { Buffer } from "node:buffer";
import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import { NativeStream } from "../../src/runs/answer/native-stream.ts";
import { asStreamed, STREAM_MESSAGE_BYTES } from "../../src/runs/answer/stream-parts.ts";
import type { SlackWriter, StreamStep } from "../../src/runs/ports.ts";
import { MESSAGE_MARKDOWN_LIMIT } from "../../src/view/render.ts";
import { SLACK_LIMITS } from "../../tools/local-slack/index.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { until } from "../support/until.ts";

interface Sent {
  readonly method: string;
  readonly ts: string;
  readonly markdown: string;
}

/**
 * The three stream calls, recorded as tried, each start a new message. Slack's limits are
 * enforced: 12,000 characters of markdown_text a call, and the bytes of text one streamed
 * message takes (its markdown and its steps' titles), past which it answers msg_too_long.
 */
function streamingWriter() {
  const sent: Sent[] = [];
  const steps: StreamStep[] = [];
  const bytes = new Map<string, number>();
  let starts = 0;
  const record = (
    method: string,
    ts: string,
    markdown: string,
    stepsSent?: readonly StreamStep[],
  ) => {
    sent.push({ method, ts, markdown });
    const titles = (stepsSent ?? []).reduce((n, s) => n + Buffer.byteLength(s.title), 0);
    const total = (bytes.get(ts) ?? 0) + Buffer.byteLength(markdown) + titles;
    if (markdown.length > SLACK_LIMITS.markdownTextMax) throw new Error("msg_too_long");
    if (total > SLACK_LIMITS.streamMessageBytesMax) throw new Error("msg_too_long");
    bytes.set(ts, total);
    steps.push(...(stepsSent ?? []));
  };
  const writer = {
    startStream: async (_c: string, _t: string, _r: unknown, markdown: string) => {
      const ts = `1700000000.${String(++starts).padStart(6, "0")}`;
      record("startStream", ts, markdown);
      return ts;
    },
    appendStream: async (_c: string, ts: string, markdown: string, steps?: StreamStep[]) => {
      record("appendStream", ts, markdown, steps);
    },
    stopStream: async (_c: string, ts: string) => {
      sent.push({ method: "stopStream", ts, markdown: "" });
    },
  };
  /** What each stream message holds, in the order they started. */
  const messages = () => {
    const texts = new Map<string, string>();
    for (const s of sent) texts.set(s.ts, (texts.get(s.ts) ?? "") + s.markdown);
    return [...texts.values()];
  };
  return { writer: writer as unknown as SlackWriter, sent, bytes, messages, steps };
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

/** Whether a text holds half of a surrogate pair (an emoji cut in two). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const line = `${"word ".repeat(19)}word\n`; // 100 characters

describe("native streaming", () => {
  it("marks what its run's end appends as the last, and hurries an append still waiting when the run ends", async () => {
    const { writer: base, sent } = streamingWriter();
    const order: string[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const writer = {
      ...(base as unknown as Record<string, unknown>),
      appendStream: async (
        c: string,
        ts: string,
        markdown: string,
        steps?: StreamStep[],
        last?: boolean,
      ) => {
        order.push(`append${last === true ? " last" : ""}`);
        // The first append waits for Slack's budget until the run's end hurries it.
        if (order.length === 1) await held;
        await base.appendStream(c, ts, markdown, steps);
      },
      hurryStream: (_c: string, ts: string) => {
        order.push(`hurry ${ts}`);
        release();
      },
    } as unknown as SlackWriter;
    const native = stream(writer, []);
    await native.append(() => line); // starts the stream
    void native.append(() => line + line);
    await until("the append waits for its budget", () => order.length === 1);
    const ended = native.end(line + line + line, () => ({ blocks: [] }));
    expect(await ended).toBe(true);
    const ts = sent[0]?.ts;
    expect(order).toEqual(["append", `hurry ${ts}`, "append last"]);
  });

  it("sends no piece Slack would refuse: an answer that arrives whole and long goes into as many stream messages as its bytes need", async () => {
    // Found by fuzzing: 15,000 characters at once went to chat.startStream, which Slack refuses.
    const { writer, sent, messages } = streamingWriter();
    const left: string[] = [];
    const native = stream(writer, left);
    expect(await native.append(() => line.repeat(150))).toBe(true);
    expect(native.on).toBe(true);
    // 9,000 bytes of whole lines in the first message, the rest in the next.
    expect(messages()).toEqual([line.repeat(90), line.repeat(60)]);
    expect(sent.map((s) => s.method)).toEqual(["startStream", "startStream", "stopStream"]);
    expect(left).toEqual([]);
  });

  it("shows a link's real host beside a label that names another, as edited messages do", async () => {
    const { writer, messages } = streamingWriter();
    const native = stream(writer, []);
    const answer = "Sign in at [https://sso.corp/login](https://evil.example/x) today.\n";
    expect(await native.append(() => answer)).toBe(true);
    expect(messages().join("")).toContain("(evil.example)](https://evil.example/x)");
  });

  it("leaves a link as written in a piece that goes on inside a code block", () => {
    const code = "[https://sso.corp](https://evil.example)\n```\n";
    expect(asStreamed(code, { open: "```", info: "" })).toBe(code);
    expect(asStreamed(code, undefined)).toContain("(evil.example)");
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

  it("streams whole lines into a message while its bytes fit, fills it, then goes on in the next", async () => {
    const { writer, sent, messages } = streamingWriter();
    const left: string[] = [];
    const native = stream(writer, left);
    expect(await native.append(() => line.repeat(60))).toBe(true);
    expect(await native.append(() => `${line.repeat(89)}half a li`)).toBe(true);
    expect(await native.append(() => line.repeat(101))).toBe(true);
    expect(sent.map((s) => s.method)).toEqual([
      "startStream",
      "appendStream",
      "appendStream",
      "startStream",
      "stopStream",
    ]);
    // 9,000 bytes: the one line the first message still had room for, then the rest.
    expect(messages()).toEqual([line.repeat(90), line.repeat(11)]);
    expect(left).toEqual([]);
  });

  it("counts bytes, not characters: an emoji-rich answer goes on in new messages long before 10,000 characters, no emoji cut in two", async () => {
    const { writer, bytes, messages } = streamingWriter();
    const left: string[] = [];
    const native = stream(writer, left);
    const emojiLine = (n: number) => `${n}. 🚀 Ship it ✅ — 日本語 👍🏽 ${"🎉".repeat(n % 7)}\n`;
    let answer = "";
    for (let n = 0; answer.length < 9000; n++) answer += emojiLine(n);
    // One message of it by characters, and more than Slack takes in one by bytes.
    expect(answer.length).toBeLessThan(MESSAGE_MARKDOWN_LIMIT);
    expect(Buffer.byteLength(answer)).toBeGreaterThan(SLACK_LIMITS.streamMessageBytesMax);
    // Deltas of 37 code units cut through emoji (surrogate pairs) and lines alike.
    for (let end = 37; end < answer.length; end += 37) {
      await native.append(() => answer.slice(0, end));
    }
    expect(await native.end(answer, () => ({ blocks: [] }))).toBe(true);
    expect(left).toEqual(["left"]); // the end, and no refusal before it
    expect(messages().join("")).toBe(answer);
    expect(messages().length).toBeGreaterThanOrEqual(2);
    for (const [i, text] of messages().entries()) {
      expect(text, `message ${i}`).not.toMatch(LONE_SURROGATE);
      expect(text.endsWith("\n")).toBe(true);
    }
    for (const n of bytes.values()) expect(n).toBeLessThanOrEqual(STREAM_MESSAGE_BYTES);
  });

  it("cuts a code block longer than a message at a line, closing it at the end of one message and opening it again in the next", async () => {
    const { writer, bytes, messages } = streamingWriter();
    const native = stream(writer, []);
    const code = Array.from({ length: 400 }, (_, n) => `const v${n} = "値"; // 🚀\n`).join("");
    const answer = `Intro\n\n\`\`\`ts\n${code}\`\`\`\n\nAfter the code.\n`;
    for (let end = 500; end < answer.length; end += 500) {
      await native.append(() => answer.slice(0, end));
    }
    expect(await native.end(answer, () => ({ blocks: [] }))).toBe(true);
    const parts = messages();
    expect(parts.length).toBeGreaterThanOrEqual(2);
    for (const [i, text] of parts.entries()) {
      // Each message shows whole code blocks: every fence it opens it closes.
      expect(text.match(/^```/gm)?.length ?? 0, `message ${i}`).toSatisfy(
        (n: number) => n % 2 === 0,
      );
      if (i > 0) expect(text.startsWith("```ts\n")).toBe(true);
      if (i < parts.length - 1) expect(text.endsWith("```\n")).toBe(true);
    }
    // Without the lines that close and reopen the block at each cut, the answer as it was.
    const seams = parts.map((t, i) => (i > 0 ? t.slice("```ts\n".length) : t));
    const joined = seams.map((t, i) => (i < parts.length - 1 ? t.slice(0, -"```\n".length) : t));
    expect(joined.join("")).toBe(answer);
    for (const n of bytes.values()) expect(n).toBeLessThanOrEqual(STREAM_MESSAGE_BYTES);
  });

  it("counts the agent's steps toward a message's bytes", async () => {
    const { writer, bytes, messages, steps } = streamingWriter();
    const left: string[] = [];
    const native = stream(writer, left);
    let text = "";
    for (let i = 0; i < 30; i++) {
      // 80 characters: a tool step's title at its longest, of 3 bytes each.
      await native.step(`${"日本語の手順".repeat(13)}${String(i).padStart(2, "0")}`);
      text += `${line}${line}`;
      await native.append(() => text);
    }
    expect(await native.end(text, () => ({ blocks: [] }))).toBe(true);
    expect(left).toEqual(["left"]);
    expect(messages().join("")).toBe(text);
    expect(messages().length).toBeGreaterThanOrEqual(2);
    for (const n of bytes.values()) expect(n).toBeLessThanOrEqual(STREAM_MESSAGE_BYTES);
    expect(steps.at(-1)).toMatchObject({ id: "step-30", status: "in_progress" });
  });

  it("rotates by time only where no code block is open", async () => {
    const { writer, messages } = streamingWriter();
    const clock = new FakeClock();
    const native = new NativeStream({
      writer,
      channelId: "C1",
      threadTs: "1700000000.000100",
      recipient: { userId: "U1", teamId: "T1" },
      log: pino({ level: "silent" }),
      onStarted: async () => undefined,
      onLeft: () => undefined,
      rotateMs: 1000,
      clock,
    });
    let text = "Intro\n```ts\nconst a = 1;\n";
    await native.append(() => text);
    await clock.advance(1000, async () => undefined);
    text += "const b = 2;\n```\n";
    await native.append(() => text);
    expect(messages()).toHaveLength(1);
    text += "After\n";
    await native.append(() => text);
    expect(messages()).toEqual(["Intro\n```ts\nconst a = 1;\nconst b = 2;\n```\n", "After\n"]);
  });
});
