/**
 * The local Slack double, driven by a REAL @slack/web-api WebClient: what works on Slack works here,
 * and what Slack rejects is rejected here the same way (as WebAPIPlatformError / WebAPIRateLimitedError).
 */
import { Buffer } from "node:buffer";
import { randomBytes } from "node:crypto";
import {
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebClient,
} from "@slack/web-api";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LocalSlack, LocalSlackOptions } from "../../../tools/local-slack/index.ts";
import { SLACK_LIMITS, startLocalSlack, validateBlocks } from "../../../tools/local-slack/index.ts";
import { silentLogger } from "../../support/silent-logger.ts";

let slack: LocalSlack;
let client: WebClient;

async function start(options: LocalSlackOptions = {}): Promise<void> {
  await slack?.close();
  slack = await startLocalSlack(options);
  client = clientFor(slack);
}

function clientFor(target: LocalSlack, token = target.botToken): WebClient {
  return new WebClient(token, {
    slackApiUrl: target.apiUrl,
    logger: silentLogger,
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 0 },
  });
}

/** The Slack error code of a rejected Web API call. */
async function slackError(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    if (error instanceof WebAPIPlatformError) return error.data.error;
    throw error;
  }
  throw new Error("expected the call to fail with a Slack platform error");
}

beforeEach(async () => {
  await start();
});

afterEach(async () => {
  await slack.close();
});

describe("auth", () => {
  it("answers auth.test like Slack, so Bolt can start against it", async () => {
    const result = await client.auth.test();
    expect(result).toMatchObject({
      ok: true,
      team_id: "T0001",
      user: "taskbot",
      user_id: "UBOT",
      bot_id: "BBOT",
      app_id: "A0001",
    });
    expect(slack.apiUrl).toBe(`http://127.0.0.1:${slack.port}/api/`);
  });

  it("rejects a wrong token with invalid_auth and unknown methods with unknown_method", async () => {
    expect(await slackError(clientFor(slack, "xoxb-wrong").auth.test())).toBe("invalid_auth");
    expect(await slackError(client.apiCall("chat.frobnicate", {}))).toBe("unknown_method");
    expect(slack.calls.map((c) => c.response.error)).toEqual(["invalid_auth", "unknown_method"]);
  });
});

describe("messages and threads", () => {
  it("posts, replies and updates; thread() shows the parent and replies with current content", async () => {
    const parent = await client.chat.postMessage({ channel: "C1", text: "Working on it" });
    expect(parent.ts).toMatch(/^\d{10}\.\d{6}$/);
    const parentTs = parent.ts ?? "";
    const reply1 = await client.chat.postMessage({
      channel: "C1",
      thread_ts: parentTs,
      text: "step 1",
    });
    const reply2 = await client.chat.postMessage({
      channel: "C1",
      thread_ts: parentTs,
      blocks: [{ type: "section", text: { type: "mrkdwn", text: "*step 2*" } }],
      text: "step 2",
    });
    expect(Number(reply1.ts)).toBeGreaterThan(Number(parentTs));
    expect(Number(reply2.ts)).toBeGreaterThan(Number(reply1.ts));
    expect(reply2.message).toMatchObject({ thread_ts: parentTs, user: "UBOT", bot_id: "BBOT" });

    const updated = await client.chat.update({
      channel: "C1",
      ts: reply1.ts ?? "",
      text: "step 1 done",
    });
    expect(updated).toMatchObject({ ok: true, channel: "C1", ts: reply1.ts, text: "step 1 done" });

    const thread = slack.thread("C1", parentTs);
    expect(thread.map((m) => m.text)).toEqual(["Working on it", "step 1 done", "step 2"]);
    expect(thread[1]?.edited?.user).toBe("UBOT");
    expect(thread[2]?.blocks).toEqual([
      { type: "section", text: { type: "mrkdwn", text: "*step 2*" } },
    ]);
    // history semantics: replies are not top-level messages
    expect(slack.messages("C1").map((m) => m.ts)).toEqual([parentTs]);
    expect(slack.messages("C1", { includeReplies: true })).toHaveLength(3);
    // the recorded call has decoded JSON fields
    const call = slack.calls.find((c) => c.method === "chat.postMessage" && c.args.blocks);
    expect(call?.args.blocks).toEqual(thread[2]?.blocks);
  });

  it("keeps blocks on update when blocks are omitted, removes them with []", async () => {
    const posted = await client.chat.postMessage({
      channel: "C1",
      text: "t",
      blocks: [{ type: "divider" }],
    });
    const ts = posted.ts ?? "";
    await client.chat.update({ channel: "C1", ts, text: "t2" });
    expect(slack.message("C1", ts)?.blocks).toEqual([{ type: "divider" }]);
    await client.chat.update({ channel: "C1", ts, text: "t3", blocks: [] });
    expect(slack.message("C1", ts)?.blocks).toBeUndefined();
  });

  it("refuses to update or delete what the bot did not post, and unknown messages", async () => {
    const userTs = slack.addMessage({ channel: "C1", user: "U1", text: "/task build it" });
    expect(await slackError(client.chat.update({ channel: "C1", ts: userTs, text: "x" }))).toBe(
      "cant_update_message",
    );
    expect(await slackError(client.chat.delete({ channel: "C1", ts: userTs }))).toBe(
      "cant_delete_message",
    );
    expect(await slackError(client.chat.update({ channel: "C1", ts: "1.000001", text: "x" }))).toBe(
      "message_not_found",
    );

    const posted = await client.chat.postMessage({ channel: "C1", text: "bye" });
    await client.chat.delete({ channel: "C1", ts: posted.ts ?? "" });
    expect(slack.message("C1", posted.ts ?? "")).toBeUndefined();
    expect(slack.thread("C1", userTs).map((m) => m.user)).toEqual(["U1"]);
  });

  it("answers not_in_channel / channel_not_found; conversations.join fixes not_in_channel", async () => {
    await start({ notInChannel: new Set(["C_OUT"]), unknownChannels: ["C_GONE"] });
    expect(await slackError(client.chat.postMessage({ channel: "C_OUT", text: "hi" }))).toBe(
      "not_in_channel",
    );
    expect(await slackError(client.chat.postMessage({ channel: "C_GONE", text: "hi" }))).toBe(
      "channel_not_found",
    );
    const info = await client.conversations.info({ channel: "C_OUT" });
    expect(info.channel?.is_member).toBe(false);
    await client.conversations.join({ channel: "C_OUT" });
    await expect(client.chat.postMessage({ channel: "C_OUT", text: "hi" })).resolves.toMatchObject({
      ok: true,
    });
    // state errors are not payload validation errors
    expect(slack.validationErrors).toEqual([]);
  });

  it("lists a channel's members page by page; a private one the bot is not in is not found", async () => {
    await start({
      users: [1, 2, 3, 4, 5].map((n) => ({ id: `U${n}`, name: `u${n}` })),
      notInChannel: new Set(["G_SECRET"]),
    });
    slack.setChannelMembers("C_SMALL", ["U2", "U4"]);
    expect((await client.conversations.members({ channel: "C_SMALL" })).members).toEqual([
      "UBOT",
      "U2",
      "U4",
    ]);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.conversations.members({ channel: "C_ALL", limit: 2, cursor });
      expect((page.members ?? []).length).toBeLessThanOrEqual(2);
      seen.push(...(page.members ?? []));
      cursor = page.response_metadata?.next_cursor || undefined;
    } while (cursor);
    expect(seen).toEqual(["UBOT", "U1", "U2", "U3", "U4", "U5"]);
    expect(await slackError(client.conversations.members({ channel: "G_SECRET" }))).toBe(
      "channel_not_found",
    );
  });

  it("stores ephemerals per user, separately from messages", async () => {
    const result = await client.chat.postEphemeral({ channel: "C1", user: "U1", text: "only you" });
    expect(result.message_ts).toBeTruthy();
    await client.chat.postEphemeral({ channel: "C2", user: "U2", text: "you too" });
    expect(slack.ephemerals("C1", "U1").map((e) => e.text)).toEqual(["only you"]);
    expect(slack.ephemerals(undefined, "U2").map((e) => e.channel)).toEqual(["C2"]);
    expect(slack.messages("C1")).toEqual([]);
  });

  it("adds and removes reactions with Slack's errors", async () => {
    const ts = slack.addMessage({ channel: "C1", user: "U1", text: "please" });
    await client.reactions.add({ channel: "C1", timestamp: ts, name: "eyes" });
    expect(
      await slackError(client.reactions.add({ channel: "C1", timestamp: ts, name: "eyes" })),
    ).toBe("already_reacted");
    expect(slack.reactions("C1", ts)).toEqual([{ name: "eyes", users: ["UBOT"], count: 1 }]);
    await client.reactions.remove({ channel: "C1", timestamp: ts, name: "eyes" });
    expect(
      await slackError(client.reactions.remove({ channel: "C1", timestamp: ts, name: "eyes" })),
    ).toBe("no_reaction");
    expect(slack.reactions("C1", ts)).toEqual([]);
  });

  it("serves configured users with admin flags and user_not_found otherwise", async () => {
    slack.addUser({ id: "U_ADMIN", name: "alice", is_admin: true });
    const info = await client.users.info({ user: "U_ADMIN" });
    expect(info.user).toMatchObject({
      id: "U_ADMIN",
      name: "alice",
      is_admin: true,
      is_owner: false,
    });
    expect(await slackError(client.users.info({ user: "U_NOBODY" }))).toBe("user_not_found");
  });

  it("lists a workspace's user groups and their members, never another workspace's", async () => {
    const eng = slack.addUserGroup({
      handle: "engineering",
      name: "Engineers",
      users: ["U1", "U2"],
    });
    slack.addUserGroup({ handle: "old-team", users: ["U3"], disabled: true });
    const other = slack.addTeam({ id: "T0OTHER", installed: true });
    const theirs = slack.addUserGroup({ handle: "theirs", users: ["U9"], teamId: other.id });
    const listed = await client.usergroups.list({});
    expect(listed.usergroups?.map((g) => [g.id, g.handle, g.name, g.user_count])).toEqual([
      [eng, "engineering", "Engineers", 2],
    ]);
    expect((await client.usergroups.users.list({ usergroup: eng })).users).toEqual(["U1", "U2"]);
    slack.setUserGroupMembers(eng, ["U2"]);
    expect((await client.usergroups.users.list({ usergroup: eng })).users).toEqual(["U2"]);
    expect(await slackError(client.usergroups.users.list({ usergroup: theirs }))).toBe(
      "no_such_subteam",
    );
    const theirClient = clientFor(slack, other.botToken);
    expect((await theirClient.usergroups.users.list({ usergroup: theirs })).users).toEqual(["U9"]);
    expect(await slackError(client.usergroups.users.list({ usergroup: "S0NOPE" }))).toBe(
      "no_such_subteam",
    );
  });

  it("refuses usergroups.users.list to an app without usergroups:read", async () => {
    await start({ scopes: ["chat:write", "users:read"] });
    const group = slack.addUserGroup({ handle: "eng", users: ["U1"] });
    expect(await slackError(client.usergroups.users.list({ usergroup: group }))).toBe(
      "missing_scope",
    );
  });

  it("builds permalinks, including for thread replies", async () => {
    const parent = await client.chat.postMessage({ channel: "C1", text: "p" });
    const reply = await client.chat.postMessage({
      channel: "C1",
      thread_ts: parent.ts ?? "",
      text: "r",
    });
    const link = await client.chat.getPermalink({ channel: "C1", message_ts: reply.ts ?? "" });
    expect(link.permalink).toBe(
      `${slack.teamUrl}archives/C1/p${(reply.ts ?? "").replace(".", "")}?thread_ts=${parent.ts}&cid=C1`,
    );
  });
});

describe("limit validation (a call that fails on Slack fails here the same way)", () => {
  const section = (text: string) => ({ type: "section", text: { type: "mrkdwn", text } });
  const button = (over: Record<string, string>) => ({
    type: "button",
    text: { type: "plain_text", text: over.text ?? "Go" },
    action_id: over.action_id ?? "go",
    value: over.value ?? "v",
  });

  const rejected: [string, Record<string, unknown>, string][] = [
    ["text over 40,000", { text: "x".repeat(40_001) }, "msg_too_long"],
    [
      "more than 50 blocks",
      { blocks: Array.from({ length: 51 }, () => ({ type: "divider" })) },
      "invalid_blocks",
    ],
    ["empty section text", { blocks: [section("")] }, "invalid_blocks"],
    ["section text over 3,000", { blocks: [section("x".repeat(3_001))] }, "invalid_blocks"],
    [
      "header over 150",
      { blocks: [{ type: "header", text: { type: "plain_text", text: "h".repeat(151) } }] },
      "invalid_blocks",
    ],
    [
      "context over 10 elements",
      {
        blocks: [
          {
            type: "context",
            elements: Array.from({ length: 11 }, () => ({ type: "mrkdwn", text: "c" })),
          },
        ],
      },
      "invalid_blocks",
    ],
    [
      "actions over 25 elements",
      {
        blocks: [
          {
            type: "actions",
            elements: Array.from({ length: 26 }, (_, i) => button({ action_id: `a${i}` })),
          },
        ],
      },
      "invalid_blocks",
    ],
    [
      "button text over 75",
      { blocks: [{ type: "actions", elements: [button({ text: "b".repeat(76) })] }] },
      "invalid_blocks",
    ],
    [
      "button value over 2,000",
      { blocks: [{ type: "actions", elements: [button({ value: "v".repeat(2_001) })] }] },
      "invalid_blocks",
    ],
    [
      "action_id over 255",
      { blocks: [{ type: "actions", elements: [button({ action_id: "a".repeat(256) })] }] },
      "invalid_blocks",
    ],
    [
      "block_id over 255",
      { blocks: [{ type: "divider", block_id: "b".repeat(256) }] },
      "invalid_blocks",
    ],
    [
      "markdown blocks over 12,000 in total",
      {
        blocks: [
          { type: "markdown", text: "m".repeat(6_000) },
          { type: "markdown", text: "m".repeat(6_001) },
        ],
      },
      "msg_blocks_too_long",
    ],
    ["markdown_text over 12,000", { markdown_text: "m".repeat(12_001) }, "msg_too_long"],
    ["markdown_text with text", { markdown_text: "**hi**", text: "hi" }, "markdown_text_conflict"],
    [
      "markdown_text with blocks",
      { markdown_text: "**hi**", blocks: [{ type: "divider" }] },
      "markdown_text_conflict",
    ],
    ["nothing to post", {}, "no_text"],
    ["an unknown block type", { blocks: [{ type: "fancy_widget" }] }, "invalid_blocks"],
  ];

  it.each(rejected)("rejects %s", async (_name, content, error) => {
    const before = slack.calls.length;
    const err = await slackError(client.apiCall("chat.postMessage", { channel: "C1", ...content }));
    expect(err).toBe(error);
    expect(slack.messages("C1")).toEqual([]);
    expect(slack.validationErrors).toHaveLength(1);
    expect(slack.validationErrors[0]).toMatchObject({
      method: "chat.postMessage",
      error,
      seq: before,
    });
    expect(slack.calls[before]?.validationError).toBe(error);
  });

  it("accepts everything exactly at the limits", async () => {
    const atLimits = [
      { text: "x".repeat(SLACK_LIMITS.textMax) },
      { text: "fallback", blocks: Array.from({ length: 50 }, () => ({ type: "divider" })) },
      { text: "f", blocks: [section("x".repeat(3_000))] },
      {
        text: "f",
        blocks: [{ type: "header", text: { type: "plain_text", text: "h".repeat(150) } }],
      },
      {
        text: "f",
        blocks: [
          {
            type: "actions",
            block_id: "b".repeat(255),
            elements: Array.from({ length: 25 }, (_, i) =>
              button({
                text: "b".repeat(75),
                value: "v".repeat(2_000),
                action_id: `${i}`.padEnd(255, "a"),
              }),
            ),
          },
        ],
      },
      {
        text: "f",
        blocks: [
          { type: "markdown", text: "m".repeat(6_000) },
          { type: "markdown", text: "m".repeat(6_000) },
        ],
      },
      { markdown_text: "m".repeat(12_000) },
    ];
    for (const content of atLimits) {
      await client.apiCall("chat.postMessage", { channel: "C1", ...content });
    }
    expect(slack.validationErrors).toEqual([]);
    expect(slack.messages("C1")).toHaveLength(atLimits.length);
  });

  it("validates chat.update and chat.postEphemeral too", async () => {
    const posted = await client.chat.postMessage({ channel: "C1", text: "ok" });
    expect(
      await slackError(
        client.chat.update({ channel: "C1", ts: posted.ts ?? "", text: "x".repeat(40_001) }),
      ),
    ).toBe("msg_too_long");
    expect(slack.message("C1", posted.ts ?? "")?.text).toBe("ok");
    expect(
      await slackError(
        client.apiCall("chat.postEphemeral", {
          channel: "C1",
          user: "U1",
          markdown_text: "a",
          text: "b",
        }),
      ),
    ).toBe("markdown_text_conflict");
    expect(slack.validationErrors.map((v) => v.method)).toEqual([
      "chat.update",
      "chat.postEphemeral",
    ]);
  });

  it("returns Slack-style response_metadata with a json-pointer", async () => {
    try {
      await client.chat.postMessage({
        channel: "C1",
        text: "f",
        blocks: [section("x".repeat(3_001))],
      });
      expect.unreachable();
    } catch (error) {
      if (!(error instanceof WebAPIPlatformError)) throw error;
      expect(error.data.response_metadata?.messages?.[0]).toContain(
        "[json-pointer:/blocks/0/text/text]",
      );
    }
  });

  it("lets the contested error codes be configured", async () => {
    await start({
      errorCodes: { tooManyBlocks: "msg_blocks_too_many", markdownBlocksTooLong: "invalid_blocks" },
    });
    const tooMany = Array.from({ length: 51 }, () => ({ type: "divider" }));
    expect(
      await slackError(client.chat.postMessage({ channel: "C1", text: "f", blocks: tooMany })),
    ).toBe("msg_blocks_too_many");
    expect(validateBlocks(tooMany)?.error).toBe("invalid_blocks");
  });
});

describe("files.uploadV2", () => {
  it("uploads two files in one call with identical bytes and shares both into the thread", async () => {
    const parent = await client.chat.postMessage({ channel: "C1", text: "Here is your build" });
    const parentTs = parent.ts ?? "";
    const binary = randomBytes(200_000);
    const text = Buffer.from("line 1\r\n--not-a-boundary\r\nünïcödé ✓\n", "utf8");

    const result = await client.filesUploadV2({
      channel_id: "C1",
      thread_ts: parentTs,
      initial_comment: "Artifacts",
      file_uploads: [
        { file: binary, filename: "build.bin" },
        { file: text, filename: "report.txt", title: "Report" },
      ],
    });
    expect(result.ok).toBe(true);

    const files = slack.files();
    expect(files).toHaveLength(2);
    const [bin, txt] = files;
    expect(bin?.bytes.equals(binary)).toBe(true);
    expect(txt?.bytes.equals(text)).toBe(true);
    expect(bin).toMatchObject({
      name: "build.bin",
      title: "build.bin",
      channel: "C1",
      thread_ts: parentTs,
      completed: true,
    });
    expect(txt).toMatchObject({
      name: "report.txt",
      title: "Report",
      channel: "C1",
      thread_ts: parentTs,
    });
    expect(bin?.declaredLength).toBe(binary.length);
    // WebClient posts the bytes as multipart/form-data (one part named "body")
    expect(bin?.uploadContentType).toMatch(/^multipart\/form-data; boundary=/);

    // one completion for the group, and the share appears as a message in the thread
    const completions = slack.calls.filter((c) => c.method === "files.completeUploadExternal");
    expect(completions).toHaveLength(1);
    expect(completions[0]?.args.files).toEqual([
      { id: bin?.id, title: "build.bin" },
      { id: txt?.id, title: "Report" },
    ]);
    const thread = slack.thread("C1", parentTs);
    expect(thread.at(-1)).toMatchObject({
      text: "Artifacts",
      files: [bin?.id, txt?.id],
      thread_ts: parentTs,
    });
  });

  it("refuses to complete a file id whose bytes were never uploaded", async () => {
    const { file_id } = await client.files.getUploadURLExternal({ filename: "a.txt", length: 3 });
    expect(
      await slackError(
        client.files.completeUploadExternal({ files: [{ id: file_id ?? "" }], channel_id: "C1" }),
      ),
    ).toBe("file_not_found");
    expect(
      await slackError(
        client.files.completeUploadExternal({ files: [{ id: "F_NEVER" }], channel_id: "C1" }),
      ),
    ).toBe("file_not_found");
  });
});

describe("rate limits and fault injection", () => {
  it("enforces a per-method tier with 429 + Retry-After, surfacing as WebAPIRateLimitedError", async () => {
    let now = 1_000_000;
    await start({ tiers: { "chat.update": { perMinute: 2 } }, now: () => now });
    const posted = await client.chat.postMessage({ channel: "C1", text: "0" });
    const ts = posted.ts ?? "";
    await client.chat.update({ channel: "C1", ts, text: "1" });
    now += 10_000;
    await client.chat.update({ channel: "C1", ts, text: "2" });
    now += 5_000;
    const error = await client.chat
      .update({ channel: "C1", ts, text: "3" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebAPIRateLimitedError);
    // the first call leaves the window at 1_060_000; now is 1_015_000 -> 45 s
    expect(error instanceof WebAPIRateLimitedError ? error.retryAfter : undefined).toBe(45);
    expect(slack.rateLimited).toBe(1);
    expect(slack.calls.at(-1)).toMatchObject({ status: 429, retryAfter: 45, fault: "ratelimited" });
    expect(slack.message("C1", ts)?.text).toBe("2");
    // other methods are not affected; the window slides
    await client.chat.postMessage({ channel: "C1", text: "still fine" });
    now += 45_000;
    await client.chat.update({ channel: "C1", ts, text: "4" });
    expect(slack.message("C1", ts)?.text).toBe("4");
  });

  it("failNext injects errors for the next N calls of a method, before any side effect", async () => {
    slack.failNext("chat.postMessage", { error: "fatal_error", times: 2 });
    expect(await slackError(client.chat.postMessage({ channel: "C1", text: "a" }))).toBe(
      "fatal_error",
    );
    expect(await slackError(client.chat.postMessage({ channel: "C1", text: "b" }))).toBe(
      "fatal_error",
    );
    await client.chat.postMessage({ channel: "C1", text: "c" });
    expect(slack.messages("C1").map((m) => m.text)).toEqual(["c"]);
    expect(slack.calls.map((c) => c.fault)).toEqual(["injected", "injected", undefined]);
  });

  it("failNext with retryAfter answers 429 + Retry-After", async () => {
    slack.failNext("chat.update", { error: "ratelimited", retryAfter: 7 });
    const error = await client.chat
      .update({ channel: "C1", ts: "1.1", text: "x" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebAPIRateLimitedError);
    expect(error instanceof WebAPIRateLimitedError ? error.retryAfter : undefined).toBe(7);
  });

  it("failNext with an HTTP status surfaces as WebAPIHTTPError", async () => {
    slack.failNext("chat.postMessage", { error: "service_unavailable", status: 503 });
    const error = await client.chat
      .postMessage({ channel: "C1", text: "x" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebAPIHTTPError);
  });

  it("failWhen fails matching calls until removed", async () => {
    const remove = slack.failWhen(({ method, args }) =>
      method === "chat.postMessage" && args.channel === "C_BAD"
        ? { error: "is_archived" }
        : undefined,
    );
    expect(await slackError(client.chat.postMessage({ channel: "C_BAD", text: "x" }))).toBe(
      "is_archived",
    );
    await client.chat.postMessage({ channel: "C_OK", text: "x" });
    remove();
    await client.chat.postMessage({ channel: "C_BAD", text: "x" });
    expect(slack.messages("C_BAD")).toHaveLength(1);
  });

  it("enforces granted scopes when asked to (missing_scope with needed/provided)", async () => {
    await start({ scopes: ["chat:write", "users:read"] });
    await client.chat.postMessage({ channel: "C1", text: "ok" });
    try {
      await client.conversations.info({ channel: "C1" });
      expect.unreachable();
    } catch (error) {
      if (!(error instanceof WebAPIPlatformError)) throw error;
      expect(error.data).toMatchObject({ error: "missing_scope", needed: "channels:read" });
    }
  });
});

describe("native streaming", () => {
  it("streams through WebClient's ChatStreamer: start, append, stop with blocks", async () => {
    const parent = slack.addMessage({ channel: "C1", user: "U1", text: "/task build a CLI" });
    const streamer = client.chatStream({
      channel: "C1",
      thread_ts: parent,
      recipient_user_id: "U1",
      recipient_team_id: "T0001",
      buffer_size: 1,
    });
    await streamer.append({ markdown_text: "Hello " });
    const ts = streamer.ts ?? "";
    expect(slack.message("C1", ts)).toMatchObject({
      text: "Hello ",
      streaming_state: "in_progress",
    });
    await streamer.append({ markdown_text: "**world**" });
    await streamer.stop({
      blocks: [{ type: "context", elements: [{ type: "mrkdwn", text: "done" }] }],
    });

    const message = slack.message("C1", ts);
    expect(message).toMatchObject({
      text: "Hello **world**",
      thread_ts: parent,
      streaming_state: "completed",
      blocks: [{ type: "context", elements: [{ type: "mrkdwn", text: "done" }] }],
    });
    expect(slack.calls.map((c) => c.method)).toEqual([
      "chat.startStream",
      "chat.appendStream",
      "chat.stopStream",
    ]);
    expect(slack.thread("C1", parent).map((m) => m.text)).toEqual([
      "/task build a CLI",
      "Hello **world**",
    ]);
  });

  it("requires recipients outside DMs, and thread_ts everywhere", async () => {
    expect(await slackError(client.chat.startStream({ channel: "C1", thread_ts: "1.1" }))).toBe(
      "missing_recipient_user_id",
    );
    expect(
      await slackError(
        client.chat.startStream({ channel: "C1", thread_ts: "1.1", recipient_user_id: "U1" }),
      ),
    ).toBe("missing_recipient_team_id");
    await expect(
      client.chat.startStream({ channel: "D1", thread_ts: "1.1", markdown_text: "hi" }),
    ).resolves.toMatchObject({ ok: true, channel: "D1" });
    expect(await slackError(client.apiCall("chat.startStream", { channel: "D1" }))).toBe(
      "invalid_arguments",
    );
  });

  it("refuses a streamed message past Slack's byte ceiling with msg_too_long, task updates counted, and keeps what it had", async () => {
    const max = SLACK_LIMITS.streamMessageBytesMax;
    // 3,000 Japanese characters are 9,000 UTF-8 bytes: far below 12,000 characters a call.
    const japanese = "日本語の答え。".repeat(3000 / 7) + "\n";
    const bytes = Buffer.byteLength(japanese);
    expect(japanese.length).toBeLessThan(SLACK_LIMITS.markdownTextMax / 3);
    const started = await client.chat.startStream({
      channel: "D1",
      thread_ts: "1.1",
      markdown_text: japanese,
    });
    const ts = started.ts ?? "";
    const title = "x".repeat(max - bytes - 10);
    await client.chat.appendStream({
      channel: "D1",
      ts,
      chunks: [{ type: "task_update", id: "s1", title, status: "in_progress" }],
    });
    // Ten bytes are left: four Japanese characters are twelve.
    expect(
      await slackError(client.chat.appendStream({ channel: "D1", ts, markdown_text: "日本語。" })),
    ).toBe("msg_too_long");
    expect(
      await slackError(client.chat.stopStream({ channel: "D1", ts, markdown_text: "日本語。" })),
    ).toBe("msg_too_long");
    await client.chat.appendStream({ channel: "D1", ts, markdown_text: "0123456789" });
    expect(slack.message("D1", ts)?.text).toBe(`${japanese}0123456789`);
    expect(
      await slackError(client.chat.stopStream({ channel: "D1", ts, markdown_text: "!" })),
    ).toBe("msg_too_long");
    await client.chat.stopStream({ channel: "D1", ts });
    expect(slack.message("D1", ts)?.streaming_state).toBe("completed");
    // A start past the ceiling leaves no message.
    const before = slack.messages("D1").length;
    expect(
      await slackError(
        client.chat.startStream({
          channel: "D1",
          thread_ts: "1.1",
          markdown_text: japanese + japanese,
        }),
      ),
    ).toBe("msg_too_long");
    expect(slack.messages("D1")).toHaveLength(before);
    expect(slack.validationErrors.map((v) => v.error)).toEqual([
      "msg_too_long",
      "msg_too_long",
      "msg_too_long",
      "msg_too_long",
    ]);
  });

  it("an expired stream fails the next append with message_not_in_streaming_state; chat.update still works", async () => {
    const started = await client.chat.startStream({
      channel: "D1",
      thread_ts: "1.1",
      markdown_text: "part 1",
    });
    const ts = started.ts ?? "";
    await client.chat.appendStream({ channel: "D1", ts, markdown_text: " part 2" });
    slack.expireStream("D1", ts);
    expect(
      await slackError(client.chat.appendStream({ channel: "D1", ts, markdown_text: " 3" })),
    ).toBe("message_not_in_streaming_state");
    expect(await slackError(client.chat.stopStream({ channel: "D1", ts }))).toBe(
      "message_not_in_streaming_state",
    );
    await client.chat.update({ channel: "D1", ts, text: "part 1 part 2 3" });
    expect(slack.message("D1", ts)?.text).toBe("part 1 part 2 3");
  });

  it("a stream stopped by the user answers stopped_by_user, and a stopped stream cannot be appended to", async () => {
    const a = await client.chat.startStream({
      channel: "D1",
      thread_ts: "1.1",
      markdown_text: "a",
    });
    slack.expireStream("D1", a.ts ?? "", "stopped_by_user");
    expect(
      await slackError(
        client.chat.appendStream({ channel: "D1", ts: a.ts ?? "", markdown_text: "b" }),
      ),
    ).toBe("stopped_by_user");
    const b = await client.chat.startStream({
      channel: "D1",
      thread_ts: "1.1",
      markdown_text: "a",
    });
    await client.chat.stopStream({ channel: "D1", ts: b.ts ?? "", markdown_text: "!" });
    expect(
      await slackError(
        client.chat.appendStream({ channel: "D1", ts: b.ts ?? "", markdown_text: "c" }),
      ),
    ).toBe("message_not_in_streaming_state");
    expect(slack.message("D1", b.ts ?? "")?.text).toBe("a!");
  });

  it("ends a stream five minutes after chat.startStream, like Slack: appends and the stop answer message_not_in_streaming_state, chat.update still works", async () => {
    let now = 1_000_000;
    await start({ now: () => now });
    const started = await client.chat.startStream({
      channel: "D1",
      thread_ts: "1.1",
      markdown_text: "part 1",
    });
    const ts = started.ts ?? "";
    now += 5 * 60_000 - 1;
    await client.chat.appendStream({ channel: "D1", ts, markdown_text: " part 2" });
    expect(slack.openStreams("D1").map((m) => m.ts)).toEqual([ts]);
    now += 1;
    expect(slack.message("D1", ts)?.streaming_state).toBe("ended");
    expect(slack.openStreams()).toEqual([]);
    expect(
      await slackError(client.chat.appendStream({ channel: "D1", ts, markdown_text: " 3" })),
    ).toBe("message_not_in_streaming_state");
    expect(await slackError(client.chat.stopStream({ channel: "D1", ts }))).toBe(
      "message_not_in_streaming_state",
    );
    await client.chat.update({ channel: "D1", ts, text: "part 1 part 2 3" });
    expect(slack.message("D1", ts)?.text).toBe("part 1 part 2 3");
  });

  it("takes the stream lifetime from its options, and from the streamLifetimeMs setter for open streams too", async () => {
    let now = 0;
    await start({ now: () => now, streamLifetimeMs: 25_000 });
    expect(slack.streamLifetimeMs).toBe(25_000);
    const a = await client.chat.startStream({
      channel: "D1",
      thread_ts: "1.1",
      markdown_text: "a",
    });
    now = 25_000;
    expect(
      await slackError(
        client.chat.appendStream({ channel: "D1", ts: a.ts ?? "", markdown_text: "b" }),
      ),
    ).toBe("message_not_in_streaming_state");

    const b = await client.chat.startStream({
      channel: "D1",
      thread_ts: "1.1",
      markdown_text: "b",
    });
    slack.streamLifetimeMs = Infinity;
    now += 3_600_000;
    await client.chat.appendStream({ channel: "D1", ts: b.ts ?? "", markdown_text: "c" });
    slack.streamLifetimeMs = 60_000;
    expect(await slackError(client.chat.stopStream({ channel: "D1", ts: b.ts ?? "" }))).toBe(
      "message_not_in_streaming_state",
    );
    expect(slack.message("D1", b.ts ?? "")?.text).toBe("bc");
  });

  it("wakes waitFor when a stream's lifetime is over", async () => {
    await start({ streamLifetimeMs: 30 });
    const started = await client.chat.startStream({
      channel: "D1",
      thread_ts: "1.1",
      markdown_text: "a",
    });
    const ended = await slack.waitFor(
      () => slack.message("D1", started.ts ?? "")?.streaming_state === "ended",
      { timeoutMs: 2_000 },
    );
    expect(ended).toBe(true);
  });

  it("answers stopped_by_user to appends and to the stop once the person pressed stop on the stream", async () => {
    const started = await client.chat.startStream({
      channel: "D1",
      thread_ts: "1.1",
      markdown_text: "a",
    });
    const ts = started.ts ?? "";
    slack.stopStreamByUser("D1", ts);
    expect(slack.openStreams()).toEqual([]);
    expect(
      await slackError(client.chat.appendStream({ channel: "D1", ts, markdown_text: "b" })),
    ).toBe("stopped_by_user");
    expect(await slackError(client.chat.stopStream({ channel: "D1", ts }))).toBe("stopped_by_user");
    await client.chat.update({ channel: "D1", ts, text: "a (stopped)" });
    expect(slack.message("D1", ts)?.text).toBe("a (stopped)");
  });

  it("reads a thread's messages in order with the text they show, and counts calls per method and workspace", async () => {
    await start({ tiers: { "chat.update": { perMinute: 1 } } });
    const parent = slack.addMessage({ channel: "C1", user: "U1", text: "question" });
    const edited = await client.chat.postMessage({ channel: "C1", thread_ts: parent, text: "…" });
    await client.chat.update({
      channel: "C1",
      ts: edited.ts ?? "",
      text: "fallback",
      blocks: [
        { type: "markdown", text: "first **answer**" },
        { type: "context", elements: [{ type: "mrkdwn", text: "Completed in 3 s" }] },
      ],
    });
    await expect(
      client.chat.update({ channel: "C1", ts: edited.ts ?? "", text: "x" }),
    ).rejects.toBeInstanceOf(WebAPIRateLimitedError);
    const stream = await client.chat.startStream({
      channel: "C1",
      thread_ts: parent,
      recipient_user_id: "U1",
      recipient_team_id: "T0001",
      markdown_text: "streamed ",
    });
    await client.chat.appendStream({ channel: "C1", ts: stream.ts ?? "", markdown_text: "text" });

    expect(slack.threadText("C1", parent)).toEqual([
      { ts: parent, user: "U1", bot: false, text: "question" },
      { ts: edited.ts, user: "UBOT", bot: true, text: "first **answer**" },
      {
        ts: stream.ts,
        user: "UBOT",
        bot: true,
        text: "streamed text",
        streaming_state: "in_progress",
      },
    ]);
    expect(slack.callCounts({ team: "T0001" })).toEqual({
      "chat.postMessage": { total: 1, ok: 1, rateLimited: 0 },
      "chat.update": { total: 2, ok: 1, rateLimited: 1 },
      "chat.startStream": { total: 1, ok: 1, rateLimited: 0 },
      "chat.appendStream": { total: 1, ok: 1, rateLimited: 0 },
    });
    expect(slack.callCounts({ team: "T0002" })).toEqual({});
    expect(slack.callCounts({ fromIndex: 3 })).toEqual({
      "chat.startStream": { total: 1, ok: 1, rateLimited: 0 },
      "chat.appendStream": { total: 1, ok: 1, rateLimited: 0 },
    });
  });

  it("limits markdown_text per stream call to 12,000 characters", async () => {
    const started = await client.chat.startStream({
      channel: "D1",
      thread_ts: "1.1",
      markdown_text: "a",
    });
    expect(
      await slackError(
        client.chat.appendStream({
          channel: "D1",
          ts: started.ts ?? "",
          markdown_text: "m".repeat(12_001),
        }),
      ),
    ).toBe("msg_too_long");
    expect(slack.validationErrors.map((v) => v.method)).toEqual(["chat.appendStream"]);
  });
});

describe("assistant status, response_url, user files", () => {
  it("records assistant.threads.setStatus and clears it when the bot replies in the thread", async () => {
    await client.assistant.threads.setStatus({
      channel_id: "C1",
      thread_ts: "1.1",
      status: "is thinking…",
    });
    expect(slack.assistantStatus("C1", "1.1")).toBe("is thinking…");
    await client.chat.postMessage({ channel: "C1", thread_ts: "1.1", text: "answer" });
    expect(slack.assistantStatus("C1", "1.1")).toBeUndefined();
    expect(
      await slackError(
        client.assistant.threads.setStatus({
          channel_id: "C1",
          thread_ts: "1.1",
          status: "s",
          loading_messages: Array.from({ length: 11 }, () => "x"),
        }),
      ),
    ).toBe("invalid_arguments");
  });

  it("records response_url POSTs and refuses a sixth use", async () => {
    const url = slack.responseUrl("cmd-1");
    for (let i = 0; i < 6; i++) {
      await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ text: `n${i}`, response_type: "ephemeral" }),
      });
    }
    expect(slack.responseUrlPosts.map((p) => p.status)).toEqual([200, 200, 200, 200, 200, 404]);
    expect(slack.responseUrlPosts[0]).toMatchObject({
      id: "cmd-1",
      body: { text: "n0", response_type: "ephemeral" },
    });
  });

  it("serves a person's file only with the bot token, else Slack's sign-in page", async () => {
    const file = slack.addUserFile({ name: "in.csv", bytes: "a,b\n1,2\n", mimetype: "text/csv" });
    const authed = await fetch(file.url_private_download, {
      headers: { authorization: `Bearer ${slack.botToken}` },
    });
    expect(await authed.text()).toBe("a,b\n1,2\n");
    const anonymous = await fetch(file.url_private_download);
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get("content-type")).toContain("text/html");
  });
});

describe("waiting on conditions", () => {
  it("waitForCall resolves with a call made later, and with one already recorded", async () => {
    const waiting = slack.waitForCall(
      (c) => c.method === "chat.postMessage" && c.args.text === "later",
    );
    await client.chat.postMessage({ channel: "C1", text: "sooner" });
    await client.chat.postMessage({ channel: "C1", text: "later" });
    const call = await waiting;
    expect(call.response.ok).toBe(true);
    const again = await slack.waitForCall((c) => c.args.text === "sooner");
    expect(again.seq).toBe(0);
    const fromIndex = slack.calls.length;
    const next = slack.waitForCall((c) => c.method === "chat.postMessage", { fromIndex });
    await client.chat.postMessage({ channel: "C1", text: "third" });
    expect((await next).args.text).toBe("third");
  });

  it("waitFor re-evaluates a condition on state changes", async () => {
    const ts = (await client.chat.postMessage({ channel: "C1", text: "0%" })).ts ?? "";
    const done = slack.waitFor(() => slack.message("C1", ts)?.text === "100%");
    await client.chat.update({ channel: "C1", ts, text: "50%" });
    await client.chat.update({ channel: "C1", ts, text: "100%" });
    await expect(done).resolves.toBe(true);
  });

  it("times out with a message listing the recent calls", async () => {
    await client.chat.postMessage({ channel: "C1", text: "something else" });
    await expect(
      slack.waitForCall((c) => c.method === "chat.update", { timeoutMs: 50 }),
    ).rejects.toThrow(
      /timed out after 50 ms[\s\S]*#0 chat\.postMessage channel=C1 text="something else" -> 200 ok/,
    );
  });
});
