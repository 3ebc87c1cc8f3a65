/**
 * The feedback buttons under a finished answer (Slack's `context_actions` block with
 * `feedback_buttons`): the local Slack validates the block, a click is acknowledged at once,
 * recorded for its run in the store, counted in Prometheus, and the person told privately.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SlackMessage } from "../../tools/local-slack/index.ts";
import { sendBlockAction } from "../../tools/local-slack/slack-requests.ts";
import { feedbackKey } from "../../src/feedback/feedback.ts";
import { decodeFeedbackValue } from "../../src/view/feedback.ts";
import { CHANNEL, Harness, OWNER, SIGNING_SECRET, TEAM } from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";

interface FeedbackElement {
  type: string;
  action_id: string;
  positive_button: { value: string };
  negative_button: { value: string };
}

function feedbackOf(m: SlackMessage | undefined): FeedbackElement | undefined {
  const blocks = (m?.blocks ?? []) as Array<{ type: string; elements?: FeedbackElement[] }>;
  return blocks
    .find((b) => b.type === "context_actions")
    ?.elements?.find((e) => e.type === "feedback_buttons");
}

describe.each(storeBackends())("feedback on answers with %s", (_name, redis) => {
  let h: Harness;
  let clicks = 0;
  beforeAll(async () => {
    h = await Harness.start({ redisUrl: redis });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function finishedAnswer(prompt: string): Promise<SlackMessage> {
    await h.command(prompt);
    const threadTs = await h.waitForTaskThread(prompt.replace(/ \[sim:.*$/, ""));
    const answer = (await h.waitForFinal(threadTs)).at(-1);
    if (!answer) throw new Error("no answer");
    return answer;
  }

  /** Clicks 👍 or 👎 and returns what the person was told privately. */
  async function click(answer: SlackMessage, value: string, channel = CHANNEL): Promise<string> {
    const id = `feedback${++clicks}`;
    const res = await sendBlockAction(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: OWNER,
      channel_id: channel,
      message_ts: answer.ts,
      action_id: "task_feedback",
      action_type: "feedback_buttons",
      value,
      block_id: "task_feedback",
      response_url: h.slack.responseUrl(id),
    });
    expect(res.status).toBe(200); // acknowledged (Bolt answers once the listener acks)
    const post = await h.slack.waitFor(
      () => h.slack.responseUrlPosts.find((p) => p.id === id && p.status === 200),
      { description: "the private note about the feedback" },
    );
    return JSON.stringify(post.body);
  }

  const metric = async (kind: string): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${h.app.port}/metrics`)).text();
    const m = new RegExp(`^taskbot_task_feedback_total\\{kind="${kind}"\\} (\\d+)$`, "m").exec(
      text,
    );
    return Number(m?.[1] ?? 0);
  };

  it("puts 👍 and 👎 under a finished answer, in a block the local Slack accepts", async () => {
    const answer = await finishedAnswer("Write a haiku [sim:length=120]");
    const buttons = feedbackOf(answer);
    expect(buttons?.action_id).toBe("task_feedback");
    expect(decodeFeedbackValue(buttons?.positive_button.value)?.kind).toBe("positive");
    expect(decodeFeedbackValue(buttons?.negative_button.value)?.kind).toBe("negative");
    expect(h.slack.validationErrors).toEqual([]);
  });

  it("records a click for its run, counts it, and tells the person it was taken", async () => {
    const answer = await finishedAnswer("Draft a tagline [sim:length=150]");
    const buttons = feedbackOf(answer);
    if (!buttons) throw new Error("no feedback buttons");
    const runId = decodeFeedbackValue(buttons.positive_button.value)?.ref.runId ?? "";
    const positive = await metric("positive");
    const negative = await metric("negative");

    expect(await click(answer, buttons.positive_button.value)).toContain("Thanks");
    expect(await h.app.store.getRecord(feedbackKey(TEAM, runId))).toMatchObject({
      runId,
      votes: [{ userId: OWNER, kind: "positive" }],
    });
    expect(await metric("positive")).toBe(positive + 1);

    // A change of mind replaces the vote; the same click again changes nothing.
    expect(await click(answer, buttons.negative_button.value)).toContain("Thanks");
    expect(await click(answer, buttons.negative_button.value)).toContain("already recorded");
    expect(await h.app.store.getRecord(feedbackKey(TEAM, runId))).toMatchObject({
      votes: [{ userId: OWNER, kind: "negative" }],
    });
    expect(await metric("negative")).toBe(negative + 1);
  });

  it("refuses feedback buttons copied into another channel", async () => {
    const answer = await finishedAnswer("Name a colour [sim:length=100]");
    const buttons = feedbackOf(answer);
    if (!buttons) throw new Error("no feedback buttons");
    const before = await metric("positive");
    expect(await click(answer, buttons.positive_button.value, "C0OTHER01")).toContain(
      "not valid any more",
    );
    expect(await metric("positive")).toBe(before);
  });
});
