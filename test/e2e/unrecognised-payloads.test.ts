/**
 * Payloads this version of the app does not handle (a button of an older version, a modal left
 * open across a deploy, a renamed shortcut or command) are answered at once, as Slack requires
 * within 3 seconds: the person is told privately what happened, and the log says it once.
 * Bolt answers such a payload only after 3 seconds, with HTTP 404 (and over Socket Mode never):
 * an HTTP 200 here means the app acknowledged it. Events of types the app does not subscribe to
 * keep getting their 200.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Running, startApp } from "../../src/bootstrap.ts";
import { parseConfig } from "../../src/config/config.ts";
import type { Simulator } from "../../tools/simulator/server.ts";
import type { LocalSlack } from "../../tools/local-slack/index.ts";
import { LocalSocketMode } from "../../tools/local-slack/local-socket-mode.ts";
import {
  blockActionPayload,
  sendBlockAction,
  sendEvent,
  sendShortcut,
  sendSlashCommand,
  sendViewAction,
  sendViewClosed,
  sendViewSubmission,
  shortcutPayload,
  viewSubmissionPayload,
} from "../../tools/local-slack/slack-requests.ts";
import {
  appEnv,
  CHANNEL,
  Harness,
  OWNER,
  SIGNING_SECRET,
  startPeers,
  TEAM,
} from "../support/harness.ts";
import { createLogger } from "../../src/log.ts";

const OLD_VIEW = { id: "V0OLDFORM", callback_id: "task_form_v1", type: "modal", hash: "1.abc" };
const told = (text: string) => expect.stringContaining(`This ${text} belongs to an older version`);

describe("payloads this version does not handle (HTTP)", () => {
  let h: Harness;
  let seq = 0;
  beforeAll(async () => {
    h = await Harness.start();
  });
  afterAll(async () => {
    await h?.close();
  });

  const logged = (id: string) =>
    h.logLines.filter((l) => l.includes("does not handle") && l.includes(id));

  it("answers a button of an older version at once and says so privately under the message", async () => {
    const id = `old-button-${++seq}`;
    const url = h.slack.responseUrl(id);
    const res = await sendBlockAction(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: OWNER,
      channel_id: CHANNEL,
      message_ts: "1700000000.000100",
      action_id: "task_retry_v0",
      value: "{}",
      response_url: url,
    });
    expect(res.status).toBe(200);
    const post = await h.slack.waitFor(() => h.slack.responseUrlPosts.find((p) => p.id === id), {
      description: "the private answer",
    });
    expect(post.body).toMatchObject({
      response_type: "ephemeral",
      replace_original: false,
      text: told("button"),
    });
    expect(logged("task_retry_v0")).toHaveLength(1);
    expect(logged("task_retry_v0")[0]).toContain('"level":30');
  });

  it("answers the submission of a modal of an older version inside the modal", async () => {
    const res = await sendViewSubmission(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: OWNER,
      view: OLD_VIEW,
      values: {},
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      response_action: "update",
      view: { type: "modal", blocks: [{ text: { text: told("form") } }] },
    });
    expect(logged("task_form_v1")).toHaveLength(1);
  });

  it("acknowledges a closed modal of an older version (nobody is waiting)", async () => {
    const res = await sendViewClosed(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: OWNER,
      view: { ...OLD_VIEW, callback_id: "task_closed_v1" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toBe("");
    expect(logged("task_closed_v1")).toHaveLength(1);
  });

  it("answers a renamed global shortcut and a renamed message shortcut with a modal", async () => {
    for (const [callback, message] of [
      ["old_new_task", undefined],
      ["old_ask", { channel: CHANNEL, ts: "1700000000.000200", text: "hi", user: OWNER }],
    ] as const) {
      const trigger = `trig.old.${++seq}.${Date.now()}`;
      const res = await sendShortcut(h.eventsUrl, SIGNING_SECRET, {
        team_id: TEAM,
        user_id: OWNER,
        callback_id: callback,
        trigger_id: trigger,
        ...(message ? { message } : {}),
      });
      expect(res.status).toBe(200);
      const opened = await h.slack.waitFor(
        () => h.slack.views().find((v) => v.trigger === trigger),
        { description: `the notice for ${callback}` },
      );
      expect(JSON.stringify(opened.view)).toContain("This shortcut belongs to an older version");
      expect(logged(callback)).toHaveLength(1);
    }
    expect(h.slack.validationErrors).toEqual([]);
  });

  it("replaces an open modal whose button this version does not know", async () => {
    const before = h.slack.views().length;
    await h.command("");
    const form = await h.slack.waitFor(() => h.slack.views()[before], {
      description: "the New task modal",
    });
    const res = await sendViewAction(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: OWNER,
      view: { ...form.view, id: form.id },
      action_id: "old_toggle",
      value: "x",
    });
    expect(res.status).toBe(200);
    await h.slack.waitForCall((c) => c.method === "views.update" && c.args.view_id === form.id);
    expect(JSON.stringify(h.slack.views().find((v) => v.id === form.id)?.view)).toContain(
      "This button belongs to an older version",
    );
  });

  it("answers an unknown slash command in its acknowledgement", async () => {
    const res = await sendSlashCommand(h.eventsUrl, SIGNING_SECRET, {
      command: "/task-old",
      text: "hello",
      team_id: TEAM,
      user_id: OWNER,
      channel_id: CHANNEL,
      response_url: h.slack.responseUrl(`old-command-${++seq}`),
      trigger_id: `trig.cmd.${seq}`,
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ response_type: "ephemeral", text: told("command") });
  });

  it("keeps answering events of types it does not subscribe to with 200, and logs nothing of them", async () => {
    const res = await sendEvent(h.eventsUrl, SIGNING_SECRET, {
      event_id: `EvUnsub${++seq}`,
      team_id: TEAM,
      event: { type: "reaction_added", user: OWNER, reaction: "tada", item: { type: "message" } },
    });
    expect(res.status).toBe(200);
    expect(h.logLines.some((l) => l.includes("does not handle") && l.includes("reaction"))).toBe(
      false,
    );
  });
});

describe("payloads this version does not handle (Socket Mode)", () => {
  let sim: Simulator;
  let slack: LocalSlack;
  let socket: LocalSocketMode;
  let running: Running;
  const dataDir = mkdtempSync(join(tmpdir(), "taskbot-unrecognised-"));

  beforeAll(async () => {
    ({ sim, slack } = await startPeers());
    socket = await LocalSocketMode.start();
    slack.socketModeUrl = socket.url;
    const env = appEnv(sim, slack, {
      SLACK_APP_TOKEN: slack.appToken,
      SLACK_SIGNING_SECRET: "",
      PORT: "0", // the system picks a free port as it binds (no port picked, then taken)
      DATA_DIR: dataDir,
    });
    running = await startApp(parseConfig(env), createLogger({ level: "silent" }));
    await socket.connected();
  });
  afterAll(async () => {
    await running?.close();
    await socket?.close();
    await sim?.close();
    await slack?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // LocalSocketMode.send rejects when no acknowledgement comes (Bolt's Socket Mode receiver
  // never acknowledges what no listener matched).
  it("acknowledges an older version's button, form and shortcut over the socket", async () => {
    const button = blockActionPayload({
      team_id: TEAM,
      user_id: OWNER,
      channel_id: CHANNEL,
      message_ts: "1700000000.000300",
      action_id: "task_retry_v0",
      value: "{}",
      response_url: slack.responseUrl("socket-old-button"),
    });
    expect((await socket.send("interactive", button)).envelope_id).toBeTruthy();
    await slack.waitFor(() => slack.responseUrlPosts.find((p) => p.id === "socket-old-button"), {
      description: "the private answer",
    });

    const form = viewSubmissionPayload({
      team_id: TEAM,
      user_id: OWNER,
      view: OLD_VIEW,
      values: {},
    });
    const formAck = await socket.send("interactive", form);
    expect(formAck.payload).toMatchObject({ response_action: "update" });

    const shortcut = shortcutPayload({ team_id: TEAM, user_id: OWNER, callback_id: "old_sc" });
    expect((await socket.send("interactive", shortcut)).envelope_id).toBeTruthy();
  });
});
