/**
 * A mention (or a DM reply) that starts a task inside a thread that has no task takes the
 * thread along: its earlier messages with their authors' names and files, newest last, in the
 * prompt or as thread.md; the answer's note says how many were read; when Slack refuses the
 * read, the mention goes alone and the note says why.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHANNEL, Harness, OTHER, OWNER } from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";

const DM = "D0OWNERDM";

describe.each(storeBackends())("thread context with %s", (_name, redis) => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({
      redisUrl: redis,
      env: { THREAD_CONTEXT_MESSAGES: "6", THREAD_CONTEXT_WAIT_MS: "1000" },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const mention = (text: string) => `<@${h.slack.botUserId}> ${text}`;
  const createdWith = (prompt: string) =>
    h.sim.runs().find((r) => r.request?.kind === "create" && r.prompt.endsWith(prompt));
  /** Everything the answer's messages show, as one string. */
  const shown = (channel: string, threadTs: string) =>
    JSON.stringify(h.slack.thread(channel, threadTs).map((m) => m.blocks ?? []));

  it("sends the agent the thread a mention was posted in, with names and files, and says so", async () => {
    const root = h.slack.addMessage({
      channel: CHANNEL,
      user: OWNER,
      text: "We need a plan for the bakery launch &amp; a menu",
    });
    const menu = h.slack.addUserFile({ name: "menu.pdf", bytes: "%PDF-1.4 menu" });
    h.slack.addMessage({
      channel: CHANNEL,
      user: OTHER,
      text: `Budget is 5k, <@${OWNER}>. Draft attached`,
      thread_ts: root,
      files: [menu.id],
    });
    await h.say(CHANNEL, mention("summarise this thread"), { threadTs: root, mention: true });
    await h.finals(CHANNEL, root);
    const run = createdWith("summarise this thread");
    expect(run?.prompt).toBe(
      [
        "Earlier messages of the Slack thread this was asked in (oldest first):",
        "",
        "**owner**: We need a plan for the bakery launch & a menu",
        "",
        "**other**: Budget is 5k, @owner. Draft attached\n[files: menu.pdf]",
        "",
        "---",
        "",
        "summarise this thread",
      ].join("\n"),
    );
    expect(shown(CHANNEL, root)).toContain("Read 2 messages of this thread.");
    // Read through the app's budget: one page, bounded by the mention.
    const reads = h.slack.calls.filter((c) => c.method === "conversations.replies");
    expect(reads.at(-1)?.args).toMatchObject({ channel: CHANNEL, ts: root, inclusive: "false" });
  });

  it("keeps the newest messages within the limit and says how many earlier ones were left out", async () => {
    const root = h.slack.addMessage({ channel: CHANNEL, user: OWNER, text: "message 0" });
    for (let i = 1; i <= 8; i++) {
      h.slack.addMessage({ channel: CHANNEL, user: OTHER, text: `message ${i}`, thread_ts: root });
    }
    await h.say(CHANNEL, mention("what did we decide?"), { threadTs: root, mention: true });
    await h.finals(CHANNEL, root);
    const prompt = createdWith("what did we decide?")?.prompt ?? "";
    expect(prompt).toContain("… 3 earlier messages not included\n\n**other**: message 3");
    expect(prompt).not.toContain("message 2\n");
    expect(prompt).toContain("**other**: message 8\n\n---\n\nwhat did we decide?");
    expect(shown(CHANNEL, root)).toContain(
      "Read 6 messages of this thread (3 earlier not included).",
    );
  });

  it("attaches the thread as thread.md when it would not fit the 5,000-character prompt", async () => {
    const root = h.slack.addMessage({ channel: CHANNEL, user: OWNER, text: "x".repeat(1500) });
    for (let i = 1; i <= 3; i++) {
      h.slack.addMessage({
        channel: CHANNEL,
        user: OTHER,
        text: `${i} ${"y".repeat(1500)}`,
        thread_ts: root,
      });
    }
    await h.say(CHANNEL, mention("review the long thread"), { threadTs: root, mention: true });
    await h.finals(CHANNEL, root);
    const run = createdWith(
      "review the long thread\n\n(The earlier messages of the Slack thread this was asked in are attached as thread.md.)",
    );
    const files = run?.request?.files ?? [];
    expect(files.map((f) => [f.name, f.contentType])).toEqual([["thread.md", "text/markdown"]]);
    expect(files[0]?.size).toBeGreaterThan(6000);
    expect(shown(CHANNEL, root)).toContain(
      "Read 4 messages of this thread, attached as thread.md.",
    );
  });

  it("sends a DM reply's thread too", async () => {
    const root = h.slack.addMessage({ channel: DM, user: OWNER, text: "Ideas for a cake name" });
    await h.say(DM, "pick the best one", { threadTs: root });
    await h.finals(DM, root);
    expect(createdWith("pick the best one")?.prompt).toContain("**owner**: Ideas for a cake name");
    expect(shown(DM, root)).toContain("Read 1 message of this thread.");
  });

  it("sends the mention alone, and says why, when Slack refuses to read the thread", async () => {
    const root = h.slack.addMessage({ channel: CHANNEL, user: OWNER, text: "secret plans" });
    h.slack.failNext("conversations.replies", { error: "ratelimited", retryAfter: 30 });
    await h.say(CHANNEL, mention("go on without it"), { threadTs: root, mention: true });
    await h.finals(CHANNEL, root);
    expect(createdWith("go on without it")?.prompt).toBe("go on without it");
    expect(shown(CHANNEL, root)).toContain(
      "Only your message was sent: the thread's earlier messages could not be read (Slack's rate limit for reading threads).",
    );
  });

  it("reads nothing for a mention that is not in a thread", async () => {
    const before = h.slack.calls.filter((c) => c.method === "conversations.replies").length;
    const ts = await h.say(CHANNEL, mention("a fresh question"), { mention: true });
    await h.finals(CHANNEL, ts);
    expect(createdWith("a fresh question")?.prompt).toBe("a fresh question");
    expect(h.slack.calls.filter((c) => c.method === "conversations.replies")).toHaveLength(before);
  });
});

describe("thread context at one read a minute (an app outside the Marketplace)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({
      rateLimits: { "conversations.replies": 1 },
      env: { THREAD_CONTEXT_WAIT_MS: "500" },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("reads the first thread, and sends the next mention alone within the same minute", async () => {
    const first = h.slack.addMessage({ channel: CHANNEL, user: OWNER, text: "first thread" });
    await h.say(CHANNEL, `<@${h.slack.botUserId}> one`, { threadTs: first, mention: true });
    await h.finals(CHANNEL, first);
    const second = h.slack.addMessage({ channel: CHANNEL, user: OWNER, text: "second thread" });
    await h.say(CHANNEL, `<@${h.slack.botUserId}> two`, { threadTs: second, mention: true });
    await h.finals(CHANNEL, second);
    const prompts = h.sim.runs().map((r) => r.prompt);
    expect(prompts.find((p) => p.endsWith("one"))).toContain("**owner**: first thread");
    expect(prompts).toContain("two");
    // The app kept to its budget: Slack was asked once, never refused.
    const reads = h.slack.calls.filter((c) => c.method === "conversations.replies");
    expect(reads).toHaveLength(1);
    expect(JSON.stringify(h.slack.thread(CHANNEL, second).map((m) => m.blocks))).toContain(
      "(Slack's rate limit for reading threads)",
    );
  });
});
