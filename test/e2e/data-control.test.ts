/**
 * Data an admin controls, end to end (the real app, the local Slack, the service simulator, on
 * the embedded store and Redis, read key by key): a task whose message is deleted in Slack is
 * forgotten and its run stopped at the service without a word; a reply deleted while it waited
 * is never sent; a deleted channel takes every record of it along; a person erases their own
 * records from App Home, and an admin the workspace's, each through a form they submit; an
 * admin stopping another person's run is an audit event, in the log and in their App Home.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendAppHomeOpened, sendViewAction } from "../../tools/local-slack/home-requests.ts";
import type { OpenedView, SlackMessage } from "../../tools/local-slack/index.ts";
import { sendViewSubmission } from "../../tools/local-slack/slack-requests.ts";
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
import { rawKeys } from "../support/raw-keys.ts";
import { until } from "../support/until.ts";

type Values = Record<string, Record<string, Record<string, unknown>>>;
let people = 0;

describe.each(storeBackends())("data an admin controls, with %s", (_name, redisUrl) => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ redisUrl, env: { DATA_RETENTION_DAYS: "30" } });
  });
  afterAll(async () => {
    await h?.close();
  });

  const to = () => ({ url: h.eventsUrl, signingSecret: SIGNING_SECRET });
  const raw = () => rawKeys({ namespace: h.namespace, dataDir: h.dataDir, redisUrl });
  /** The raw keys (and values) that mention any of `ids`, claims aside (they lapse by themselves). */
  const mentioning = async (...ids: string[]) =>
    [...(await raw())]
      .filter(
        ([k, v]) => !k.includes(":claim:") && ids.some((id) => k.includes(id) || v.includes(id)),
      )
      .map(([k, v]) => `${k} = ${v.slice(0, 80)}`);
  const thread = (threadTs: string, channelId = CHANNEL) => ({ teamId: TEAM, channelId, threadTs });

  /** The task thread opened in `channel` for `fragment`. */
  const taskThread = (channel: string, fragment: string) =>
    h.slack.waitFor(
      () =>
        h.slack
          .messages(channel)
          .find((m) => m.user === h.slack.botUserId && JSON.stringify(m.blocks).includes(fragment))
          ?.ts,
      { description: `the task message for "${fragment}" in ${channel}` },
    );

  /** The running run's message of a thread, once it shows a Stop button. */
  const running = (threadTs: string, channel = CHANNEL): Promise<SlackMessage> =>
    h.slack.waitFor(
      () => h.slack.thread(channel, threadTs).find((m) => m.ts !== threadTs && stopButton(m)),
      { description: `the running message in ${threadTs}` },
    );

  /**
   * The run of a thread has ended, shown in Slack (without waiting for every run of the app to
   * end, as `waitForFinal` does: some runs here stall on purpose).
   */
  const ended = (threadTs: string, channel = CHANNEL, count = 1) =>
    h.slack.waitFor(
      () =>
        h.slack
          .thread(channel, threadTs)
          .filter((m) => m.ts !== threadTs && /Completed in|Failed after|Stopped/.test(statusOf(m)))
          .length >= count,
      { description: `${count} ended run(s) in ${threadTs}`, timeoutMs: 20_000 },
    );

  /**
   * A stalled run (`[sim:stall]` stalls after its third chunk) has shown all it sent: no edit of
   * it is still on its way to Slack, so any later write would be the app's doing.
   */
  const quiet = (threadTs: string, runId: string, channel = CHANNEL) =>
    h.slack.waitFor(
      () => {
        const run = h.sim.runs().find((r) => r.id === runId);
        const shown = h.slack
          .thread(channel, threadTs)
          .filter((m) => m.ts !== threadTs && m.user === h.slack.botUserId)
          .map((m) => comparable(markdownOf(m)));
        return (run?.chunks ?? 0) >= 3 && shown.includes(comparable(run?.content ?? "x"));
      },
      { description: `the stalled run of ${threadTs} shown as far as it went` },
    );

  const runOf = (fragment: string) =>
    h.slack.waitFor(() => h.sim.runs().find((r) => r.promptText.includes(fragment)), {
      description: `the service's run for "${fragment}"`,
    });

  const queued = async (threadTs: string, n: number) =>
    until(
      `${n} replies queued`,
      async () => (await h.app.store.getThread(thread(threadTs)))?.queue.length === n,
    );

  /** Slack writes (not Home refreshes) made since call `from`. */
  const writesSince = (from: number) =>
    h.slack.calls
      .slice(from)
      .filter((c) => /^(chat|reactions|files|assistant)\./.test(c.method))
      .map((c) => `${c.method} ${JSON.stringify(c.args).slice(0, 120)}`);

  function newPerson(): string {
    const id = `U0DATA${++people}`;
    h.slack.addUser({ id, name: `data${people}` });
    return id;
  }

  async function openHome(user: string): Promise<OpenedView> {
    const before = h.slack.homeTabs(user).length;
    await sendAppHomeOpened(h.eventsUrl, SIGNING_SECRET, { team_id: TEAM, user_id: user });
    const view = await h.slack.waitFor(() => h.slack.homeTabs(user)[before], {
      description: `the Home tab of ${user}`,
    });
    expect(h.slack.validationErrors).toEqual([]);
    return view;
  }

  /** Presses a Home tab button; resolves with the form it opened. */
  async function press(home: OpenedView, user: string, action: string, block: string) {
    const before = h.slack.views().length;
    await sendViewAction(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: user,
      view: home.view,
      action_id: action,
      block_id: block,
    });
    const view = await h.slack.waitFor(() => h.slack.views()[before], {
      description: `the form ${action} opens`,
    });
    expect(h.slack.validationErrors).toEqual([]);
    return view;
  }

  const submit = (form: OpenedView, user: string, values: Values = {}) =>
    sendViewSubmission(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: user,
      view: form.view,
      values,
    });

  const dm = (user: string, fragment: string) =>
    h.slack.waitFor(
      () => h.slack.messages(`D${user.slice(1)}`).find((m) => m.text.includes(fragment)),
      { description: `a direct message to ${user} saying "${fragment}"` },
    );

  const shown = (view: OpenedView | undefined) => JSON.stringify(view?.view.blocks ?? []);

  it("forgets a task whose message is deleted: its run stops at the service, nothing more is posted, nothing of it is kept", async () => {
    await h.command("Plan the offsite [sim:stall=60000] [sim:delay=5]");
    const threadTs = await h.waitForTaskThread("Plan the offsite");
    const run = await runOf("Plan the offsite");
    await running(threadTs);
    await quiet(threadTs, run.id);
    const reply = await h.reply(threadTs, "Also book the venue");
    await queued(threadTs, 1);
    // Slack shows it queued (a reaction, a word to the person) before the message goes.
    await h.slack.waitFor(() => h.slack.reactions(CHANNEL, reply.ts).length > 0);
    await h.slack.waitFor(() =>
      h.slack.ephemerals(CHANNEL, OWNER).some((e) => e.text.includes("queued")),
    );
    expect(await mentioning(threadTs, run.id)).not.toEqual([]);

    const from = h.slack.calls.length;
    await h.slack.deleteMessage(CHANNEL, threadTs, to());

    expect((await h.sim.waitForRun(run.id, 10_000)).status).toBe("stopped");
    await until("the task forgotten", async () => !(await h.app.store.getThread(thread(threadTs))));
    await h.app.relay.idle();
    expect(writesSince(from)).toEqual([]);
    expect(await mentioning(threadTs, run.id)).toEqual([]);
    const listed = await h.app.store.recentTasks(TEAM, OWNER, 50);
    expect(listed.some((t) => t.threadTs === threadTs)).toBe(false);
    expect(h.logLines.some((l) => l.includes("its task is forgotten"))).toBe(true);
  });

  it("never sends a reply deleted while it waited; the one left is sent", async () => {
    await h.command("Write a story [sim:delay=20] [sim:length=1500]");
    const threadTs = await h.waitForTaskThread("Write a story");
    await running(threadTs);
    const deleted = await h.reply(threadTs, "Make it about cats");
    await h.reply(threadTs, "And keep it short [sim:length=50]");
    await queued(threadTs, 2);
    await h.slack.deleteMessage(CHANNEL, deleted.ts, to());
    await queued(threadTs, 1);
    await ended(threadTs, CHANNEL, 2);
    const prompts = h.sim.runs().map((r) => r.promptText);
    expect(prompts.some((p) => p.includes("keep it short"))).toBe(true);
    expect(prompts.some((p) => p.includes("cats"))).toBe(false);
  });

  it("forgets a deleted channel: its tasks, their runs, its defaults, its tasks in recent tasks", async () => {
    const GONE = "C0GONE";
    await h.command("A quick note [sim:length=40]", { channel: GONE });
    const done = await taskThread(GONE, "A quick note");
    await ended(done, GONE);
    await h.command("Draft the roadmap [sim:stall=60000] [sim:delay=5]", { channel: GONE });
    const going = await taskThread(GONE, "Draft the roadmap");
    const run = await runOf("Draft the roadmap");
    await running(going, GONE);
    await quiet(going, run.id, GONE);
    await h.command("Kept elsewhere [sim:length=40]");
    const kept = await h.waitForTaskThread("Kept elsewhere");
    await ended(kept);
    await h.app.store.putDefaults(TEAM, { kind: "channel", channelId: GONE }, { effort: "low" });

    const from = h.slack.calls.length;
    await h.slack.deleteChannel(GONE, to());

    expect((await h.sim.waitForRun(run.id, 10_000)).status).toBe("stopped");
    await until("the channel forgotten", async () => (await mentioning(GONE)).length === 0);
    await h.app.relay.idle();
    expect(writesSince(from)).toEqual([]);
    expect(await mentioning(GONE, run.id)).toEqual([]);
    expect(await h.app.store.getThread(thread(kept))).toBeDefined();
    const listed = await h.app.store.recentTasks(TEAM, OWNER, 50);
    expect(listed.some((t) => t.channelId === GONE)).toBe(false);
    expect(listed.some((t) => t.threadTs === kept)).toBe(true);
  });

  it("lets a person erase their own records from App Home, after a form that says what is and is not erased", async () => {
    const user = newPerson();
    await h.command("Write a haiku about rain [sim:length=40]", { user });
    const threadTs = await h.waitForTaskThread("Write a haiku about rain");
    await ended(threadTs);
    await h.app.store.putDefaults(TEAM, { kind: "user", userId: user }, { model: "m1" });
    // Their reply waits in someone else's task.
    await h.command("Plan a picnic [sim:stall=60000]", { user: OTHER });
    const others = await h.waitForTaskThread("Plan a picnic");
    const picnic = await running(others);
    await h.reply(others, "Bring umbrellas", { user });
    await queued(others, 1);

    const home = await openHome(user);
    expect(shown(home)).toContain("Write a haiku about rain");
    expect(shown(home)).toContain("for 30 days after they last changed");
    const form = await press(home, user, "home_erase_mine", "home_records");
    expect(form.view.callback_id).toBe("erase_my_records");
    expect(shown(form)).toContain("the task service's own copy");
    const published = h.slack.homeTabs(user).length;
    expect((await submit(form, user)).body).toBe("");

    const told = await dm(user, "Your records are erased");
    expect(told.text).toContain("1 task record, 1 waiting reply, 1 recent task");
    expect(told.text).toContain("your defaults");
    const after = await h.slack.waitFor(() => h.slack.homeTabs(user)[published], {
      description: "the Home tab shown again",
    });
    expect(shown(after)).toContain("You have no tasks yet");
    expect(await h.app.store.getThread(thread(threadTs))).toBeUndefined();
    expect(await h.app.store.getDefaults(TEAM, { kind: "user", userId: user })).toBeUndefined();
    expect((await h.app.store.getThread(thread(others)))?.queue).toEqual([]);
    expect(await mentioning(user)).toEqual([]);
    await h.clickStop(picnic, OTHER);
    await ended(others);
  });

  it("writes an admin stopping another person's run to the audit trail, and lets an admin alone erase the workspace's records", async () => {
    await h.command("Survey the market [sim:stall=60000] [sim:delay=5]");
    const threadTs = await h.waitForTaskThread("Survey the market");
    const message = await running(threadTs);
    expect((await h.clickStop(message, ADMIN)).status).toBe(200);
    await ended(threadTs);
    const audited = (l: string) => l.includes('"what":"run.stopped"');
    await until("the audit line", () => h.logLines.some(audited));
    const line = h.logLines.find(audited);
    expect(JSON.parse(line ?? "{}")).toMatchObject({
      msg: "audit: run.stopped",
      audit: { what: "run.stopped", who: ADMIN, workspace: TEAM, channel: CHANNEL, whom: OWNER },
    });
    expect(JSON.parse(line ?? "{}").audit.when).toMatch(/^\d{4}-\d\d-\d\dT/);

    const adminHome = await openHome(ADMIN);
    expect(shown(adminHome)).toContain(`<@${ADMIN}> stopped a run of <@${OWNER}> in <#${CHANNEL}>`);
    expect(shown(await openHome(OTHER))).not.toContain("Audit trail");

    // Someone who is not an admin: the form says no, and a forged submission is refused.
    const refused = await press(
      await openHome(OTHER),
      OTHER,
      "home_erase_workspace",
      "home_admin_records",
    );
    expect(shown(refused)).toContain("Only workspace admins and owners");
    const form = await press(adminHome, ADMIN, "home_erase_workspace", "home_admin_records");
    expect(form.view.callback_id).toBe("erase_workspace_records");
    const ticked = {
      erase_confirm: { value: { type: "checkboxes", selected_options: [{ value: "erase" }] } },
    };
    const forged = await submit(form, OTHER, ticked);
    expect(forged.body).toContain("Only workspace admins and owners");
    expect((await submit(form, ADMIN)).body).toContain("Tick the box");

    // A task still going is stopped quietly with the rest.
    await h.command("Index the wiki [sim:stall=60000] [sim:delay=5]");
    const going = await h.waitForTaskThread("Index the wiki");
    const run = await runOf("Index the wiki");
    await running(going);
    await quiet(going, run.id);
    await h.app.store.putDefaults(TEAM, { kind: "channel", channelId: CHANNEL }, { effort: "low" });
    const from = h.slack.calls.length;
    expect((await submit(form, ADMIN, ticked)).body).toBe("");

    await dm(ADMIN, "The workspace's records are erased");
    expect((await h.sim.waitForRun(run.id, 10_000)).status).toBe("stopped");
    await h.app.relay.idle();
    // Only the word to the admin.
    expect(writesSince(from)).toEqual([
      expect.stringMatching(new RegExp(`^chat.postMessage .*"channel":"${ADMIN}"`)),
    ]);
    const left = [...(await raw()).keys()].filter(
      (k) => k.includes(`t:${TEAM}:`) && !k.includes(":claim:"),
    );
    expect(left.filter((k) => /:(thread|recent|defaults:user|feedback):/.test(k))).toEqual([]);
    expect(left.some((k) => k.endsWith(`t:${TEAM}:audit`))).toBe(true);
    expect(await h.app.store.getDefaults(TEAM, { kind: "channel", channelId: CHANNEL })).toEqual({
      effort: "low",
    });
    expect(h.logLines.some((l) => l.includes('"what":"records.erased"'))).toBe(true);
    expect(shown(await openHome(ADMIN))).toContain(`<@${ADMIN}> erased the workspace's records`);
  });
});
