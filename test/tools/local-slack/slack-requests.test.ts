/**
 * The signed-request helpers, proven against a REAL Bolt App (default HTTPReceiver) whose WebClient
 * talks to the local Slack double: correctly signed requests are acked, forged and stale ones get 401.
 */
import type { AddressInfo } from "node:net";
import { App, LogLevel, verifySlackRequest } from "@slack/bolt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalSlack } from "../../../tools/local-slack/index.ts";
import { startLocalSlack } from "../../../tools/local-slack/index.ts";
import {
  blockActionPayload,
  eventsUrl,
  FORM_CONTENT_TYPE,
  sendBlockAction,
  sendEvent,
  sendSignedRequest,
  sendSlashCommand,
  sendUrlVerification,
  signSlackRequest,
  slackSignatureHeaders,
  slashCommandFields,
} from "../../../tools/local-slack/slack-requests.ts";

const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";

describe("signing", () => {
  it("matches Slack's documented example signature", () => {
    // https://api.slack.com/authentication/verifying-requests-from-slack (worked example)
    const body =
      "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    expect(signSlackRequest(SECRET, 1531420618, body)).toBe(
      "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
    );
  });

  it("produces headers Bolt's own verifier accepts, and forged/stale ones it rejects", () => {
    const body = '{"type":"event_callback"}';
    const check = (headers: Record<string, string>) => () =>
      verifySlackRequest({
        signingSecret: SECRET,
        body,
        headers: {
          "x-slack-signature": headers["x-slack-signature"] ?? "",
          "x-slack-request-timestamp": Number(headers["x-slack-request-timestamp"]),
        },
      });
    expect(check(slackSignatureHeaders(SECRET, body, "application/json"))).not.toThrow();
    expect(check(slackSignatureHeaders(SECRET, body, "application/json", { forge: true }))).toThrow(
      /signature mismatch/,
    );
    expect(check(slackSignatureHeaders(SECRET, body, "application/json", { stale: true }))).toThrow(
      /stale/,
    );
  });

  it("defaults the path to /slack/events", () => {
    expect(eventsUrl("http://127.0.0.1:1234")).toBe("http://127.0.0.1:1234/slack/events");
    expect(eventsUrl("http://127.0.0.1:1234/custom")).toBe("http://127.0.0.1:1234/custom");
  });

  it("builds a realistic block_actions payload", () => {
    const payload = blockActionPayload({
      team_id: "T0001",
      user_id: "U1",
      channel_id: "C1",
      message_ts: "1700000000.000200",
      thread_ts: "1700000000.000100",
      action_id: "cancel_task",
      value: "task-42",
    });
    expect(payload).toMatchObject({
      type: "block_actions",
      user: { id: "U1", team_id: "T0001" },
      team: { id: "T0001" },
      channel: { id: "C1" },
      container: {
        type: "message",
        message_ts: "1700000000.000200",
        channel_id: "C1",
        is_ephemeral: false,
        thread_ts: "1700000000.000100",
      },
      message: { ts: "1700000000.000200", thread_ts: "1700000000.000100" },
      actions: [
        { action_id: "cancel_task", value: "task-42", type: "button", block_id: "actions" },
      ],
    });
  });
});

describe("against a real Bolt App", () => {
  let slack: LocalSlack;
  let app: App;
  let url: string;
  const commands: { text: string; user: string; channel: string }[] = [];
  const messages: { text: string; retryNum?: number; retryReason?: string }[] = [];
  const actions: { value: string; message_ts: string }[] = [];

  beforeAll(async () => {
    slack = await startLocalSlack();
    app = new App({
      token: slack.botToken,
      signingSecret: SECRET,
      clientOptions: { slackApiUrl: slack.apiUrl },
      logLevel: LogLevel.ERROR,
    });
    app.command("/task", async ({ command, ack, respond, client }) => {
      await ack();
      commands.push({ text: command.text, user: command.user_id, channel: command.channel_id });
      await respond({ response_type: "ephemeral", text: `Starting: ${command.text}` });
      await client.chat.postMessage({ channel: command.channel_id, text: `Task: ${command.text}` });
    });
    app.message(async ({ message, context, client }) => {
      const text = "text" in message && typeof message.text === "string" ? message.text : "";
      const entry: (typeof messages)[number] = { text };
      if (context.retryNum !== undefined) entry.retryNum = context.retryNum;
      if (context.retryReason !== undefined) entry.retryReason = context.retryReason;
      messages.push(entry);
      // Bolt acks events before listeners run; a Web API call is what the test can wait on.
      await client.reactions.add({
        channel: message.channel,
        timestamp: message.ts,
        name: context.retryNum === undefined ? "eyes" : "repeat",
      });
    });
    app.action("cancel_task", async ({ ack, action, body }) => {
      const value = action.type === "button" ? (action.value ?? "") : "";
      const messageTs = body.type === "block_actions" ? (body.message?.ts ?? "") : "";
      actions.push({ value, message_ts: messageTs });
      await ack();
    });
    // App.start(0) resolves with the receiver's http.Server listening on an ephemeral port.
    const server = await app.start(0);
    const port = (server.address() as AddressInfo).port;
    url = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await app?.stop();
    await slack?.close();
  });

  it("Bolt's WebClient talks to the double (auth.test at start-up)", async () => {
    await slack.waitForCall((c) => c.method === "auth.test" && c.response.ok);
  });

  it("acks a signed slash command, and the handler's Web API calls reach the double", async () => {
    const response = await sendSlashCommand(url, SECRET, {
      text: "build a todo app",
      team_id: "T0001",
      user_id: "U1",
      channel_id: "C1",
      response_url: slack.responseUrl("cmd-ok"),
    });
    expect(response.status).toBe(200);
    const post = await slack.waitFor(() => slack.responseUrlPosts.find((p) => p.id === "cmd-ok"));
    expect(post.body).toMatchObject({
      response_type: "ephemeral",
      text: "Starting: build a todo app",
    });
    await slack.waitForCall(
      (c) => c.method === "chat.postMessage" && c.args.text === "Task: build a todo app",
    );
    expect(commands).toContainEqual({ text: "build a todo app", user: "U1", channel: "C1" });
  });

  it("refuses a forged slash command with 401 and never runs the handler", async () => {
    const before = commands.length;
    const response = await sendSlashCommand(
      url,
      SECRET,
      { text: "forged", team_id: "T0001", user_id: "U1", channel_id: "C1" },
      { forge: true },
    );
    expect(response.status).toBe(401);
    expect(response.body).toBe("");
    expect(commands).toHaveLength(before);
  });

  it("refuses a stale (6 minutes old) slash command with 401", async () => {
    const before = commands.length;
    const response = await sendSlashCommand(
      url,
      SECRET,
      { text: "replayed", team_id: "T0001", user_id: "U1", channel_id: "C1" },
      { stale: true },
    );
    expect(response.status).toBe(401);
    expect(commands).toHaveLength(before);
  });

  it("answers url_verification with the challenge", async () => {
    const response = await sendUrlVerification(url, SECRET, "challenge-123");
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ challenge: "challenge-123" });
    expect((await sendUrlVerification(url, SECRET, "c", { forge: true })).status).toBe(401);
  });

  it("delivers events, exposing Slack's retry headers as context.retryNum/retryReason", async () => {
    const event = {
      type: "message",
      channel: "C1",
      channel_type: "channel",
      user: "U1",
      text: "hello bot",
      ts: "1700000001.000100",
    };
    const first = await sendEvent(url, SECRET, { event_id: "Ev001", team_id: "T0001", event });
    expect(first.status).toBe(200);
    const retry = await sendEvent(
      url,
      SECRET,
      { event_id: "Ev001", team_id: "T0001", event },
      { retryNum: 1, retryReason: "http_timeout" },
    );
    expect(retry.status).toBe(200);
    await slack.waitForCall((c) => c.method === "reactions.add" && c.args.name === "repeat");
    expect(messages.slice(-2)).toEqual([
      { text: "hello bot" },
      { text: "hello bot", retryNum: 1, retryReason: "http_timeout" },
    ]);
    const forged = await sendEvent(
      url,
      SECRET,
      { event_id: "Ev002", team_id: "T0001", event },
      { forge: true },
    );
    expect(forged.status).toBe(401);
  });

  it("delivers a signed button click; a stale one gets 401", async () => {
    const input = {
      team_id: "T0001",
      user_id: "U1",
      channel_id: "C1",
      message_ts: "1700000000.000200",
      action_id: "cancel_task",
      value: "task-42",
    };
    const response = await sendBlockAction(url, SECRET, input);
    expect(response.status).toBe(200);
    expect(actions).toContainEqual({ value: "task-42", message_ts: "1700000000.000200" });
    const stale = await sendBlockAction(
      url,
      SECRET,
      { ...input, value: "task-43" },
      { stale: true },
    );
    expect(stale.status).toBe(401);
    expect(actions.map((a) => a.value)).not.toContain("task-43");
  });

  it("Bolt requires the exact form content type Slack sends (a charset suffix is a 400)", async () => {
    const fields = slashCommandFields({
      text: "content type",
      team_id: "T0001",
      user_id: "U1",
      channel_id: "C1",
      response_url: slack.responseUrl("cmd-ct"),
    });
    const body = new URLSearchParams(fields).toString();
    const exact = await sendSignedRequest(url, SECRET, body, FORM_CONTENT_TYPE);
    expect(exact.status).toBe(200);
    const withCharset = await sendSignedRequest(
      url,
      SECRET,
      body,
      `${FORM_CONTENT_TYPE}; charset=utf-8`,
    );
    expect(withCharset.status).toBe(400);
  });
});
