/**
 * The buttons under a finished answer: History (the conversation, paged, status messages on
 * request), Files (paged, each fetched into the thread on request) and Continue… (a follow-up
 * from a form), for the people who may use the app (a guest is told why). Views are
 * validated by the local Slack like Slack validates them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenedView } from "../../tools/local-slack/index.ts";
import {
  sendBlockAction,
  sendViewAction,
  sendViewSubmission,
} from "../../tools/local-slack/slack-requests.ts";
import {
  buttonOf,
  CHANNEL,
  Harness,
  markdownOf,
  OWNER,
  SIGNING_SECRET,
  TEAM,
} from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";
import { rawMarkdown } from "../support/mrkdwn-oracle.ts";

describe.each(storeBackends())("task views with %s", (_name, redis) => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ redisUrl: redis });
  });
  afterAll(async () => {
    await h?.close();
  });

  /** Runs a task and returns its thread and its final answer message. */
  async function finishedTask(prompt: string) {
    await h.command(prompt);
    const threadTs = await h.waitForTaskThread(prompt.replace(/ \[sim:.*$/, ""));
    const answer = (await h.waitForFinal(threadTs)).at(-1);
    if (!answer) throw new Error("no answer");
    return { threadTs, answer };
  }

  /** Clicks a button of a message in `channel` and returns the view it opened, once filled. */
  async function click(
    message: Parameters<typeof buttonOf>[0],
    actionId: string,
    channel = CHANNEL,
    user = OWNER,
  ) {
    const button = buttonOf(message, actionId);
    if (!button) throw new Error(`no ${actionId} button`);
    const before = h.slack.views().length;
    const res = await sendBlockAction(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: user,
      channel_id: channel,
      message_ts: message.ts,
      action_id: button.action_id,
      value: button.value,
      block_id: "task_views",
      response_url: h.slack.responseUrl(`views${Date.now()}`),
    });
    expect(res.status).toBe(200);
    return before;
  }

  /** The view at `index` once it no longer says "Loading…". */
  async function filled(index: number): Promise<OpenedView> {
    const view = await h.slack.waitFor(
      () => {
        const v = h.slack.views()[index];
        return v && !JSON.stringify(v.view.blocks).includes("Loading…") ? v : undefined;
      },
      { description: "the view filled with the service's answer" },
    );
    expect(h.slack.validationErrors).toEqual([]);
    return view;
  }

  const texts = (view: OpenedView) => JSON.stringify(view.view.blocks);

  const press = (view: OpenedView, actionId: string, user = OWNER) => {
    const blocks = view.view.blocks as Array<{
      elements?: Array<Record<string, unknown>>;
      accessory?: Record<string, unknown>;
    }>;
    const button = blocks
      .flatMap((b) => [...(b.elements ?? []), ...(b.accessory ? [b.accessory] : [])])
      .find((e) => e.action_id === actionId);
    if (!button) throw new Error(`no ${actionId} in the view`);
    return sendViewAction(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: user,
      view: view.view,
      action_id: actionId,
      value: String(button.value),
    });
  };

  it("puts History, Files and Continue under a finished answer, and no Stop", async () => {
    const { answer } = await finishedTask("Write a short poem [sim:length=200]");
    expect(buttonOf(answer, "task_history")).toBeDefined();
    expect(buttonOf(answer, "task_files")).toBeDefined();
    expect(buttonOf(answer, "task_continue")).toBeDefined();
    expect(buttonOf(answer, "task_stop")).toBeUndefined();
  });

  it("shows the conversation in History, paged, with status messages on request", async () => {
    const { threadTs } = await finishedTask("Tell a long story [sim:length=200]");
    for (let i = 1; i <= 5; i++) {
      await h.reply(threadTs, `Chapter ${i} please [sim:length=150]`);
      await h.waitForFinal(threadTs, i + 1);
    }
    const answer = h.botReplies(threadTs).at(-1);
    if (!answer) throw new Error("no answer");
    const index = await click(answer, "task_history");
    const first = await filled(index);
    expect(first.view.title).toMatchObject({ text: "Task history" });
    expect(texts(first)).toContain("Tell a long story");
    expect(texts(first)).toContain("Page 1");
    const next = await press(first, "task_view_page_next");
    expect(next.status).toBe(200);
    const second = await h.slack.waitFor(
      () =>
        texts(h.slack.views()[index] ?? first).includes("Page 2")
          ? h.slack.views()[index]
          : undefined,
      { description: "page 2 of the history" },
    );
    expect(texts(second)).toContain("Chapter 5 please");
    await press(second, "task_view_status");
    await h.slack.waitFor(
      () =>
        texts(h.slack.views()[index] ?? first).includes("Hide status messages") ? true : undefined,
      { description: "the history with status messages" },
    );
    expect(h.slack.validationErrors).toEqual([]);
  });

  it("shows the agent's Markdown in History as mrkdwn: bold headings, aligned tables, no raw markers", async () => {
    const { answer } = await finishedTask("Compare the options [sim:length=3000]");
    const view = await filled(await click(answer, "task_history"));
    const sections = (view.view.blocks as Array<{ type: string; text?: { text: string } }>)
      .filter((b) => b.type === "section")
      .map((b) => b.text?.text ?? "");
    const agent = sections.at(-1) ?? "";
    // The simulator's answer has "## " headings, **bold** and a pipe table.
    expect(agent).toMatch(/^\*[^*\n]+\*$/m);
    for (const text of sections) expect(rawMarkdown(text)).toBeUndefined();
  });

  it("shows the host a link really goes to after a label naming another, in the thread and in History", async () => {
    // The simulator's answer quotes the prompt: the link reaches the answer as written.
    const link = "[https://sso.corp](https://evil.example/login)";
    const tagged = "https://sso.corp (evil.example)";
    await h.command(`Sign in at ${link} [sim:length=200]`);
    const threadTs = await h.waitForTaskThread("Sign in at [https://sso.corp (evil.example)]");
    const answer = (await h.waitForFinal(threadTs)).at(-1);
    if (!answer) throw new Error("no answer");
    const root = h.slack.message(CHANNEL, threadTs);
    if (!root) throw new Error("no thread root");
    for (const m of [root, answer]) {
      expect(markdownOf(m)).toContain(`[${tagged}](https://evil.example/login)`);
      expect(markdownOf(m)).not.toContain(link);
    }
    expect(answer.text).toContain(`<https://evil.example/login|${tagged}>`);
    const history = texts(await filled(await click(answer, "task_history")));
    expect(history).toContain(`<https://evil.example/login|${tagged}>`);
    expect(history).not.toContain("|https://sso.corp>");
  });

  it("lists the thread's files in Files, paged, and says when one is already in the thread", async () => {
    const { threadTs, answer } = await finishedTask(
      "Make a report [sim:files=21] [sim:length=100]",
    );
    const index = await click(answer, "task_files");
    const view = await filled(index);
    expect(view.view.title).toMatchObject({ text: "Task files" });
    const rows = (view.view.blocks as Array<{ accessory?: unknown }>).filter((b) => b.accessory);
    expect(rows).toHaveLength(20);
    expect(texts(view)).toContain("task_view_page_next");
    await press(view, "task_file_get");
    const note = await h.slack.waitFor(
      () =>
        h.slack
          .ephemerals(CHANNEL, OWNER)
          .find((e) => e.thread_ts === threadTs && /in the thread/.test(e.text)),
      { description: "the note about the file" },
    );
    expect(note.text).toMatch(/is already in the thread|is now in the thread/);
  });

  it("refuses a guest History, Files and Get it, saying so in the view and privately", async () => {
    h.slack.addUser({ id: "U0GUEST", name: "guest", is_restricted: true });
    const { threadTs, answer } = await finishedTask("Draft a flyer [sim:files=2] [sim:length=100]");
    for (const [action, title] of [
      ["task_history", "Task history"],
      ["task_files", "Task files"],
    ] as const) {
      const view = await filled(await click(answer, action, CHANNEL, "U0GUEST"));
      expect(view.view.title).toMatchObject({ text: title });
      expect(texts(view)).toContain("Guest accounts can't start or continue tasks");
      expect(texts(view)).not.toContain("task_file_get");
    }
    // A Files view the guest had open (say, from before they were made a guest): Get it is
    // refused privately, and nothing comes into the thread.
    const files = await filled(await click(answer, "task_files"));
    const shared = h.slack.files().length;
    await press(files, "task_file_get", "U0GUEST");
    const note = await h.slack.waitFor(
      () => h.slack.ephemerals(CHANNEL, "U0GUEST").find((e) => e.thread_ts === threadTs),
      { description: "the guest's private refusal" },
    );
    expect(note.text).toContain("TASK_ALLOW_GUESTS");
    expect(h.slack.files().length).toBe(shared);
    // The person who asked still gets them.
    await press(files, "task_file_get");
    await h.slack.waitFor(
      () =>
        h.slack
          .ephemerals(CHANNEL, OWNER)
          .find((e) => e.thread_ts === threadTs && /in the thread/.test(e.text)),
      { description: "the owner's note about the file" },
    );
  });

  it("continues the task from the Continue form, shown in the thread", async () => {
    const { threadTs, answer } = await finishedTask("Plan a garden [sim:length=100]");
    const before = h.slack.views().length;
    await click(answer, "task_continue");
    const form = await h.slack.waitFor(() => h.slack.views()[before], {
      description: "the Continue form",
    });
    const res = await sendViewSubmission(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: OWNER,
      view: form.view,
      values: { prompt: { value: { type: "plain_text_input", value: "Add a pond" } } },
    });
    expect(res.status).toBe(200);
    await h.waitForFinal(threadTs, 2);
    expect(h.sim.runs().some((r) => r.prompt === "Add a pond" && r.followUp)).toBe(true);
    const shown = h.slack.thread(CHANNEL, threadTs).map((m) => JSON.stringify(m.blocks ?? m.text));
    expect(shown.some((t) => t.includes("continued the task") && t.includes("Add a pond"))).toBe(
      true,
    );
  });

  it("opens your latest task's History and Files from /task history and /task files", async () => {
    await finishedTask("Name a bakery [sim:length=100]");
    const before = h.slack.views().length;
    await h.command("history");
    const history = await filled(before);
    expect(texts(history)).toContain("Name a bakery");
    await h.command("files");
    const files = await filled(before + 1);
    expect(files.view.title).toMatchObject({ text: "Task files" });
  });

  it("says how to reach a task's views when you have none in the channel", async () => {
    const res = await h.command("history", { user: "U0NOBODY", channel: "C0QUIET" });
    expect(res.status).toBe(200);
    const post = await h.slack.waitFor(
      () => h.slack.responseUrlPosts.find((p) => JSON.stringify(p.body).includes("no recent task")),
      { description: "the private answer" },
    );
    expect(JSON.stringify(post.body)).toContain("History");
  });

  it("refuses a History click that does not come from the task's channel", async () => {
    const { answer } = await finishedTask("Sketch a map [sim:length=100]");
    const button = buttonOf(answer, "task_history");
    const before = h.slack.views().length;
    const id = `elsewhere${Date.now()}`;
    await sendBlockAction(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: OWNER,
      channel_id: "C0ELSEWHERE",
      message_ts: answer.ts,
      action_id: "task_history",
      value: button?.value ?? "",
      response_url: h.slack.responseUrl(id),
    });
    const post = await h.slack.waitFor(() => h.slack.responseUrlPosts.find((p) => p.id === id), {
      description: "the private refusal",
    });
    expect(JSON.stringify(post.body)).toContain("does not belong to this conversation");
    expect(h.slack.views().length).toBe(before);
  });

  it("says so in the view when the service no longer has the task", async () => {
    const threadTs = "1799999999.000100";
    const now = Date.now();
    await h.app.store.putThread({
      teamId: TEAM,
      channelId: CHANNEL,
      threadTs,
      service: { projectId: "proj_gone", threadId: "thr_gone" },
      surface: "channel",
      ownerUserId: OWNER,
      active: { kind: "idle" },
      lastRunId: undefined,
      queue: [],
      createdAt: now,
      updatedAt: now,
    });
    const before = h.slack.views().length;
    await sendBlockAction(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: OWNER,
      channel_id: CHANNEL,
      message_ts: threadTs,
      action_id: "task_history",
      value: JSON.stringify({ c: CHANNEL, t: threadTs }),
    });
    const view = await filled(before);
    expect(texts(view)).toContain("no longer has this task");
  });
});
