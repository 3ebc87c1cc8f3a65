/**
 * The "New task" modal: `/task` alone, the global shortcut and the message shortcut open it
 * (validated like Slack validates views); submitting it starts a task with its options and
 * files, shows what to fix inside the modal, and counts a double submission once.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_USAGE_POLICY, putUsagePolicy } from "../../src/store/usage-policy.ts";
import type { OpenedView } from "../../tools/local-slack/index.ts";
import {
  type SlackHttpResponse,
  sendShortcut,
  sendViewSubmission,
} from "../../tools/local-slack/slack-requests.ts";
import { CHANNEL, Harness, OWNER, SIGNING_SECRET, TEAM } from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";

type Values = Record<string, Record<string, Record<string, unknown>>>;
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** An input's value as Slack puts it in `state.values` (the element's action id is `value`). */
const text = (value: string) => ({ value: { type: "plain_text_input", value } });
const picked = (value: string) => ({
  value: {
    type: "static_select",
    selected_option: { value, text: { type: "plain_text", text: value } },
  },
});
const channel = (id: string) => ({
  value: { type: "conversations_select", selected_conversation: id },
});

describe.each(storeBackends())("the New task modal with %s", (_name, redis) => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ redisUrl: redis, env: { TASK_MODELS: "swift-1, deep-2" } });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function opened(from: number): Promise<OpenedView> {
    const view = await h.slack.waitFor(() => h.slack.views()[from], {
      description: "a view opened with views.open",
    });
    expect(h.slack.validationErrors).toEqual([]);
    return view;
  }

  const submit = (view: OpenedView, values: Values): Promise<SlackHttpResponse> =>
    sendViewSubmission(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: OWNER,
      view: view.view,
      values,
    });

  const blockOf = (view: OpenedView, id: string) =>
    (view.view.blocks as Array<Record<string, unknown>>).find((b) => b.block_id === id);

  it("opens from /task with no text, in the channel it was typed in, with the configured models", async () => {
    const before = h.slack.views().length;
    const res = await h.command("");
    expect(res.status).toBe(200);
    const view = await opened(before);
    expect(view.view.callback_id).toBe("new_task");
    const element = (id: string) => blockOf(view, id)?.element as Record<string, unknown>;
    expect(element("channel").initial_conversation).toBe(CHANNEL);
    expect(element("model").type).toBe("static_select");
    expect((element("model").options as unknown[]).length).toBe(2);
    // No agents configured: free text.
    expect(element("agent").type).toBe("plain_text_input");
    expect(element("files")).toMatchObject({ type: "file_input", max_files: 10 });
  });

  it("starts the task it describes: prompt, options and files, posted in the chosen channel", async () => {
    const before = h.slack.views().length;
    await h.command("");
    const view = await opened(before);
    const brief = h.slack.addUserFile({ name: "brief.md", bytes: "# A bakery" });
    const res = await submit(view, {
      prompt: text("Build a landing page from the brief"),
      channel: channel(CHANNEL),
      model: picked("deep-2"),
      agent: text("web-builder"),
      effort: picked("high"),
      flags: {
        value: { type: "checkboxes", selected_options: [{ value: "thinking" }] },
      },
      files: { value: { type: "file_input", files: [brief] } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toBe("");
    const threadTs = await h.waitForTaskThread("Build a landing page from the brief");
    await h.waitForFinal(threadTs);
    const run = h.sim.runs().find((r) => r.prompt === "Build a landing page from the brief");
    expect(run?.request).toMatchObject({
      modelName: "deep-2",
      agentId: "web-builder",
      reasoningEffort: "high",
      enableThinking: true,
    });
    expect(run?.request.files.map((f) => [f.name, f.sha256])).toEqual([
      ["brief.md", sha256("# A bakery")],
    ]);
    // The thread's first message names the attached file.
    const root = h.slack.message(CHANNEL, threadTs);
    expect(JSON.stringify(root?.blocks)).toContain("brief.md");
  });

  it("starts no task in a channel the person is not in, and tells them in the DM what to do", async () => {
    const elsewhere = "C0ELSEWHERE";
    // The bot is not in it either, and may join public channels by itself: it would join it.
    h.slack.notInChannel.add(elsewhere);
    await putUsagePolicy(h.app.store, TEAM, { ...DEFAULT_USAGE_POLICY, joinPublicChannels: true });
    h.slack.setChannelMembers(elsewhere, ["U0OTHER"]);
    const before = h.slack.views().length;
    await h.command("");
    const view = await opened(before);
    const runs = h.sim.runs().length;
    const calls = h.slack.calls.length;
    const res = await submit(view, {
      prompt: text("Announce the offsite"),
      channel: channel(elsewhere),
    });
    expect(res.status).toBe(200);
    const dm = `D${OWNER.slice(1)}`;
    const told = await h.slack.waitFor(
      () => h.slack.messages(dm).find((m) => m.text?.includes(`<#${elsewhere}>`)),
      { description: "the refusal in the person's DM" },
    );
    expect(told.text).toContain("You are not a member of");
    expect(told.text).toContain("Join the channel");
    const made = h.slack.calls.slice(calls).map((c) => c.method);
    expect(made).toContain("conversations.members");
    expect(made).not.toContain("conversations.join");
    expect(h.slack.messages(elsewhere)).toEqual([]);
    expect(h.sim.runs().length).toBe(runs);

    // Once the person is in it, the same form starts the task there.
    h.slack.setChannelMembers(elsewhere, ["U0OTHER", OWNER]);
    await submit(view, { prompt: text("Announce the offsite"), channel: channel(elsewhere) });
    await h.slack.waitFor(
      () =>
        h.sim.runs().find((r) => r.prompt === "Announce the offsite" && r.status === "completed"),
      { description: "the task run to its end" },
    );
    await h.slack.waitFor(
      () => h.slack.messages(elsewhere).find((m) => m.text?.includes("Announce the offsite")),
      { description: "the task posted in the channel" },
    );
    await h.settled();
  });

  it("shows what to fix inside the modal, and starts nothing", async () => {
    const before = h.slack.views().length;
    await h.command("");
    const view = await opened(before);
    const runs = h.sim.runs().length;
    const empty = await submit(view, { prompt: text(""), channel: channel(CHANNEL) });
    expect(JSON.parse(empty.body)).toEqual({
      response_action: "errors",
      errors: { prompt: "Write what the agent should do, or attach a file below." },
    });
    const misspelled = await submit(view, {
      prompt: text("[efort=high] Build it"),
      channel: channel(CHANNEL),
    });
    const errors = (JSON.parse(misspelled.body) as { errors: Record<string, string> }).errors;
    expect(errors.prompt).toContain("Unknown option efort. Did you mean effort?");
    expect(h.sim.runs().length).toBe(runs);
  });

  it("starts one task when the same modal is submitted twice", async () => {
    const before = h.slack.views().length;
    await h.command("");
    const view = await opened(before);
    const values = { prompt: text("Draw a logo for a tea shop"), channel: channel(CHANNEL) };
    const [a, b] = await Promise.all([submit(view, values), submit(view, values)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const threadTs = await h.waitForTaskThread("Draw a logo for a tea shop");
    await h.waitForFinal(threadTs);
    expect(h.sim.runs().filter((r) => r.prompt === "Draw a logo for a tea shop")).toHaveLength(1);
  });

  it("opens from the global shortcut, and from a message with the message quoted", async () => {
    const before = h.slack.views().length;
    await sendShortcut(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: OWNER,
      callback_id: "new_task",
    });
    const global = await opened(before);
    expect(
      (blockOf(global, "channel")?.element as Record<string, unknown>).initial_conversation,
    ).toBe(undefined);
    const ts = h.slack.addMessage({
      channel: CHANNEL,
      user: "U0OTHER",
      text: "Our signup page is slow",
    });
    await sendShortcut(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: OWNER,
      callback_id: "ask_task_agent",
      message: { channel: CHANNEL, ts, text: "Our signup page is slow", user: "U0OTHER" },
    });
    const asked = await opened(before + 1);
    const prompt = blockOf(asked, "prompt")?.element as Record<string, unknown>;
    expect(prompt.initial_value).toBe("> Our signup page is slow\n\n");
    expect(
      (blockOf(asked, "channel")?.element as Record<string, unknown>).initial_conversation,
    ).toBe(CHANNEL);
  });
});
