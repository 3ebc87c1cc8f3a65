import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_USAGE_POLICY, putUsagePolicy } from "../../src/store/usage-policy.ts";
import { neutralizeMentions } from "../../src/view/sanitize.ts";
import {
  API_KEY,
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

const stores = storeBackends();

/** The service's final answer for a run, read straight from the simulator. */
async function serviceFiles(h: Harness, threadId: string, projectId: string) {
  const res = await fetch(
    `${h.sim.url}/api/v1/public/threads/${encodeURIComponent(threadId)}/response?project_id=${projectId}&include_file_content=true&timeout=0`,
    { headers: { "x-api-key": API_KEY } },
  );
  const body = (await res.json()) as {
    files: Array<{
      file_name: string;
      content?: string;
      encoding?: string;
      included_inline?: boolean;
    }>;
  };
  return body.files;
}

describe.each(stores)("/task end to end with %s", (_name, redis) => {
  let h: Harness;
  beforeAll(async () => {
    // The bot starts outside the channel, in a workspace whose admins let it join public
    // channels by itself (Workspace settings): it joins on /task, so it can post and hear replies.
    h = await Harness.start({ redisUrl: redis, slack: { notInChannel: [CHANNEL] } });
    await putUsagePolicy(h.app.store, TEAM, { ...DEFAULT_USAGE_POLICY, joinPublicChannels: true });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("acknowledges at once, streams the answer into a thread by editing, then shows the final text, status and files", async () => {
    const prompt =
      "Build a landing page for a bakery [sim:files=3] [sim:delay=15] [sim:length=2500]";
    const started = Date.now();
    const ack = await h.command(prompt);
    expect(ack.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(3000);

    const threadTs = await h.waitForTaskThread("landing page for a bakery");
    expect(
      h.slack.calls.some((c) => c.method === "conversations.join" && c.args.channel === CHANNEL),
    ).toBe(true);
    const parent = h.slack.message(CHANNEL, threadTs);
    expect(JSON.stringify(parent?.blocks)).toContain(`<@${OWNER}>`);

    const replies = await h.waitForFinal(threadTs);
    const run = h.sim.runs().find((r) => r.prompt === prompt);
    expect(run?.status).toBe("completed");
    const answer = replies[0];
    if (!answer || !run) throw new Error("no answer");

    // It streamed: several edits of the same message with growing text, spaced by the throttle.
    const edits = h.slack.calls.filter(
      (c) => c.method === "chat.update" && c.args.ts === answer.ts,
    );
    expect(edits.length).toBeGreaterThanOrEqual(3);
    // The throttle lets an edit go 250 ms after the one before at the earliest; the double
    // sees them after their trip, whose length varies, so the spacing is judged on average.
    const interim = edits.slice(0, -1);
    const span = (interim.at(-1)?.at ?? 0) - (interim[0]?.at ?? 0);
    expect(span).toBeGreaterThanOrEqual((interim.length - 1) * 200);
    // …and no two go together (half the interval allows for one slow trip).
    for (let i = 1; i < interim.length; i++) {
      expect((interim[i]?.at ?? 0) - (interim[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(125);
    }
    const stoppable = edits.filter((c) => JSON.stringify(c.args.blocks).includes('"Stop"'));
    expect(stoppable.length).toBeGreaterThanOrEqual(1);

    // The final message shows the service's authoritative text and a clear status, no Stop.
    expect(comparable(replies.map(markdownOf).join("\n"))).toBe(comparable(run.content));
    expect(statusOf(replies.at(-1) ?? answer)).toMatch(/Completed in \d+s/);
    expect(JSON.stringify(replies.map((r) => r.blocks))).not.toContain('"Stop"');

    // Files arrive in the same thread with the service's exact bytes.
    const uploaded = h.slack.files().filter((f) => f.thread_ts === threadTs);
    const thread = h.sim.thread(run.threadId);
    const expected = await serviceFiles(h, run.threadId, thread?.projectId ?? "");
    expect(uploaded.map((f) => f.name).sort()).toEqual(expected.map((f) => f.file_name).sort());
    for (const f of expected) {
      const bytes = Buffer.from(f.content ?? "", f.encoding === "base64" ? "base64" : "utf8");
      expect(uploaded.find((u) => u.name === f.file_name)?.bytes.equals(bytes)).toBe(true);
    }
    const uploadCalls = h.slack.calls.filter((c) => c.method === "files.completeUploadExternal");
    expect(uploadCalls.filter((c) => c.args.thread_ts === threadTs)).toHaveLength(1);

    // The run can be traced back to Slack: who asked where. (The task reaches the service
    // before its thread exists, so a command's run does not name the thread.)
    expect(run.request.metadata).toEqual({
      slack: { team_id: "T0001", channel_id: CHANNEL, user_id: OWNER },
    });
    expect(h.slack.validationErrors).toEqual([]);
  });

  it("shows the agent's steps as a plan above the status line while it works, never its raw JSON", async () => {
    const from = h.slack.calls.length;
    await h.command("Stepwise page [sim:delay=30] [sim:length=1500] [sim:toolnoise]");
    const threadTs = await h.waitForTaskThread("Stepwise page");
    await h.waitForFinal(threadTs);
    const edits = h.slack.calls.slice(from).filter((c) => c.method === "chat.update");
    // As a native stream's plan (SLACK_TASK_DISPLAY's default) shows them.
    expect(JSON.stringify(edits.map((c) => c.args))).toContain(
      "*Plan* · 1 step\\n:hourglass_flowing_sand: `str_replace index.html`",
    );
    expect(JSON.stringify(h.slack.calls.slice(from))).not.toContain('\\"tool\\"');
  });

  it("posts without joining again in a channel it is already in", async () => {
    // The first test made the bot join CHANNEL; a second /task there needs no join call.
    await h.command("Write a limerick about rye [sim:length=200]");
    const threadTs = await h.waitForTaskThread("limerick about rye");
    await h.waitForFinal(threadTs);
    const joins = h.slack.calls.filter((c) => c.method === "conversations.join");
    expect(joins).toHaveLength(1);
    // The one join happened after Slack refused the post (not_in_channel), then it posted.
    const firstPosts = h.slack.calls.filter(
      (c) => c.method === "chat.postMessage" && c.args.channel === CHANNEL && !c.args.thread_ts,
    );
    expect(firstPosts[0]?.response.error).toBe("not_in_channel");
    expect(firstPosts[1]?.response.ok).toBe(true);
  });

  it("continues the conversation when someone replies in the thread", async () => {
    await h.command("Write a haiku about bread [sim:length=400]");
    const threadTs = await h.waitForTaskThread("haiku about bread");
    await h.waitForFinal(threadTs, 1);
    await h.reply(threadTs, "Now make it about croissants [sim:length=300]");
    const replies = await h.waitForFinal(threadTs, 2);
    const followUp = h.sim.runs().find((r) => r.followUp && r.promptText.includes("croissants"));
    expect(followUp?.status).toBe("completed");
    const last = replies.at(-1);
    expect(last && comparable(markdownOf(last))).toBe(comparable(followUp?.content ?? "x"));
    expect(h.slack.validationErrors).toEqual([]);
  });

  it("never pings anyone from model output", async () => {
    await h.command("Summarise the announcement [sim:mention] [sim:length=600]");
    const threadTs = await h.waitForTaskThread("Summarise the announcement");
    const replies = await h.waitForFinal(threadTs);
    const shown = JSON.stringify(replies.map((r) => [r.text, r.blocks]));
    expect(shown).not.toMatch(/<[!@#](channel|here|everyone|U12345|C12345|subteam)/);
    expect(neutralizeMentions("<!channel>")).not.toBe("<!channel>");
  });

  it("refuses forged and stale requests and does nothing for them", async () => {
    const before = h.sim.requests.length;
    const forged = await h.command("Forged task", { forge: true });
    const stale = await h.command("Stale task", { stale: true });
    expect(forged.status).toBe(401);
    expect(stale.status).toBe(401);
    expect(h.sim.requests.length).toBe(before);
    expect(JSON.stringify(h.slack.messages(CHANNEL))).not.toMatch(/Forged task|Stale task/);
  });

  it("keeps every secret out of the logs", () => {
    const all = h.logLines.join("");
    expect(all.length).toBeGreaterThan(1000);
    for (const secret of [API_KEY, h.slack.botToken, SIGNING_SECRET])
      expect(all).not.toContain(secret);
  });
});
