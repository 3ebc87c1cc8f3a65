/**
 * A workspace's usage policy through Slack, end to end (the real app, the local Slack, the
 * service simulator): an admin sets it from App Home; someone outside the allowed user group,
 * or in a channel not on the list, or past their hourly quota, is told why privately and no
 * task reaches the service; the service's 402 and 429 show in the admins' App Home until a
 * task starts again. People who are not admins never see the form.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { sendAppHomeOpened, sendViewAction } from "../../tools/local-slack/home-requests.ts";
import type { OpenedView } from "../../tools/local-slack/index.ts";
import {
  type SlackHttpResponse,
  sendViewSubmission,
} from "../../tools/local-slack/slack-requests.ts";
import {
  ADMIN,
  CHANNEL,
  Harness,
  OTHER,
  SIGNING_SECRET,
  statusOf,
  TEAM,
} from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";

type Values = Record<string, Record<string, Record<string, unknown>>>;
const TASKS_CHANNEL = "C0TASKS";

/** The form's fields as Slack submits them. */
function policyForm(f: {
  groups?: string[];
  channels?: string[];
  quota?: string;
  join?: boolean;
}): Values {
  const radio = (value: string) => ({
    value: { type: "radio_buttons", selected_option: { value } },
  });
  return {
    usage_who: radio(f.groups ? "groups" : "everyone"),
    usage_groups: {
      value: {
        type: "multi_static_select",
        selected_options: (f.groups ?? []).map((value) => ({ value })),
      },
    },
    usage_where: radio(f.channels ? "channels" : "all"),
    usage_channels: {
      value: { type: "multi_conversations_select", selected_conversations: f.channels ?? [] },
    },
    usage_quota: { value: { type: "number_input", value: f.quota ?? "0" } },
    usage_join: radio(f.join ? "join" : "invite"),
  };
}

let people = 0;

describe.each(storeBackends())("the usage policy with %s", (_name, redis) => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ redisUrl: redis });
  });
  afterAll(async () => {
    await h?.close();
  });

  /** A person of their own for each test (the quota and Home refreshes are per person). */
  function newPerson(): string {
    const id = `U0POL${++people}`;
    h.slack.addUser({ id, name: `person${people}` });
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
  const shown = (view: OpenedView) => JSON.stringify(view.view.blocks);

  /** The admin opens the Usage policy form from their Home tab. */
  async function openPolicyForm(user = ADMIN): Promise<OpenedView> {
    const home = await openHome(user);
    const before = h.slack.views().length;
    const res = await sendViewAction(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: user,
      view: home.view,
      action_id: "open_workspace_settings",
      block_id: "home_admin",
    });
    expect(res.status).toBe(200);
    const modal = await h.slack.waitFor(() => h.slack.views()[before], {
      description: "the Workspace settings form",
    });
    expect(h.slack.validationErrors).toEqual([]);
    return modal;
  }

  const submit = (view: OpenedView, user: string, values: Values): Promise<SlackHttpResponse> =>
    sendViewSubmission(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: user,
      view: view.view,
      values,
    });

  /** The admin saves a policy through the form. */
  async function setPolicy(values: Values): Promise<void> {
    const form = await openPolicyForm();
    expect(form.view.callback_id).toBe("workspace_settings");
    const res = await submit(form, ADMIN, values);
    expect(res.body).toBe("");
  }

  /** `/task <prompt>` by `user`; resolves with what they were told privately, if anything. */
  async function command(prompt: string, user: string, channel = CHANNEL): Promise<string> {
    const before = h.slack.responseUrlPosts.length;
    await h.command(prompt, { user, channel });
    const post = await h.slack.waitFor(() => h.slack.responseUrlPosts[before], {
      description: `the private answer to "${prompt}"`,
    });
    expect(post.body).toMatchObject({ response_type: "ephemeral" });
    return String((post.body as { text?: unknown }).text);
  }

  /** Whether the service got a task or follow-up whose prompt has `text` (directives aside). */
  const reachedService = (text: string) => h.sim.runs().some((r) => r.promptText.includes(text));

  beforeEach(async () => {
    await setPolicy(policyForm({}));
  });

  it("writes a change of the policy to the audit trail, and a save that changes nothing not", async () => {
    const changes = () =>
      h.logLines
        .map((l) => (JSON.parse(l) as { audit?: Record<string, unknown> }).audit)
        .filter((a) => a?.what === "usage_policy.changed");
    const before = changes().length;
    await setPolicy(policyForm({}));
    expect(changes()).toHaveLength(before);
    await setPolicy(policyForm({ quota: "5" }));
    expect(changes().slice(before)).toEqual([
      expect.objectContaining({
        who: ADMIN,
        workspace: TEAM,
        detail: "everyone; every channel; 5 per person per hour; joins no channel by itself",
      }),
    ]);
  });

  it("shows the Workspace settings button to admins only, and refuses the form to anyone else", async () => {
    const person = newPerson();
    expect(shown(await openHome(person))).not.toContain("open_workspace_settings");
    const home = await openHome(ADMIN);
    expect(shown(home)).toContain("open_workspace_settings");
    // A person replaying the admin's button gets a notice, not the form.
    const notice = await openPolicyForm(person);
    expect(JSON.stringify(notice.view)).toContain("Only workspace admins and owners");
    // A form submitted by someone who is not an admin is not saved.
    const form = await openPolicyForm();
    const res = await submit(form, person, policyForm({ quota: "1" }));
    expect(JSON.stringify(res.json)).toContain("Only workspace admins and owners");
  });

  it("says what to fix in the form: a group policy without a group, a quota that is not a number", async () => {
    const form = await openPolicyForm();
    const res = await submit(form, ADMIN, {
      ...policyForm({ groups: [] }),
      usage_quota: { value: { type: "number_input", value: "lots" } },
    });
    expect(res.json).toMatchObject({
      response_action: "errors",
      errors: {
        usage_groups: "Pick at least one user group, or let everyone start tasks.",
        usage_quota: "A whole number from 0 (no quota) to 1000.",
      },
    });
  });

  it("refuses someone outside the allowed user group privately, and no task reaches the service", async () => {
    const [member, outsider] = [newPerson(), newPerson()];
    const builders = h.slack.addUserGroup({ handle: "builders", users: [member] });
    // The form offers the workspace's groups by handle.
    expect(JSON.stringify((await openPolicyForm()).view)).toContain("@builders");
    await setPolicy(policyForm({ groups: [builders] }));

    const told = await command("Build an outsider's shop", outsider);
    expect(told).toBe(
      `Only members of <!subteam^${builders}> may start tasks in this workspace (set by its admins).`,
    );
    expect(reachedService("Build an outsider's shop")).toBe(false);

    await h.command("Build the builders' shop [sim:length=50]", { user: member });
    const threadTs = await h.waitForTaskThread("Build the builders' shop");
    await h.waitForFinal(threadTs);
    expect(reachedService("Build the builders' shop")).toBe(true);

    // Replying in a member's thread is starting a run too: refused in the thread, privately.
    await h.reply(threadTs, "Add my own page please", { user: outsider });
    const refusal = await h.slack.waitFor(
      () => h.slack.ephemerals(CHANNEL, outsider).find((e) => e.text.includes("subteam")),
      { description: "the outsider's private refusal in the thread" },
    );
    expect(refusal.thread_ts).toBe(threadTs);
    expect(reachedService("Add my own page")).toBe(false);
  });

  it("refuses a task in a channel not on the list, naming the channels that are", async () => {
    const person = newPerson();
    await setPolicy(policyForm({ channels: [TASKS_CHANNEL] }));
    const told = await command("Plan the offsite", person);
    expect(told).toBe(
      `Tasks can't be started in this channel: this workspace allows them only in <#${TASKS_CHANNEL}> (set by its admins).`,
    );
    expect(reachedService("Plan the offsite")).toBe(false);
  });

  it("joins a public channel it is not in only once an admin lets it: until then it says how to invite it", async () => {
    const person = newPerson();
    const channel = "C0NOTYET";
    h.slack.notInChannel.add(channel);
    // Off by default: /task there joins nothing, posts nothing, and says what to do, privately.
    const from = h.slack.calls.length;
    const told = await command("Draft the launch notes", person, channel);
    expect(told).toContain("Invite me with `/invite @Task Agent`");
    expect(told).toContain("ask a workspace admin to let me join public channels by myself");
    const made = () => h.slack.calls.slice(from);
    expect(made().some((c) => c.method === "conversations.join")).toBe(false);
    expect(h.slack.messages(channel)).toEqual([]);
    expect(reachedService("Draft the launch notes")).toBe(false);

    // The admin's form shows the choice; once they let it, the same /task joins and runs there.
    const form = await openPolicyForm();
    expect(JSON.stringify(form.view.blocks)).toContain("Public channels I'm not in");
    await setPolicy(policyForm({ join: true }));
    await h.command("Draft the launch notes again [sim:length=50]", { user: person, channel });
    const root = await h.slack.waitFor(
      () => h.slack.messages(channel).find((m) => JSON.stringify(m.blocks).includes("again")),
      { description: "the task's thread in the channel it joined" },
    );
    await h.slack.waitFor(
      () =>
        h.slack
          .thread(channel, root.ts)
          .some((m) => /Completed in/.test(statusOf(m)) && m.user === h.slack.botUserId),
      { description: "the task's final answer there" },
    );
    const joins = made().filter((c) => c.method === "conversations.join");
    expect(joins.map((c) => [c.args.channel, c.response.ok])).toEqual([[channel, true]]);
  });

  it("does not join again a public channel it was removed from, even when it still took itself for a member", async () => {
    const person = newPerson();
    const channel = "C0REMOVED";
    await h.command("Sketch the roadmap [sim:length=50]", { user: person, channel });
    await h.slack.waitFor(
      () => h.slack.messages(channel).some((m) => m.user === h.slack.botUserId),
      { description: "the first task in the channel" },
    );
    await h.settled();
    // Removed from the channel: the app took itself for a member a moment ago (it remembers
    // that for a while), so Slack's refusal of the post is what tells it.
    h.slack.notInChannel.add(channel);
    const from = h.slack.calls.length;
    const told = await command("Sketch the roadmap again", person, channel);
    expect(told).toContain("Invite me with `/invite @Task Agent`");
    const made = h.slack.calls.slice(from);
    expect(
      made.some((c) => c.method === "chat.postMessage" && c.response.error === "not_in_channel"),
    ).toBe(true);
    expect(made.some((c) => c.method === "conversations.join")).toBe(false);
  });

  it("refuses a person's third task in an hour when the quota is two, saying when they can start another", async () => {
    const person = newPerson();
    await setPolicy(policyForm({ quota: "2" }));
    for (const prompt of ["Quota one [sim:length=20]", "Quota two [sim:length=20]"]) {
      await h.command(prompt, { user: person });
      await h.waitForFinal(await h.waitForTaskThread(prompt.replace(/ \[.*$/, "")));
    }
    const told = await command("Quota three", person);
    expect(told).toMatch(
      /^You have started 2 tasks in the last hour \(follow-ups included\), the most this workspace allows per person\. You can start another in \d+ min\.$/,
    );
    expect(reachedService("Quota three")).toBe(false);
    // Someone else still can.
    await h.command("Quota for another person [sim:length=20]", { user: OTHER });
    await h.waitForFinal(await h.waitForTaskThread("Quota for another person"));
  });

  it("shows the admins the service's 402 and 429 in App Home until a task starts again", async () => {
    const person = newPerson();
    const alert = () => h.app.store.getRecord(`t:${TEAM}:service-alert`);

    await h.command("Out of credits [sim:fail_create=402]", { user: person });
    const broke = await h.waitForFinal(await h.waitForTaskThread("Out of credits"));
    expect(statusOf(broke[0] ?? { channel: "", ts: "", user: "", text: "" })).toContain(
      "out of credits",
    );
    await vi.waitFor(async () => expect(await alert()).toMatchObject({ status: 402 }));
    const home = shown(await openHome(ADMIN));
    expect(home).toContain(
      "The Task service said the workspace is out of credits (402) at <!date^",
    );
    // People who are not admins see nothing of it.
    expect(shown(await openHome(person))).not.toContain("The Task service said");

    await h.command("Too many [sim:fail_create=429]", { user: person });
    await h.waitForFinal(await h.waitForTaskThread("Too many"));
    await vi.waitFor(async () => expect(await alert()).toMatchObject({ status: 429 }));
    expect(shown(await openHome(ADMIN))).toMatch(
      /The Task service said the workspace is rate-limited \(429\) at <!date\^\d+.*: resets at <!date\^\d+/,
    );

    await h.command("Fine again [sim:length=20]", { user: person });
    await h.waitForFinal(await h.waitForTaskThread("Fine again"));
    await vi.waitFor(async () => expect(await alert()).toBeUndefined());
    expect(shown(await openHome(ADMIN))).not.toContain("The Task service said");
  });
});
