/**
 * Reaching the agent the way people reach one in Slack: by mentioning it in a channel, by
 * direct message (where Slack's agent view lives), with inline options. Bolt runs unmodified
 * against the local Slack and the simulator, on the embedded store and on Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendEvent } from "../../tools/local-slack/slack-requests.ts";
import {
  CHANNEL,
  comparable,
  Harness,
  markdownOf,
  OWNER,
  SIGNING_SECRET,
  statusOf,
  TEAM,
} from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";

const DM = "D0OWNERDM";
const FINAL = /Completed|Failed|Stopped/;
let seq = 0;

describe.each(storeBackends())("mentions and DMs with %s", (_name, redis) => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ redisUrl: redis });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("answers a mention in a thread under it, once, although Slack sends it twice", async () => {
    const prompt = "Build a landing page for a bakery";
    const ts = await h.say(CHANNEL, `<@${h.slack.botUserId}> ${prompt}`, { mention: true });
    const [answer] = await h.finals(CHANNEL, ts);
    const runs = h.sim.runs().filter((r) => r.prompt === prompt);
    expect(runs).toHaveLength(1);
    expect(comparable(markdownOf(answer ?? { channel: "", ts: "", user: "", text: "" }))).toBe(
      comparable(runs[0]?.content ?? "x"),
    );
    // The bot did not repeat the prompt as a new channel message: the mention is the thread.
    const botTopLevel = h.slack
      .messages(CHANNEL)
      .filter(
        (m) => m.user === h.slack.botUserId && JSON.stringify(m.blocks ?? []).includes(prompt),
      );
    expect(botTopLevel).toEqual([]);
  });

  it("takes a mention inside the task's thread as a follow-up", async () => {
    const root = await h.say(CHANNEL, `<@${h.slack.botUserId}> Write a haiku about bread`, {
      mention: true,
    });
    await h.finals(CHANNEL, root);
    await h.say(CHANNEL, `<@${h.slack.botUserId}> now one about cheese`, {
      mention: true,
      threadTs: root,
    });
    await h.finals(CHANNEL, root, 2);
    expect(h.sim.runs().some((r) => r.prompt === "now one about cheese")).toBe(true);
  });

  it("answers a mention with nothing but the bot's name with the usage, privately, in the channel", async () => {
    const before = h.slack.calls.length;
    await h.say(CHANNEL, `<@${h.slack.botUserId}>`, { mention: true, message: false });
    const call = await h.slack.waitForCall((c) => c.method === "chat.postEphemeral", {
      fromIndex: before,
    });
    expect(JSON.stringify(call.args)).toContain("Usage");
    // Not under the mention: Slack shows an ephemeral in a thread only when the thread already
    // has replies (chat.postEphemeral's thread_ts), and the mention has none.
    expect(call.args.thread_ts).toBeUndefined();
  });

  it("starts a task from a direct message and continues it from a reply in its thread", async () => {
    const ts = await h.say(DM, "Draft a poster for the summer fair");
    await h.finals(DM, ts);
    await h.say(DM, "Make the title bigger", { threadTs: ts });
    const answers = await h.finals(DM, ts, 2);
    expect(answers.filter((m) => FINAL.test(statusOf(m)))).toHaveLength(2);
    const poster = h.sim.runs().find((r) => r.prompt === "Draft a poster for the summer fair");
    expect(poster?.status).toBe("completed");
  });

  it("marks the DM's agent session processing while a run works (Slack's own Stop), then active", async () => {
    const ts = await h.say(DM, "Plan a picnic for twelve\nwith games");
    await h.finals(DM, ts);
    const statuses = h.slack.sessionStatuses().filter((s) => s.thread_ts === ts);
    expect(statuses.map((s) => s.status)).toEqual(["processing", "active"]);
    expect(statuses[0]?.title).toBe("Plan a picnic for twelve");
    expect(h.slack.threadTitle(DM, ts)).toBe("Plan a picnic for twelve");
  });

  it("goes on without agent sessions where Slack does not have them", async () => {
    h.slack.failNext("agents.sessions.setStatus", { error: "unknown_method", times: 1 });
    const ts = await h.say(DM, "Name three rivers");
    const answers = await h.finals(DM, ts);
    expect(statusOf(answers.at(-1) ?? { channel: "", ts: "", user: "", text: "" })).toMatch(
      /Completed/,
    );
    // Once Slack said the method is unknown, the app stops asking.
    await h.say(DM, "And three lakes", { threadTs: ts });
    await h.finals(DM, ts, 2);
    expect(h.slack.sessionStatuses().filter((s) => s.thread_ts === ts)).toEqual([]);
  });

  it("shows the agent view's status while a DM task works, and clears it when it ends", async () => {
    const ts = await h.say(DM, "Sketch a poster for the book fair");
    await h.finals(DM, ts);
    const statuses = h.slack.assistantStatuses.filter((st) => st.thread_ts === ts);
    expect(statuses[0]?.status).toBe("is working on your task…");
    expect(statuses[0]?.loading_messages?.length).toBeGreaterThan(0);
    expect(statuses.at(-1)?.status).toBe("");
  });

  it("stops the run when Slack's own Stop is pressed in the agent view", async () => {
    const ts = await h.say(DM, "Write a long story [sim:length=4000] [sim:delay=40]");
    await h.slack.waitFor(() => h.slack.thread(DM, ts).find((m) => m.user === h.slack.botUserId), {
      description: "the working message",
    });
    await h.slack.waitFor(
      () => h.sim.runs().find((r) => r.prompt.startsWith("Write a long story")),
      {
        description: "the run on the service",
      },
    );
    const res = await sendEvent(h.eventsUrl, SIGNING_SECRET, {
      event_id: `EvStop${++seq}`,
      team_id: TEAM,
      event: {
        type: "agent_session_stopped",
        channel: DM,
        user: OWNER,
        thread_ts: ts,
        streaming_message_ts: [],
        event_ts: ts,
      },
    });
    expect(res.status).toBe(200);
    const [answer] = await h.finals(DM, ts);
    expect(statusOf(answer ?? { channel: "", ts: "", user: "", text: "" })).toMatch(
      new RegExp(`Stopped by <@${OWNER}>`),
    );
  });

  it("ignores messages from other bots and edits in a DM", async () => {
    const before = h.sim.runs().length;
    const ts = h.slack.addMessage({ channel: DM, user: OWNER, text: "edited" });
    for (const event of [
      { type: "message", channel: DM, channel_type: "im", bot_id: "B0OTHER", text: "hi", ts },
      { type: "message", subtype: "message_changed", channel: DM, channel_type: "im", ts },
    ]) {
      await sendEvent(h.eventsUrl, SIGNING_SECRET, {
        event_id: `EvI${++seq}`,
        team_id: TEAM,
        event,
      });
    }
    await h.settled();
    expect(h.sim.runs().length).toBe(before);
  });

  it("sends inline options with the task, and refuses a misspelled one privately", async () => {
    await h.command("[model=sim-large, effort=high, thinking] Plan a menu");
    const threadTs = await h.waitForTaskThread("Plan a menu");
    await h.waitForFinal(threadTs);
    const run = h.sim.runs().find((r) => r.prompt === "Plan a menu");
    expect(run?.request).toMatchObject({
      modelName: "sim-large",
      reasoningEffort: "high",
      enableThinking: true,
    });
    const res = await h.command("[modle=x] Plan a menu");
    expect(JSON.stringify(res.body)).toContain("Did you mean `model`?");
  });
});
