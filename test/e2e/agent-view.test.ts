/**
 * Slack's agent view: opening the app's Messages tab sets the suggested prompts
 * (TASK_SUGGESTED_PROMPTS, else the defaults), the Home tab does not, and
 * `app_context_changed` is accepted quietly (answered, nothing called, nothing logged).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SUGGESTED_PROMPTS } from "../../src/config/prompts.ts";
import { sendAppHomeOpened } from "../../tools/local-slack/home-requests.ts";
import { sendEvent } from "../../tools/local-slack/slack-requests.ts";
import { CHANNEL, Harness, OWNER, SIGNING_SECRET, TEAM } from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";

const OWN_PROMPTS = [
  { title: "Landing page", message: "Build a landing page for our spring sale" },
  { title: "Slides", message: "Make a five-slide deck about our quarter" },
];

describe.each(storeBackends())("the agent view with %s", (_name, redis) => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ redisUrl: redis });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function openMessages(app: Harness, user: string) {
    const before = app.slack.suggestedPrompts().length;
    const res = await sendAppHomeOpened(app.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: user,
      tab: "messages",
    });
    expect(res.status).toBe(200);
    return app.slack.waitFor(() => app.slack.suggestedPrompts()[before], {
      description: "the suggested prompts of the agent view",
    });
  }

  it("suggests what the service does best when a person opens the agent view", async () => {
    const set = await openMessages(h, OWNER);
    expect(set.channel).toBe(`D${OWNER.slice(1)}`);
    expect(set.prompts).toEqual(DEFAULT_SUGGESTED_PROMPTS);
    expect(set.thread_ts).toBeUndefined();
    expect(h.slack.validationErrors).toEqual([]);
  });

  it("suggests the prompts TASK_SUGGESTED_PROMPTS names", async () => {
    const own = await Harness.start({
      redisUrl: redis,
      env: { TASK_SUGGESTED_PROMPTS: JSON.stringify(OWN_PROMPTS) },
    });
    try {
      expect((await openMessages(own, OWNER)).prompts).toEqual(OWN_PROMPTS);
    } finally {
      await own.close();
    }
  });

  it("sets no prompts when the Home tab opens", async () => {
    const before = h.slack.suggestedPrompts().length;
    await sendAppHomeOpened(h.eventsUrl, SIGNING_SECRET, { team_id: TEAM, user_id: OWNER });
    await h.slack.waitFor(() => h.slack.homeTabs(OWNER).at(-1), { description: "the Home tab" });
    expect(h.slack.suggestedPrompts().length).toBe(before);
  });

  it("accepts app_context_changed quietly: answered, no Slack call, no warning", async () => {
    const calls = h.slack.calls.length;
    const lines = h.logLines.length;
    const res = await sendEvent(h.eventsUrl, SIGNING_SECRET, {
      event_id: `EvCtx${Date.now()}`,
      team_id: TEAM,
      event: {
        type: "app_context_changed",
        user: OWNER,
        context: { type: "channel", channel_id: CHANNEL },
      },
    });
    expect(res.status).toBe(200);
    await h.settled();
    expect(h.slack.calls.length).toBe(calls);
    const loud = h.logLines
      .slice(lines)
      .map((l) => JSON.parse(l) as { level: number; msg: string })
      .filter((l) => l.level >= 40);
    expect(loud).toEqual([]);
  });
});
