/**
 * The thread reader on the local Slack (real WebClient, real scheduler): a long thread is read
 * page by page and its newest messages kept, authors named once each, bots by their name;
 * a refusal is told in words.
 */
import { WebClient } from "@slack/web-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SlackScheduler } from "../../src/slack/scheduler/index.ts";
import { ThreadUnreadable } from "../../src/thread-context/compose.ts";
import { slackThreadHistory } from "../../src/slack/thread-history.ts";
import { type LocalSlack, startLocalSlack } from "../../tools/local-slack/index.ts";
import { silentLogger } from "../support/silent-logger.ts";

const CHANNEL = "C0GENERAL";

describe("reading a Slack thread back", () => {
  let slack: LocalSlack;
  let scheduler: SlackScheduler;
  let history: ReturnType<typeof slackThreadHistory>;
  beforeAll(async () => {
    slack = await startLocalSlack({
      users: [
        { id: "U0ANN", name: "ann", real_name: "Ann Lee" },
        { id: "U0BOB", name: "bob" },
      ],
    });
    const client = new WebClient(slack.botToken, {
      slackApiUrl: slack.apiUrl,
      logger: silentLogger,
      rejectRateLimitedCalls: true,
      retryConfig: { retries: 0 },
    });
    scheduler = new SlackScheduler({
      budgets: { "conversations.replies": { perMinute: 6000, burst: 50 } },
    });
    history = slackThreadHistory({
      client,
      tokenFor: () => undefined,
      scheduler,
      waitMs: 1000,
    });
  });
  afterAll(async () => {
    await scheduler?.close();
    await slack?.close();
  });

  it("reads a thread of several pages and keeps its newest messages before the mention", async () => {
    const root = slack.addMessage({ channel: CHANNEL, user: "U0ANN", text: "kick-off" });
    for (let i = 1; i <= 450; i++) {
      const user = i % 2 === 0 ? "U0ANN" : "U0BOB";
      slack.addMessage({ channel: CHANNEL, user, text: `note ${i}`, thread_ts: root });
    }
    const mention = slack.addMessage({
      channel: CHANNEL,
      user: "U0ANN",
      text: "summarise",
      thread_ts: root,
    });
    slack.addMessage({ channel: CHANNEL, user: "U0BOB", text: "later", thread_ts: root });
    const before = slack.calls.length;
    const read = await history.read(
      "T0001",
      { channelId: CHANNEL, threadTs: root, beforeTs: mention },
      50,
    );
    expect(read.messages.map((m) => m.text)).toEqual(
      Array.from({ length: 50 }, (_, i) => `note ${401 + i}`),
    );
    expect(read.omitted).toBe(401);
    expect(read.messages.at(-1)?.author).toBe("ann");
    expect(read.messages.at(-2)?.author).toBe("bob");
    const calls = slack.calls.slice(before);
    expect(calls.filter((c) => c.method === "conversations.replies")).toHaveLength(3);
    expect(calls.filter((c) => c.method === "users.info")).toHaveLength(2);
  });

  it("says in words why Slack would not let it read the thread", async () => {
    slack.failNext("conversations.replies", { error: "missing_scope" });
    const root = slack.addMessage({ channel: CHANNEL, user: "U0ANN", text: "private" });
    const read = history.read("T0001", { channelId: CHANNEL, threadTs: root, beforeTs: "9e9" }, 5);
    await expect(read).rejects.toBeInstanceOf(ThreadUnreadable);
    await expect(read).rejects.toThrow("Slack said missing_scope");
  });
});
