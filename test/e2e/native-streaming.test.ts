import { Buffer } from "node:buffer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STREAM_MESSAGE_BYTES } from "../../src/runs/answer/stream-parts.ts";
import { scanFences } from "../../src/view/markdown-scan.ts";
import { SLACK_LIMITS, streamedTextBytes } from "../../tools/local-slack/index.ts";
import {
  CHANNEL,
  comparable,
  Harness,
  markdownOf,
  NO_MESSAGE,
  OWNER,
  statusOf,
} from "../support/harness.ts";

describe("native Slack streaming (SLACK_STREAMING=native)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ streaming: "native" });
  });
  afterAll(async () => {
    await h?.close();
  });

  const runOf = (label: string) => h.sim.runs().find((r) => r.promptText.includes(label));

  it("streams with start/append/stop to the asker, then shows the final text, status and files in that message", async () => {
    const from = h.slack.calls.length;
    await h.command("Native answer [sim:delay=15] [sim:length=2500] [sim:files=2]");
    const threadTs = await h.waitForTaskThread("Native answer");
    const replies = await h.waitForFinal(threadTs);
    const calls = h.slack.calls.slice(from);
    const start = calls.find((c) => c.method === "chat.startStream");
    expect(start?.args).toMatchObject({
      channel: CHANNEL,
      thread_ts: threadTs,
      recipient_user_id: OWNER,
      recipient_team_id: "T0001",
    });
    expect(calls.filter((c) => c.method === "chat.appendStream").length).toBeGreaterThanOrEqual(2);
    expect(calls.filter((c) => c.method === "chat.stopStream")).toHaveLength(1);
    // One answer message: the stream message, now complete; the working message is gone.
    expect(replies).toHaveLength(1);
    expect(replies[0]?.ts).toBe(start?.response.ts);
    expect(comparable(markdownOf(replies[0] ?? NO_MESSAGE))).toBe(
      comparable(runOf("Native answer")?.content ?? "x"),
    );
    expect(statusOf(replies[0] ?? NO_MESSAGE)).toMatch(/Completed in/);
    expect(h.slack.files().filter((f) => f.thread_ts === threadTs && f.completed)).toHaveLength(2);
    // Append-only: every appended piece was whole lines (nothing that would have to change).
    for (const c of calls.filter((x) => x.method === "chat.appendStream")) {
      expect(String(c.args.markdown_text).endsWith("\n")).toBe(true);
    }
    expect(h.slack.validationErrors).toEqual([]);
  });

  it("shows the agent's tool steps as Slack task updates in one plan, never as raw JSON", async () => {
    const from = h.slack.calls.length;
    await h.command("Native steps [sim:delay=20] [sim:length=2500] [sim:toolnoise]");
    const threadTs = await h.waitForTaskThread("Native steps");
    await h.waitForFinal(threadTs);
    // SLACK_TASK_DISPLAY's default: the steps show as one plan block above the answer.
    const starts = h.slack.calls.slice(from).filter((c) => c.method === "chat.startStream");
    expect(starts.map((c) => c.args.task_display_mode)).toEqual(starts.map(() => "plan"));
    const appends = h.slack.calls.slice(from).filter((c) => c.method === "chat.appendStream");
    const updates = appends.flatMap((c) =>
      Array.isArray(c.args.chunks)
        ? (c.args.chunks as Array<Record<string, unknown>>).filter((k) => k.type === "task_update")
        : [],
    );
    expect(updates).toContainEqual({
      type: "task_update",
      id: "step-1",
      title: "str_replace index.html",
      status: "in_progress",
    });
    expect(JSON.stringify(h.slack.calls.slice(from))).not.toContain('\\"tool\\"');
    expect(h.slack.validationErrors).toEqual([]);
  });

  it("falls back to editing the same message when Slack ends the stream", async () => {
    await h.command("Expiring stream [sim:delay=20] [sim:length=3000]");
    const threadTs = await h.waitForTaskThread("Expiring stream");
    const started = await h.slack.waitForCall(
      (c) => c.method === "chat.startStream" && c.args.thread_ts === threadTs,
    );
    const ts = String(started.response.ts);
    h.slack.expireStream(CHANNEL, ts);
    const replies = await h.waitForFinal(threadTs);
    expect(replies.map((r) => r.ts)).toEqual([ts]);
    expect(comparable(markdownOf(replies[0] ?? NO_MESSAGE))).toBe(
      comparable(runOf("Expiring stream")?.content ?? "x"),
    );
    const refused = h.slack.calls.filter(
      (c) => c.method === "chat.appendStream" && c.args.ts === ts && c.response.ok === false,
    );
    expect(refused[0]?.response.error).toBe("message_not_in_streaming_state");
    expect(h.slack.calls.some((c) => c.method === "chat.update" && c.args.ts === ts)).toBe(true);
  });

  it("falls back to editing the working message when Slack refuses to start a stream", async () => {
    h.slack.failNext("chat.startStream", { error: "not_allowed_token_type" });
    await h.command("Refused stream [sim:delay=10] [sim:length=1200]");
    const threadTs = await h.waitForTaskThread("Refused stream");
    const replies = await h.waitForFinal(threadTs);
    expect(replies).toHaveLength(1);
    expect(comparable(markdownOf(replies[0] ?? NO_MESSAGE))).toBe(
      comparable(runOf("Refused stream")?.content ?? "x"),
    );
    expect(statusOf(replies[0] ?? NO_MESSAGE)).toMatch(/Completed in/);
  });
});

describe("a Japanese answer, natively streamed (SLACK_STREAMING=native)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({
      streaming: "native",
      // This story is about bytes, not Tier 2: the parts' stops need not wait a minute.
      rateLimits: { "chat.startStream": 600, "chat.stopStream": 600 },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("goes on in new stream messages before Slack's byte ceiling: 30,000 characters, every one shown, no msg_too_long", async () => {
    const label = "Japanese answer";
    const from = h.slack.calls.length;
    await h.command(`${label} [sim:lang=ja] [sim:length=30200] [sim:delay=10] [sim:chunk=60]`);
    const threadTs = await h.waitForTaskThread(label);
    await h.waitForFinal(threadTs, 1, 60_000);
    // Every message of the answer: streamed parts have no blocks, the last has its status.
    const replies = h.slack
      .thread(CHANNEL, threadTs)
      .filter((m) => m.ts !== threadTs && m.user === h.slack.botUserId);
    const content = h.sim.runs().find((r) => r.promptText.includes(label))?.content ?? "";
    // Japanese: 30,000 characters, most of them three bytes in UTF-8 (spaces, digits and
    // Markdown's marks one).
    expect(content.length).toBeGreaterThanOrEqual(30_000);
    expect(Buffer.byteLength(content)).toBeGreaterThan(2 * content.length);

    const calls = h.slack.calls.slice(from);
    expect(calls.filter((c) => c.response.error === "msg_too_long")).toEqual([]);
    expect(h.slack.validationErrors).toEqual([]);
    // The answer is its stream messages, in order: each streamed, stopped, never edited.
    const starts = calls.filter(
      (c) => c.method === "chat.startStream" && c.args.thread_ts === threadTs,
    );
    expect(starts.length).toBeGreaterThanOrEqual(3);
    expect(replies.map((m) => m.ts)).toEqual(starts.map((c) => c.response.ts));
    const parts = new Set(replies.map((m) => m.ts));
    expect(calls.filter((c) => c.method === "chat.update" && parts.has(String(c.args.ts)))).toEqual(
      [],
    );
    for (const part of replies) {
      expect(part.streaming_state).toBe("completed");
      // Within the app's budget of bytes, and no code block left open for the next one.
      const sent = calls.filter(
        (c) => c.method.endsWith("Stream") && (c.response.ts ?? c.args.ts) === part.ts,
      );
      const bytes = sent.reduce((n, c) => n + streamedTextBytes(c.args), 0);
      expect(bytes).toBeLessThanOrEqual(STREAM_MESSAGE_BYTES);
      expect(bytes).toBeLessThan(SLACK_LIMITS.streamMessageBytesMax);
      expect(scanFences(part.text).open).toBeUndefined();
    }
    // Every character, in order (the lines that close and reopen a code block cut aside).
    expect(comparable(replies.map((m) => m.text).join(""))).toBe(comparable(content));
    expect(statusOf(replies.at(-1) ?? NO_MESSAGE)).toMatch(/Completed in/);
  }, 90_000);
});
