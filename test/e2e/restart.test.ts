import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { comparable, Harness, markdownOf, NO_MESSAGE, statusOf } from "../support/harness.ts";

describe("restart with the embedded store", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start();
  });
  afterAll(async () => {
    await h?.close();
  });

  it("continues an old thread after the bot restarts", async () => {
    await h.command("Plan a garden [sim:length=300]");
    const threadTs = await h.waitForTaskThread("Plan a garden");
    await h.waitForFinal(threadTs);
    await h.restartApp();
    await h.reply(threadTs, "Add a vegetable patch [sim:length=200]");
    const replies = await h.waitForFinal(threadTs, 2);
    const followUp = h.sim
      .runs()
      .find((r) => r.followUp && r.promptText.includes("vegetable patch"));
    const first = h.sim.runs().find((r) => r.promptText.includes("Plan a garden"));
    expect(followUp?.threadId).toBe(first?.threadId);
    expect(comparable(markdownOf(replies.at(-1) ?? NO_MESSAGE))).toBe(
      comparable(followUp?.content ?? "x"),
    );
  });

  it("picks up a run that was still going when the bot stopped, when the thread is next used", async () => {
    await h.command("Write a long report [sim:delay=15] [sim:length=3000]");
    const threadTs = await h.waitForTaskThread("Write a long report");
    await h.slack.waitFor(() => h.botReplies(threadTs).find((m) => markdownOf(m).length > 100), {
      description: "streaming started",
    });
    await h.restartApp();
    // The thread still has a run in progress: a reply is queued behind it, the run finishes in
    // the same message, then the reply is sent.
    await h.reply(threadTs, "Then summarise it [sim:length=150]");
    const replies = await h.waitForFinal(threadTs, 2, 30_000);
    const run = h.sim.runs().find((r) => r.promptText.includes("long report"));
    expect(replies).toHaveLength(2);
    expect(comparable(markdownOf(replies[0] ?? NO_MESSAGE))).toBe(comparable(run?.content ?? "x"));
    expect(statusOf(replies[0] ?? NO_MESSAGE)).toMatch(/Completed/);
    expect(statusOf(replies[1] ?? NO_MESSAGE)).toMatch(/Completed/);
  });
});
