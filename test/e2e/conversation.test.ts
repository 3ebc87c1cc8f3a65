import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN,
  CHANNEL,
  comparable,
  Harness,
  markdownOf,
  OTHER,
  OWNER,
  SIGNING_SECRET,
  statusOf,
  stopButton,
  TEAM,
} from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";
import { sendBlockAction } from "../../tools/local-slack/slack-requests.ts";

const stores = storeBackends();

describe.each(stores)("follow-ups and Stop with %s", (_name, redis) => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ redisUrl: redis });
  });
  afterAll(async () => {
    await h?.close();
  });

  /** Waits until the thread's running message shows some streamed text and a Stop button. */
  async function streaming(threadTs: string) {
    return h.slack.waitFor(
      () => h.botReplies(threadTs).find((m) => stopButton(m) && markdownOf(m).length > 40),
      { description: "a streaming message with a Stop button" },
    );
  }

  it("queues replies that arrive during a run, shows they are queued, and sends them in order afterwards", async () => {
    await h.command("Plan a product launch [sim:delay=20] [sim:length=1500]");
    const threadTs = await h.waitForTaskThread("Plan a product launch");
    await streaming(threadTs);
    const first = await h.reply(threadTs, "First follow-up: add a budget [sim:length=200]");
    const second = await h.reply(threadTs, "Second follow-up: add a timeline [sim:length=200]", {
      user: OTHER,
    });
    const queuedNote = (user: string) =>
      h.slack
        .ephemerals(CHANNEL, user)
        .some((e) => e.thread_ts === threadTs && /queued/.test(e.text));
    await h.slack.waitFor(
      () =>
        [first.ts, second.ts].every((ts) =>
          h.slack.reactions(CHANNEL, ts).some((r) => r.name === "hourglass_flowing_sand"),
        ) &&
        queuedNote(OWNER) &&
        queuedNote(OTHER),
      { description: "both replies marked as queued, and both people told" },
    );

    const replies = await h.waitForFinal(threadTs, 3);
    const runs = h.sim
      .runs()
      .filter(
        (r) =>
          r.threadId ===
          h.sim.runs().find((x) => x.promptText.includes("product launch"))?.threadId,
      );
    expect(runs.map((r) => r.promptText.trim())).toEqual([
      expect.stringContaining("Plan a product launch"),
      expect.stringContaining("First follow-up"),
      expect.stringContaining("Second follow-up"),
    ]);
    expect(runs.every((r) => r.status === "completed")).toBe(true);
    expect(replies.filter((m) => /Completed in/.test(statusOf(m)))).toHaveLength(3);
    // Once sent, the queued marker is gone.
    expect(h.slack.reactions(CHANNEL, first.ts)).toEqual([]);
  });

  it("handles an event Slack delivers three times exactly once", async () => {
    await h.command("Draft an email [sim:length=300]");
    const threadTs = await h.waitForTaskThread("Draft an email");
    await h.waitForFinal(threadTs);
    const eventId = `EvThrice${Date.now()}`;
    const sent = await h.reply(threadTs, "Make it shorter [sim:length=100]", {
      eventId,
    });
    await h.reply(threadTs, "Make it shorter [sim:length=100]", {
      eventId,
      ts: sent.ts,
      retryNum: 1,
    });
    await h.reply(threadTs, "Make it shorter [sim:length=100]", {
      eventId,
      ts: sent.ts,
      retryNum: 2,
    });
    await h.waitForFinal(threadTs, 2);
    const continues = h.sim.requests.filter(
      (r) => r.method === "POST" && r.path.endsWith("/response"),
    );
    const forThread = h.sim
      .runs()
      .filter((r) => r.followUp && r.promptText.includes("Make it shorter"));
    expect(forThread).toHaveLength(1);
    expect(continues.length).toBeGreaterThanOrEqual(1);
    expect(h.botReplies(threadTs)).toHaveLength(2);
  });

  it("ignores bot messages, edits and deletions in a task thread", async () => {
    await h.command("Name a bakery [sim:length=100]");
    const threadTs = await h.waitForTaskThread("Name a bakery");
    await h.waitForFinal(threadTs);
    const before = h.sim.runs().length;
    const base = { type: "message", channel: CHANNEL, thread_ts: threadTs };
    const { sendEvent } = await import("../../tools/local-slack/slack-requests.ts");
    const { SIGNING_SECRET, TEAM } = await import("../support/harness.ts");
    for (const [i, event] of [
      { ...base, subtype: "bot_message", bot_id: "BOTHER", text: "beep", ts: "1.1" },
      { ...base, subtype: "message_changed", ts: "1.2", message: { text: "edited" } },
      { ...base, subtype: "message_deleted", ts: "1.3", deleted_ts: "1.0" },
    ].entries()) {
      const res = await sendEvent(h.eventsUrl, SIGNING_SECRET, {
        event_id: `EvIgnored${i}`,
        team_id: TEAM,
        event,
      });
      expect(res.status).toBe(200);
    }
    // A real reply afterwards is still handled, and it is the only new run.
    await h.reply(threadTs, "One more name please [sim:length=100]");
    await h.waitForFinal(threadTs, 2);
    expect(h.sim.runs().length).toBe(before + 1);
  });

  it("sends a reply's attachment with the follow-up, byte for byte", async () => {
    await h.command("Review a brief [sim:length=100]");
    const threadTs = await h.waitForTaskThread("Review a brief");
    await h.waitForFinal(threadTs);
    const brief = h.slack.addUserFile({
      name: "brief.pdf",
      bytes: "%PDF-1.7 brief",
      mimetype: "application/pdf",
    });
    await h.reply(threadTs, "See the attached brief [sim:length=100]", { files: [brief] });
    await h.waitForFinal(threadTs, 2);
    const followUp = h.sim.runs().find((r) => r.promptText.startsWith("See the attached brief"));
    expect(followUp?.request.files).toEqual([
      expect.objectContaining({ name: "brief.pdf", size: 14, sha256: sha256("%PDF-1.7 brief") }),
    ]);
  });

  it("lets the owner stop a run: the service stops, the message says who stopped it, nothing is appended after", async () => {
    await h.command("Write a long novel [sim:delay=25] [sim:length=20000]");
    const threadTs = await h.waitForTaskThread("Write a long novel");
    const running = await streaming(threadTs);
    const click = await h.clickStop(running, OWNER);
    expect(click.status).toBe(200);
    const replies = await h.waitForFinal(threadTs);
    const run = h.sim.runs().find((r) => r.promptText.includes("long novel"));
    expect(run?.status).toBe("stopped");
    const final = replies.at(-1);
    if (!final || !run) throw new Error("no final message");
    expect(statusOf(final)).toMatch(new RegExp(`Stopped by <@${OWNER}>`));
    expect(stopButton(final)).toBeUndefined();
    const shown = comparable(replies.map(markdownOf).join(""));
    expect(comparable(run.content).startsWith(shown)).toBe(true);
    expect(shown.length).toBeLessThan(comparable(run.content).length + 1);
    // After the final edit, no further write touched the thread.
    const lastWrite = h.slack.calls
      .filter(
        (c) =>
          c.args.channel === CHANNEL && (c.args.ts === final.ts || c.args.thread_ts === threadTs),
      )
      .at(-1);
    expect(lastWrite?.method).toBe("chat.update");
    expect(statusOf(h.slack.message(CHANNEL, final.ts) ?? final)).toMatch(/Stopped/);
  });

  it("tells anyone else privately that only the owner or an admin can stop, and the run goes on", async () => {
    await h.command("Design a logo [sim:delay=20] [sim:length=1500]");
    const threadTs = await h.waitForTaskThread("Design a logo");
    const running = await streaming(threadTs);
    await h.clickStop(running, OTHER);
    const refusal = await h.slack.waitFor(
      () => h.slack.responseUrlPosts.find((p) => JSON.stringify(p.body).includes("can stop it")),
      { description: "an ephemeral refusal" },
    );
    expect(JSON.stringify(refusal.body)).toContain(`<@${OWNER}>`);
    expect(JSON.stringify(refusal.body)).toContain("ephemeral");
    const replies = await h.waitForFinal(threadTs);
    expect(statusOf(replies.at(-1) ?? running)).toMatch(/Completed in/);
  });

  it("lets a workspace admin stop someone else's run", async () => {
    await h.command("Translate a manual [sim:delay=25] [sim:length=20000]");
    const threadTs = await h.waitForTaskThread("Translate a manual");
    const running = await streaming(threadTs);
    await h.clickStop(running, ADMIN);
    const replies = await h.waitForFinal(threadTs);
    expect(statusOf(replies.at(-1) ?? running)).toMatch(new RegExp(`Stopped by <@${ADMIN}>`));
  });

  it("says when stopping failed, keeps the run going, and lets Stop be pressed again", async () => {
    await h.command("Write a saga [sim:delay=25] [sim:length=12000]");
    const threadTs = await h.waitForTaskThread("Write a saga");
    const running = await streaming(threadTs);
    // A refusal (not a passing failure, which the client retries), slow to come: the answer
    // goes on meanwhile, and none of what arrives while the stop is asked may be lost.
    h.sim.injectFault({
      endpoint: "stop",
      status: 400,
      detail: "stop is unavailable",
      delayMs: 500,
    });
    await h.clickStop(running, OWNER);
    const refusal = await h.slack.waitFor(
      () =>
        h.slack.responseUrlPosts.find((p) =>
          JSON.stringify(p.body).includes("Stopping the run failed"),
        ),
      { description: "the private note that stopping failed" },
    );
    expect(JSON.stringify(refusal.body)).toContain("press Stop to try again");
    // Still running, still with its Stop button; the second press stops it.
    const still = await streaming(threadTs);
    expect(statusOf(still)).toMatch(/Working/);
    await h.clickStop(still, OWNER);
    const replies = await h.waitForFinal(threadTs);
    expect(statusOf(replies.at(-1) ?? still)).toMatch(new RegExp(`Stopped by <@${OWNER}>`));
    const run = h.sim.runs().find((r) => r.promptText.includes("Write a saga"));
    const shown = comparable(replies.map(markdownOf).join(""));
    expect(shown.length).toBeGreaterThan(0);
    expect(comparable(run?.content ?? "").startsWith(shown)).toBe(true);
  });

  it("ignores a Stop button value replayed from another channel", async () => {
    await h.command("Write a ballad [sim:delay=25] [sim:length=6000]");
    const threadTs = await h.waitForTaskThread("Write a ballad");
    const running = await streaming(threadTs);
    const button = stopButton(running);
    const id = `replay${Date.now()}`;
    await sendBlockAction(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: OWNER,
      channel_id: "C0ELSEWHERE",
      message_ts: running.ts,
      action_id: "task_stop",
      value: button?.value ?? "",
      response_url: h.slack.responseUrl(id),
    });
    const post = await h.slack.waitFor(() => h.slack.responseUrlPosts.find((p) => p.id === id), {
      description: "the refusal",
    });
    expect(JSON.stringify(post.body)).toContain("not valid any more");
    const [final] = (await h.waitForFinal(threadTs)).slice(-1);
    expect(statusOf(final ?? running)).toMatch(/Completed in/);
  });

  it("stops once when Stop is clicked twice", async () => {
    await h.command("Write an essay [sim:delay=25] [sim:length=20000]");
    const threadTs = await h.waitForTaskThread("Write an essay");
    const running = await streaming(threadTs);
    await Promise.all([h.clickStop(running, OWNER), h.clickStop(running, OWNER)]);
    await h.waitForFinal(threadTs);
    const stops = h.sim.requests.filter((r) => r.path.endsWith("/agent/stop"));
    const run = h.sim.runs().find((r) => r.promptText.includes("Write an essay"));
    expect(
      stops.filter(
        (r) =>
          r.path.includes(encodeURIComponent(run?.threadId ?? "")) ||
          r.path.includes(run?.threadId ?? ""),
      ),
    ).toHaveLength(1);
  });
});

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
