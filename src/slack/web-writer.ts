/** The relay's SlackWriter port on Slack's Web API (WebClient). */
import type { WebClient } from "@slack/web-api";
import { type Dispatcher, request } from "undici";
import type { Person, SlackWriter } from "../runs/ports.ts";
import { slackErrorCode } from "../view/errors.ts";
import { remembered } from "./remembered.ts";

/** Files shared per message (one files.completeUploadExternal each). */
export const UPLOAD_BATCH = 10;
/** How long Slack's file host may take to answer for one file's bytes. */
const UPLOAD_TIMEOUT_MS = 120_000;

/** Answers that mean the agent sessions API is not there for this app (not a passing failure). */
const SESSIONS_MISSING = new Set([
  "unknown_method",
  "not_allowed_token_type",
  "missing_scope",
  "feature_not_enabled",
  "not_enabled",
]);

/** The workspace's token for a call, or none (the client's own). */
type Auth = () => Promise<{ token?: string }>;

/**
 * Each SlackWriter call is one Web API call (uploads: one per batch), with `token`'s (else the
 * client's own); `dispatcher` carries files' bytes to Slack's upload URLs (the outbound proxy).
 */
export function webClientWriter(
  client: WebClient,
  token?: () => Promise<string>,
  dispatcher?: Dispatcher,
): SlackWriter {
  const auth: Auth = async () => (token ? { token: await token() } : {});
  return {
    ...messages(client, auth),
    ...files(client, auth, dispatcher),
    ...streams(client, auth),
    ...people(client, auth),
  };
}

function messages(
  client: WebClient,
  auth: Auth,
): Pick<SlackWriter, "post" | "update" | "remove" | "ephemeral" | "react" | "unreact"> {
  return {
    async post(channelId, payload, threadTs) {
      const res = await client.chat.postMessage({
        ...(await auth()),
        channel: channelId,
        text: payload.text,
        blocks: payload.blocks,
        metadata: payload.metadata,
        ...(threadTs ? { thread_ts: threadTs } : {}),
        unfurl_links: false,
        unfurl_media: false,
      });
      if (!res.ts) throw new Error("chat.postMessage returned no ts");
      return res.ts;
    },

    async update(channel, ts, lazy) {
      const payload = typeof lazy === "function" ? lazy() : lazy;
      if (payload === undefined) return; // nothing new to show
      const { text, blocks, metadata } = payload;
      await client.chat.update({ ...(await auth()), channel, ts, text, blocks, metadata });
    },

    async remove(channel, ts) {
      await client.chat.delete({ ...(await auth()), channel, ts });
    },

    async ephemeral(channel, user, text, threadTs) {
      const thread = threadTs ? { thread_ts: threadTs } : {};
      await client.chat.postEphemeral({ ...(await auth()), channel, user, text, ...thread });
    },

    async react(channelId, ts, name) {
      const reaction = { ...(await auth()), channel: channelId, timestamp: ts, name };
      await client.reactions.add(reaction).catch((err: unknown) => {
        if (slackErrorCode(err) !== "already_reacted") throw err;
      });
    },

    async unreact(channelId, ts, name) {
      const reaction = { ...(await auth()), channel: channelId, timestamp: ts, name };
      await client.reactions.remove(reaction).catch((err: unknown) => {
        if (slackErrorCode(err) !== "no_reaction") throw err;
      });
    },
  };
}

function files(
  client: WebClient,
  auth: Auth,
  dispatcher: Dispatcher | undefined,
): Pick<SlackWriter, "upload" | "sharedFileNames"> {
  /** A file's bytes to its upload URL, uncopied; Slack answers 200 when it has them. */
  const send = async (url: string, bytes: Buffer, bearer: string | undefined) => {
    const res = await request(url, {
      method: "POST",
      body: bytes,
      headers: {
        "content-type": "application/octet-stream",
        ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      },
      ...(dispatcher ? { dispatcher } : {}),
      headersTimeout: UPLOAD_TIMEOUT_MS,
      bodyTimeout: UPLOAD_TIMEOUT_MS,
    });
    await res.body.dump();
    if (res.statusCode !== 200)
      throw new Error(`Slack refused a file's bytes: HTTP ${res.statusCode}`);
  };

  return {
    /**
     * An upload URL per file (files.getUploadURLExternal), the bytes POSTed there raw ("Files can
     * be sent as raw bytes", its reference page), one files.completeUploadExternal per batch. The
     * WebClient's filesUploadV2 would copy each file twice, which files of tens of MB cannot afford.
     */
    async upload(channelId, threadTs, files) {
      for (let i = 0; i < files.length; i += UPLOAD_BATCH) {
        const batch = files.slice(i, i + UPLOAD_BATCH);
        const withToken = await auth();
        const uploaded: { id: string; title: string }[] = [];
        for (const f of batch) {
          const target = await client.files.getUploadURLExternal({
            ...withToken,
            filename: f.filename,
            length: f.bytes.length,
          });
          if (!target.upload_url || !target.file_id)
            throw new Error("files.getUploadURLExternal returned no upload URL");
          await send(target.upload_url, f.bytes, withToken.token);
          uploaded.push({ id: target.file_id, title: f.title ?? f.filename });
        }
        await client.files.completeUploadExternal({
          ...withToken,
          files: uploaded as [{ id: string; title: string }],
          channel_id: channelId,
          thread_ts: threadTs,
        });
      }
    },

    async sharedFileNames(channelId, threadTs, sinceTs) {
      const names = new Set<string>();
      let cursor: string | undefined;
      do {
        const res = await client.conversations.replies({
          ...(await auth()),
          channel: channelId,
          ts: threadTs,
          limit: 200,
          ...(cursor ? { cursor } : {}),
        });
        for (const m of res.messages ?? []) {
          if (sinceTs && m.ts && compareTs(m.ts, sinceTs) < 0) continue;
          for (const f of m.files ?? []) if (f.name) names.add(f.name);
        }
        cursor = res.response_metadata?.next_cursor || undefined;
      } while (cursor);
      return names;
    },
  };
}

/** Slack's native streams, and the agent view's status, title and session. */
function streams(
  client: WebClient,
  auth: Auth,
): Pick<
  SlackWriter,
  "startStream" | "appendStream" | "stopStream" | "setStatus" | "setTitle" | "setSessionStatus"
> {
  let sessions = true;
  return {
    async startStream(channelId, threadTs, recipient, markdown, display) {
      const res = await client.chat.startStream({
        ...(await auth()),
        channel: channelId,
        thread_ts: threadTs,
        recipient_user_id: recipient.userId,
        recipient_team_id: recipient.teamId,
        markdown_text: markdown,
        ...(display ? { task_display_mode: display } : {}),
      });
      if (!res.ts) throw new Error("chat.startStream returned no ts");
      return res.ts;
    },

    async appendStream(channelId, ts, markdown, steps) {
      const at = { ...(await auth()), channel: channelId, ts };
      if (!steps?.length)
        return void (await client.chat.appendStream({ ...at, markdown_text: markdown }));
      // Steps go as chunks, and then the text goes as a chunk too (one or the other per call).
      const text = markdown === "" ? [] : [{ type: "markdown_text" as const, text: markdown }];
      const updates = steps.map((s) => ({ type: "task_update" as const, ...s }));
      await client.chat.appendStream({ ...at, chunks: [...updates, ...text] });
    },

    async stopStream(channel, ts, end) {
      // Blocks "appended to the end of the message" (chat.stopStream's reference page).
      const { blocks, metadata } = end ?? {};
      await client.chat.stopStream({ ...(await auth()), channel, ts, blocks, metadata });
    },

    async setStatus(channelId, threadTs, status, loadingMessages) {
      await client.assistant.threads.setStatus({
        ...(await auth()),
        channel_id: channelId,
        thread_ts: threadTs,
        status,
        ...(loadingMessages ? { loading_messages: [...loadingMessages] } : {}),
      });
    },

    async setTitle(channelId, threadTs, title) {
      const at = { ...(await auth()), channel_id: channelId, thread_ts: threadTs };
      await client.assistant.threads.setTitle({ ...at, title });
    },

    async setSessionStatus(channelId, threadTs, status, title) {
      if (!sessions) return;
      try {
        await client.agents.sessions.setStatus({
          ...(await auth()),
          channel_id: channelId,
          thread_ts: threadTs,
          status,
          ...(title ? { title: title.slice(0, 200) } : {}),
        });
      } catch (err) {
        // Not in this workspace (or this token): stop asking; the assistant status still shows.
        if (SESSIONS_MISSING.has(slackErrorCode(err) ?? "")) sessions = false;
        throw err;
      }
    },
  };
}

/** People are remembered 10 minutes: every task and reply checks its sender. */
function people(client: WebClient, auth: Auth): Pick<SlackWriter, "join" | "isAdmin" | "person"> {
  const known = remembered<Person | undefined>({ ttlMs: 10 * 60_000, max: 10_000 });
  return {
    async join(channelId) {
      try {
        await client.conversations.join({ ...(await auth()), channel: channelId });
        return true;
      } catch {
        // Private channels, DMs, restricted workspaces: posting will say what is wrong.
        return false;
      }
    },

    async isAdmin(userId) {
      const res = await client.users.info({ ...(await auth()), user: userId });
      return res.user?.is_admin === true || res.user?.is_owner === true;
    },

    person(userId) {
      const lookUp = async () => {
        const { user } = await client.users.info({ ...(await auth()), user: userId });
        return (
          user && {
            teamId: user.team_id,
            guest: user.is_restricted === true || user.is_ultra_restricted === true,
            deleted: user.deleted === true,
          }
        );
      };
      // Not remembered when Slack does not answer: it may next time.
      return known(userId, lookUp).catch(() => undefined);
    },
  };
}

/** Orders two Slack timestamps ("seconds.micros") exactly, without float rounding. */
export function compareTs(a: string, b: string): number {
  const [as = "0", af = ""] = a.split(".");
  const [bs = "0", bf = ""] = b.split(".");
  const secs = BigInt(as) - BigInt(bs);
  if (secs !== 0n) return secs < 0n ? -1 : 1;
  const fa = af.padEnd(6, "0");
  const fb = bf.padEnd(6, "0");
  return fa === fb ? 0 : fa < fb ? -1 : 1;
}
