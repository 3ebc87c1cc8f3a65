import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_USAGE_POLICY, putUsagePolicy } from "../../src/store/usage-policy.ts";
import { sendBlockAction, sendViewSubmission } from "../../tools/local-slack/slack-requests.ts";
import {
  buttonOf,
  CHANNEL,
  comparable,
  Harness,
  markdownOf,
  NO_MESSAGE,
  SIGNING_SECRET,
  statusOf,
  TEAM,
} from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";

const stores = storeBackends();

describe.each(stores)("errors, limits and stream formats with %s", (_name, redis) => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({
      redisUrl: redis,
      slack: { notInChannel: ["C0NOTMEMBER"], unknownChannels: ["G0PRIVATE"] },
    });
    // The app's Workspace settings let it join public channels by itself, but Slack refuses
    // (a workspace that does not let apps join channels by themselves).
    await putUsagePolicy(h.app.store, TEAM, { ...DEFAULT_USAGE_POLICY, joinPublicChannels: true });
    h.slack.failWhen((c) =>
      c.method === "conversations.join" && c.args.channel === "C0NOTMEMBER"
        ? { error: "restricted_action" }
        : undefined,
    );
  });
  afterAll(async () => {
    await h?.close();
  });

  it("answers /task help with usage help, privately", async () => {
    const res = await h.command(" help ");
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ response_type: "ephemeral" });
    expect(JSON.stringify(res.json)).toContain("/task <what you want built>");
  });

  it("refuses a prompt over 5,000 characters before calling the service", async () => {
    const before = h.sim.requests.length;
    const res = await h.command(`Build ${"x".repeat(5000)}`);
    expect(JSON.stringify(res.json)).toContain("5,006 characters");
    expect(JSON.stringify(res.json)).toContain("at most 5,000");
    expect(h.sim.requests.length).toBe(before);
  });

  it.each([
    ["C0NOTMEMBER", "/invite @Task Agent"],
    ["G0PRIVATE", "probably private"],
  ])("tells the user how to fix it when the bot cannot post in %s", async (channel, advice) => {
    await h.command("Build something here", { channel });
    const post = await h.slack.waitFor(
      () => h.slack.responseUrlPosts.find((p) => JSON.stringify(p.body).includes(advice)),
      { description: `advice "${advice}"` },
    );
    expect(JSON.stringify(post.body)).toContain("ephemeral");
  });

  it.each([
    ["401", "API key"],
    ["402", "out of credits"],
    ["429", "try again in 7 seconds"],
    ["422", "refused the request"],
    ["500", "failed (HTTP 500)"],
  ])(
    "shows a specific message in the thread when creating the task fails with %s",
    async (status, text) => {
      await h.command(`Error case ${status} [sim:fail_create=${status}]`);
      const threadTs = await h.waitForTaskThread(`Error case ${status}`);
      const replies = await h.waitForFinal(threadTs);
      expect(statusOf(replies[0] ?? NO_MESSAGE)).toContain(text);
      expect(JSON.stringify(replies)).not.toContain('"Stop"');
    },
  );

  it("tells the user to start a new task when the service no longer knows the thread", async () => {
    await h.command("Short task [sim:length=100]");
    const threadTs = await h.waitForTaskThread("Short task");
    await h.waitForFinal(threadTs);
    await h.reply(threadTs, "Continue please [sim:fail_continue=404]");
    const replies = await h.waitForFinal(threadTs, 2);
    expect(statusOf(replies.at(-1) ?? NO_MESSAGE)).toContain("start a new task");
  });

  it("shows a failed run with its reason and keeps the partial answer", async () => {
    await h.command("Failing task [sim:run=fail] [sim:length=800]");
    const threadTs = await h.waitForTaskThread("Failing task");
    const replies = await h.waitForFinal(threadTs);
    const final = replies.at(-1);
    expect(final && statusOf(final)).toMatch(/Failed after \d+s: .+/);
    expect(final && markdownOf(final).length).toBeGreaterThan(0);
  });

  it("shows a server failure while following a run with the run id", async () => {
    await h.command("Poll failure [sim:fail_poll=500] [sim:norealtime] [sim:length=300]");
    const threadTs = await h.waitForTaskThread("Poll failure");
    const replies = await h.waitForFinal(threadTs, 1, 30_000);
    const run = h.sim.runs().find((r) => r.promptText.includes("Poll failure"));
    const status = statusOf(replies.at(-1) ?? NO_MESSAGE);
    expect(status).toContain("HTTP 500");
    expect(status).toContain(run?.id ?? "missing run id");
  });

  it("splits a 60,000-character answer across messages Slack accepts, losing nothing", async () => {
    await h.command("Write the full handbook [sim:length=60000] [sim:chunk=1500] [sim:delay=5]");
    const threadTs = await h.waitForTaskThread("Write the full handbook");
    const replies = await h.waitForFinal(threadTs, 1, 30_000);
    const run = h.sim.runs().find((r) => r.promptText.includes("full handbook"));
    expect(run?.content.length).toBeGreaterThanOrEqual(59_000);
    expect(replies.length).toBeGreaterThanOrEqual(6);
    for (const m of replies) expect(markdownOf(m).length).toBeLessThanOrEqual(10_000);
    expect(comparable(replies.map(markdownOf).join("\n"))).toBe(comparable(run?.content ?? ""));
    expect(statusOf(replies.at(-1) ?? NO_MESSAGE)).toMatch(/Completed/);
    expect(h.slack.validationErrors).toEqual([]);
    expect(
      h.slack.calls.filter((c) => c.response.ok === false && c.method.startsWith("chat.")),
    ).toEqual(
      h.slack.calls.filter(
        (c) =>
          c.response.ok === false && c.method.startsWith("chat.") && c.args.channel !== CHANNEL,
      ),
    );
  });

  it.each([
    ["contract", ""],
    ["agent", ""],
    ["minimal", ""],
    ["contract", "[sim:drop=4] [sim:reconnect=replay]"],
    ["agent", "[sim:drops=2] [sim:reconnect=continue]"],
    ["minimal", "[sim:malformed] [sim:drop=3]"],
    ["contract", "[sim:norealtime]"],
    ["contract", "[sim:norealtime=json]"],
  ])("shows the complete answer with the %s stream format %s", async (format, faults) => {
    const label = [
      "Format",
      format,
      faults.replace(/\W+/g, " ").trim(),
      Math.random().toString(36).slice(2, 7),
    ]
      .filter(Boolean)
      .join(" ");
    await h.command(`${label} [sim:format=${format}] ${faults} [sim:delay=8] [sim:length=1500]`);
    const threadTs = await h.waitForTaskThread(label);
    const replies = await h.waitForFinal(threadTs, 1, 30_000);
    const run = h.sim.runs().find((r) => r.promptText.includes(label));
    expect(run?.status).toBe("completed");
    expect(comparable(replies.map(markdownOf).join("\n"))).toBe(
      comparable(run?.content ?? "missing"),
    );
    expect(statusOf(replies.at(-1) ?? NO_MESSAGE)).toMatch(/Completed/);
    // What streamed never contained the acknowledgement or duplicated text.
    const updates = h.slack.calls.filter(
      (c) => c.method === "chat.update" && c.args.ts === replies[0]?.ts,
    );
    for (const u of updates) {
      const shown = comparable(JSON.stringify(u.args.blocks ?? "").replace(/\\n/g, "\n"));
      expect(shown).not.toContain("ACK-SHOULD-NOT-APPEAR");
    }
  });
});

describe("a run past its maximum run time (TASK_MAX_RUN_S)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ env: { TASK_MAX_RUN_S: "2" } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("is stopped at the service, and the thread says why", async () => {
    await h.command("Write an endless epic [sim:delay=25] [sim:length=40000]");
    const threadTs = await h.waitForTaskThread("Write an endless epic");
    const final = (await h.waitForFinal(threadTs, 1, 30_000)).at(-1);
    expect(statusOf(final ?? { channel: "", ts: "", user: "", text: "" })).toMatch(
      /Stopped after \d+s: it reached the maximum run time of 2s/,
    );
    const run = h.sim.runs().find((r) => r.promptText === "Write an endless epic");
    expect(run?.status).toBe("stopped");
  });
});

describe("per-person limits (TASK_RATE_USER_PER_MIN)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ env: { TASK_RATE_USER_PER_MIN: "2" } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("refuses a third task in a minute privately, and a follow-up counts too", async () => {
    await h.command("First poem [sim:length=100]");
    const threadTs = await h.waitForTaskThread("First poem");
    await h.waitForFinal(threadTs);
    await h.reply(threadTs, "Another verse [sim:length=100]");
    await h.waitForFinal(threadTs, 2);
    const before = h.sim.runs().length;
    const id = h.slack.responseUrlPosts.length;
    await h.command("Third poem [sim:length=100]");
    const refusal = await h.slack.waitFor(() => h.slack.responseUrlPosts.slice(id).at(0), {
      description: "the private refusal",
    });
    expect(JSON.stringify(refusal.body)).toContain("the most one person may");
    expect(h.sim.runs().length).toBe(before);
  });
});

/** What a guest is told when guests are not allowed: the setting that would allow them. */
const GUEST_REFUSAL =
  "Guest accounts can't start or continue tasks in this workspace. A workspace admin can allow it (the app's TASK_ALLOW_GUESTS setting).";

describe("who may start and continue tasks (guests, Slack Connect)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start();
    h.slack.addUser({ id: "U0GUEST", name: "guest", is_restricted: true });
    h.slack.addUser({ id: "U0EXTERNAL", name: "partner", team_id: "T0PARTNER" });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("refuses a guest's /task privately, naming the setting that allows it", async () => {
    const from = h.slack.responseUrlPosts.length;
    const runs = h.sim.runs().length;
    await h.command("Build a page [sim:length=100]", { user: "U0GUEST" });
    const post = await h.slack.waitFor(() => h.slack.responseUrlPosts.slice(from).at(0), {
      description: "the refusal",
    });
    expect(post.body).toMatchObject({ response_type: "ephemeral", text: GUEST_REFUSAL });
    expect(h.slack.responseUrlPosts.slice(from)).toHaveLength(1);
    expect(JSON.stringify(h.slack.messages(CHANNEL))).not.toContain("Build a page");
    expect(h.sim.runs().length).toBe(runs);
  });

  it("refuses a reply from another organisation in a task thread, and members go on", async () => {
    await h.command("Plan a meetup [sim:length=100]");
    const threadTs = await h.waitForTaskThread("Plan a meetup");
    await h.waitForFinal(threadTs);
    const runs = h.sim.runs().length;
    await h.reply(threadTs, "Add our logo", { user: "U0EXTERNAL" });
    const note = await h.slack.waitFor(
      () =>
        h.slack
          .ephemerals(CHANNEL, "U0EXTERNAL")
          .find((e) => e.text.includes("TASK_ALLOW_EXTERNAL")),
      { description: "the private refusal" },
    );
    expect(note.thread_ts).toBe(threadTs);
    expect(h.sim.runs().length).toBe(runs);
    await h.reply(threadTs, "Add a map [sim:length=100]");
    await h.waitForFinal(threadTs, 2);
  });

  it("refuses a request when Slack cannot say who sent it (a 429), and lets the retry through", async () => {
    // Someone the app has not looked up yet: Slack is busy the first time it is asked.
    h.slack.addUser({ id: "U0BUSY", name: "busy" });
    h.slack.failNext("users.info", { error: "ratelimited", retryAfter: 1 });
    const from = h.slack.responseUrlPosts.length;
    const runs = h.sim.runs().length;
    await h.command("Build a busy page [sim:length=100]", { user: "U0BUSY" });
    const post = await h.slack.waitFor(() => h.slack.responseUrlPosts.slice(from).at(0), {
      description: "the refusal",
    });
    expect(post.body).toMatchObject({
      response_type: "ephemeral",
      text: "Slack could not confirm who you are just now, so nothing was done. Please try again in a moment.",
    });
    expect(h.sim.runs().length).toBe(runs);
    // Nothing remembers the failure: the same request a moment later is looked up again.
    await h.command("Build a busy page [sim:length=100]", { user: "U0BUSY" });
    await h.waitForFinal(await h.waitForTaskThread("Build a busy page"));
    const lookups = h.slack.calls.filter(
      (c) => c.method === "users.info" && c.args.user === "U0BUSY",
    );
    expect(lookups.map((c) => c.status)).toEqual([429, 200]);
  });

  it("refuses a guest's Continue form privately, and posts nothing of it in the thread", async () => {
    await h.command("Plan a picnic [sim:length=100]");
    const threadTs = await h.waitForTaskThread("Plan a picnic");
    const answer = (await h.waitForFinal(threadTs)).at(-1);
    const button = answer && buttonOf(answer, "task_continue");
    if (!answer || !button) throw new Error("no Continue button");
    const views = h.slack.views().length;
    await sendBlockAction(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: "U0GUEST",
      channel_id: CHANNEL,
      message_ts: answer.ts,
      action_id: button.action_id,
      value: button.value,
      block_id: "task_views",
      response_url: h.slack.responseUrl(`continue${Date.now()}`),
    });
    const form = await h.slack.waitFor(() => h.slack.views()[views], {
      description: "the Continue form",
    });
    const runs = h.sim.runs().length;
    const res = await sendViewSubmission(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: "U0GUEST",
      view: form.view,
      values: { prompt: { value: { type: "plain_text_input", value: "Bring lemonade" } } },
    });
    expect(res.status).toBe(200);
    const note = await h.slack.waitFor(() => h.slack.ephemerals(CHANNEL, "U0GUEST").at(0), {
      description: "the private refusal",
    });
    expect(note).toMatchObject({ text: GUEST_REFUSAL, thread_ts: threadTs });
    expect(h.slack.ephemerals(CHANNEL, "U0GUEST")).toHaveLength(1);
    const shown = JSON.stringify(h.slack.thread(CHANNEL, threadTs));
    expect(shown).not.toContain("Bring lemonade");
    expect(h.sim.runs().length).toBe(runs);
  });
});

describe("guests allowed (TASK_ALLOW_GUESTS=true)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ env: { TASK_ALLOW_GUESTS: "true" } });
    h.slack.addUser({ id: "U0GUEST", name: "guest", is_ultra_restricted: true });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("lets a guest start a task, and shows them the whole answer", async () => {
    await h.command("Guest poem [sim:length=100]", { user: "U0GUEST" });
    await expectCompleted(h, "Guest poem");
  });
});

describe("guests and other organisations allowed (TASK_ALLOW_GUESTS, TASK_ALLOW_EXTERNAL)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({
      env: { TASK_ALLOW_GUESTS: "true", TASK_ALLOW_EXTERNAL: "true" },
    });
    h.slack.addUser({ id: "U0GUEST", name: "guest", is_restricted: true });
    // Were anyone looked up, Slack could not say who: nobody needs to be.
    h.slack.failWhen((c) => (c.method === "users.info" ? { error: "ratelimited" } : undefined));
  });
  afterAll(async () => {
    await h?.close();
  });

  it("asks Slack about nobody: a guest starts a task while users.info fails", async () => {
    await h.command("Open poem [sim:length=100]", { user: "U0GUEST" });
    await expectCompleted(h, "Open poem");
    expect(h.slack.calls.filter((c) => c.method === "users.info")).toEqual([]);
  });
});

/**
 * The task for `prompt` ran to its end and the thread shows its whole answer: not refused, not
 * failed (a final status that is an error would not do).
 */
async function expectCompleted(h: Harness, prompt: string): Promise<void> {
  const [answer, ...more] = await h.waitForFinal(await h.waitForTaskThread(prompt));
  const run = h.sim.runs().find((r) => r.promptText.includes(prompt));
  expect(run?.status).toBe("completed");
  expect(more).toEqual([]);
  expect(statusOf(answer ?? NO_MESSAGE)).toMatch(/^:white_check_mark: Completed in \d/);
  expect(comparable(markdownOf(answer ?? NO_MESSAGE))).toBe(comparable(run?.content ?? "x"));
}
