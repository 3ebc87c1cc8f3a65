/**
 * App Home and defaults: the Home tab lists a person's recent tasks (or an empty state) with the
 * New task button and their defaults, is refreshed when a run of theirs ends, and edits their
 * defaults; `/task settings` sets a channel's defaults for its managers only. Inline options beat
 * personal defaults, which beat the channel's; a default the service refuses is named.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendAppHomeOpened, sendViewAction } from "../../tools/local-slack/home-requests.ts";
import type { OpenedView } from "../../tools/local-slack/index.ts";
import {
  type SlackHttpResponse,
  sendViewSubmission,
} from "../../tools/local-slack/slack-requests.ts";
import { ADMIN, CHANNEL, Harness, OTHER, OWNER, SIGNING_SECRET, TEAM } from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";

type Values = Record<string, Record<string, Record<string, unknown>>>;
const text = (value: string) => ({ value: { type: "plain_text_input", value } });
const picked = (value: string) => ({
  value: {
    type: "static_select",
    selected_option: { value, text: { type: "plain_text", text: value } },
  },
});

let people = 0;

describe.each(storeBackends())("App Home and defaults with %s", (_name, redis) => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({
      redisUrl: redis,
      // The owner created the channel: they manage its settings.
      slack: { channelCreators: { [CHANNEL]: OWNER } },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  /** A person of their own for each test (a Home tab refresh is limited per person). */
  function newPerson(): string {
    const id = `U0HOME${++people}`;
    h.slack.addUser({ id, name: `home${people}` });
    return id;
  }

  /** The person opens the app's Home tab; resolves with the view the app published. */
  async function openHome(user: string): Promise<OpenedView> {
    const before = h.slack.homeTabs(user).length;
    const res = await sendAppHomeOpened(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: user,
    });
    expect(res.status).toBe(200);
    const view = await h.slack.waitFor(() => h.slack.homeTabs(user)[before], {
      description: `the Home tab of ${user}`,
    });
    expect(h.slack.validationErrors).toEqual([]);
    return view;
  }

  const shown = (view: OpenedView) => JSON.stringify(view.view.blocks);
  const latestHome = (user: string) => h.slack.homeTabs(user).at(-1);

  async function opened(from: number): Promise<OpenedView> {
    const view = await h.slack.waitFor(() => h.slack.views()[from], {
      description: "a view opened with views.open",
    });
    expect(h.slack.validationErrors).toEqual([]);
    return view;
  }

  const click = (view: OpenedView, user: string, actionId: string) =>
    sendViewAction(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: user,
      view: view.view,
      action_id: actionId,
      block_id: "home_actions",
    });

  const submit = (view: OpenedView, user: string, values: Values): Promise<SlackHttpResponse> =>
    sendViewSubmission(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: user,
      view: view.view,
      values,
    });

  /** The person saves personal defaults from their Home tab; resolves once Home shows them. */
  async function setPersonalDefaults(user: string, values: Values, expected: string) {
    const home = await openHome(user);
    const before = h.slack.views().length;
    expect((await click(home, user, "home_edit_defaults")).status).toBe(200);
    const modal = await opened(before);
    expect(modal.view.callback_id).toBe("task_defaults");
    const published = h.slack.homeTabs(user).length;
    const res = await submit(modal, user, values);
    expect(res.body).toBe("");
    const refreshed = await h.slack.waitFor(() => h.slack.homeTabs(user)[published], {
      description: "the Home tab shown again with the new defaults",
    });
    expect(shown(refreshed)).toContain(expected);
  }

  it("shows a person with no tasks an empty state with the New task button", async () => {
    const user = newPerson();
    // The Messages tab is not drawn by the app.
    await sendAppHomeOpened(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: user,
      tab: "messages",
    });
    const home = await openHome(user);
    expect(h.slack.homeTabs(user)).toHaveLength(1);
    expect(home.view.type).toBe("home");
    expect(shown(home)).toContain("You have no tasks yet");
    expect(shown(home)).toContain('"action_id":"home_new_task"');
    expect(shown(home)).toContain("*Your defaults:* none");
  });

  it("lists a task with its channel, status, time and a link to its thread, refreshed when its run ends", async () => {
    const user = newPerson();
    await openHome(user);
    await h.command("Write a haiku about bread", { user });
    const threadTs = await h.waitForTaskThread("Write a haiku about bread");
    await h.waitForFinal(threadTs);
    // Nobody opened the tab again: the app refreshed it when the run ended.
    const home = await h.slack.waitFor(
      () => h.slack.homeTabs(user).find((v) => shown(v).includes("Completed")),
      { description: "the Home tab showing the completed task" },
    );
    expect(h.slack.validationErrors).toEqual([]);
    const permalink = `https://local-slack.slack.com/archives/${CHANNEL}/p${threadTs.replace(".", "")}`;
    expect(shown(home)).toContain(`*<${permalink}|Write a haiku about bread>*`);
    expect(shown(home)).toContain(`<#${CHANNEL}>`);
    expect(shown(home)).toContain(":white_check_mark: Completed");
    expect(shown(home)).toMatch(/<!date\^\d+\^\{date_short_pretty\} \{time\}\|/);
    expect(shown(home)).not.toContain("You have no tasks yet");
  });

  it("shows the last 20 of many tasks within Slack's view limits", async () => {
    const user = newPerson();
    for (let i = 0; i < 30; i++) {
      await h.app.store.putRecentTask(TEAM, user, {
        channelId: CHANNEL,
        threadTs: `1700000${String(i).padStart(3, "0")}.000100`,
        prompt: `Task number ${i} ${"with a long description ".repeat(6)}`.slice(0, 150),
        status: i % 2 === 0 ? "completed" : "failed",
        startedAt: Date.now() - 3_600_000 + i * 1000,
        updatedAt: Date.now() - 3_600_000 + i * 1000,
      });
    }
    const home = await openHome(user);
    const text = shown(home);
    expect(text).toContain("Task number 29 ");
    expect(text).toContain("Task number 10 ");
    expect(text).not.toContain("Task number 9 ");
    expect((home.view.blocks as unknown[]).length).toBeLessThanOrEqual(100);
  });

  it("titles a task written in Markdown without its markers (a link label shows none)", async () => {
    const user = newPerson();
    await h.app.store.putRecentTask(TEAM, user, {
      channelId: CHANNEL,
      threadTs: "1700000999.000100",
      prompt: "# Build a **landing** page\nwith a [menu](https://example.com) | and more",
      status: "completed",
      startedAt: Date.now(),
      updatedAt: Date.now(),
    });
    const text = shown(await openHome(user));
    expect(text).toContain("|Build a landing page>*");
    expect(text).not.toContain("# Build");
  });

  it("opens the New task modal from the Home tab's button", async () => {
    const user = newPerson();
    const home = await openHome(user);
    const before = h.slack.views().length;
    expect((await click(home, user, "home_new_task")).status).toBe(200);
    const modal = await opened(before);
    expect(modal.view.callback_id).toBe("new_task");
  });

  it("edits personal defaults from the Home tab; tasks use them, and inline options beat them", async () => {
    const user = newPerson();
    await setPersonalDefaults(
      user,
      {
        model: text("house-model"),
        agent: text(""),
        effort: picked("high"),
        thinking: picked("on"),
      },
      "*Your defaults:* model `house-model` · effort `high` · thinking on",
    );
    await h.command("[effort=low] Plan a picnic for twelve", { user });
    const threadTs = await h.waitForTaskThread("Plan a picnic for twelve");
    await h.waitForFinal(threadTs);
    const run = h.sim.runs().find((r) => r.prompt === "Plan a picnic for twelve");
    expect(run?.request).toMatchObject({
      modelName: "house-model",
      reasoningEffort: "low",
      enableThinking: true,
    });
    expect(run?.request.agentId).toBeUndefined();
  });

  it("lets the channel's creator and admins set channel defaults with /task settings, and nobody else", async () => {
    // Someone else is told why, privately, and no form opens.
    const views = h.slack.views().length;
    await h.command("settings", { user: OTHER });
    await h.slack.waitFor(
      () =>
        h.slack.responseUrlPosts.find((p) =>
          JSON.stringify(p.body).includes("Only this channel's manager or a workspace admin"),
        ),
      { description: "the refusal of /task settings" },
    );
    expect(h.slack.views().length).toBe(views);
    // In a DM there is no channel to set.
    await h.command("settings", { user: OWNER, channel: "D0OWNER" });
    await h.slack.waitFor(
      () =>
        h.slack.responseUrlPosts.find((p) =>
          JSON.stringify(p.body).includes("Channel defaults are set in a channel"),
        ),
      { description: "/task settings in a DM" },
    );
    // An admin may.
    await h.command("settings", { user: ADMIN });
    const adminForm = await opened(views);
    expect(adminForm.view.callback_id).toBe("channel_settings");
    // The creator sets the channel's defaults.
    await h.command("settings", { user: OWNER });
    const form = await opened(views + 1);
    expect(form.view.private_metadata).toBe(CHANNEL);
    // The form names the channel, but only a manager's submission counts.
    const forged = await submit(form, OTHER, { model: text("sneaky-model") });
    expect(JSON.stringify(forged.json)).toContain("Only this channel's manager");
    const res = await submit(form, OWNER, {
      model: text("channel-model"),
      agent: text("channel-agent"),
      effort: picked("medium"),
      thinking: picked(`__service_default__`),
    });
    expect(res.body).toBe("");
    await h.slack.waitFor(
      () =>
        h.slack
          .ephemerals(CHANNEL, OWNER)
          .find((e) => e.text.includes("now default to model `channel-model`")),
      { description: "the confirmation of the channel defaults" },
    );
    // A change of a channel's defaults is an audit event.
    const audit = h.logLines
      .map((l) => (JSON.parse(l) as { audit?: Record<string, unknown> }).audit)
      .filter((a) => a?.what === "channel_defaults.changed");
    expect(audit).toEqual([
      expect.objectContaining({ who: OWNER, workspace: TEAM, channel: CHANNEL }),
    ]);
    expect(audit[0]?.detail).toContain("channel-model");
    // The form opens again with them.
    await h.command("settings", { user: OWNER });
    const again = await opened(views + 2);
    expect(JSON.stringify(again.view.blocks)).toContain('"initial_value":"channel-model"');

    // A person's own default beats the channel's; the channel's fill what they leave.
    const user = newPerson();
    await setPersonalDefaults(user, { model: text("own-model") }, "model `own-model`");
    await h.command("Sketch a garden plan", { user });
    const threadTs = await h.waitForTaskThread("Sketch a garden plan");
    await h.waitForFinal(threadTs);
    const run = h.sim.runs().find((r) => r.prompt === "Sketch a garden plan");
    expect(run?.request).toMatchObject({
      modelName: "own-model",
      agentId: "channel-agent",
      reasoningEffort: "medium",
    });
  });

  it("names the default that caused the service's refusal (422), and lists the task as not started", async () => {
    const user = newPerson();
    await setPersonalDefaults(user, { model: text("retired-model") }, "model `retired-model`");
    h.sim.injectFault({
      endpoint: "create",
      status: 422,
      detail: "Unknown model 'retired-model'",
    });
    await h.command("Summarise the quarterly report", { user });
    const threadTs = await h.waitForTaskThread("Summarise the quarterly report");
    const [answer] = await h.waitForFinal(threadTs);
    const said = JSON.stringify(answer?.blocks);
    expect(said).toContain("The task service refused the request");
    expect(said).toContain("It was caused by your default model `retired-model`");
    expect(said).toContain("the app's Home tab");
    await h.slack.waitFor(
      () => latestHome(user) && shown(latestHome(user) as OpenedView).includes("Not started"),
      { description: "the Home tab listing the task as not started" },
    );
  });
});
