/**
 * The relay's SlackWriter port on Slack's Web API (WebClient). Tests run the same WebClient
 * against a local Slack Web API server.
 */
import type { WebClient } from "@slack/web-api";
import type { Person, SlackWriter } from "../relay/ports.ts";

/** How long, and for how many people, `person` answers from memory. */
const PEOPLE_TTL_MS = 10 * 60_000;
const PEOPLE_MAX = 10_000;

const UPLOAD_BATCH = 10;

/** Answers that mean the agent sessions API is not there for this app (not a passing failure). */
const SESSIONS_MISSING = new Set([
  "unknown_method",
  "not_allowed_token_type",
  "missing_scope",
  "feature_not_enabled",
  "not_enabled",
]);

export function webClientWriter(client: WebClient): SlackWriter {
  const sessions = { available: true };
  /** People looked up lately: every task and reply checks its sender. */
  const people = new Map<string, { person: Person | undefined; until: number }>();
  return {
    async post(channelId, payload, threadTs) {
      const res = await client.chat.postMessage({
        channel: channelId,
        text: payload.text,
        blocks: payload.blocks,
        ...(threadTs ? { thread_ts: threadTs } : {}),
        unfurl_links: false,
        unfurl_media: false,
      });
      if (!res.ts) throw new Error("chat.postMessage returned no ts");
      return res.ts;
    },
    async update(channelId, ts, lazy) {
      const payload = typeof lazy === "function" ? lazy() : lazy;
      if (payload === undefined) return; // nothing new to show
      await client.chat.update({
        channel: channelId,
        ts,
        text: payload.text,
        blocks: payload.blocks,
      });
    },
    async remove(channelId, ts) {
      await client.chat.delete({ channel: channelId, ts });
    },
    async ephemeral(channelId, userId, text, threadTs) {
      await client.chat.postEphemeral({
        channel: channelId,
        user: userId,
        text,
        ...(threadTs ? { thread_ts: threadTs } : {}),
      });
    },
    async react(channelId, ts, name) {
      try {
        await client.reactions.add({ channel: channelId, timestamp: ts, name });
      } catch (err) {
        if ((err as { data?: { error?: string } }).data?.error !== "already_reacted") throw err;
      }
    },
    async unreact(channelId, ts, name) {
      try {
        await client.reactions.remove({ channel: channelId, timestamp: ts, name });
      } catch (err) {
        if ((err as { data?: { error?: string } }).data?.error !== "no_reaction") throw err;
      }
    },
    async upload(channelId, threadTs, files) {
      for (let i = 0; i < files.length; i += UPLOAD_BATCH) {
        const batch = files.slice(i, i + UPLOAD_BATCH);
        await client.filesUploadV2({
          channel_id: channelId,
          thread_ts: threadTs,
          file_uploads: batch.map((f) => ({
            file: f.bytes,
            filename: f.filename,
            title: f.title ?? f.filename,
          })),
        });
      }
    },
    async startStream(channelId, threadTs, recipient, markdown) {
      const res = await client.chat.startStream({
        channel: channelId,
        thread_ts: threadTs,
        recipient_user_id: recipient.userId,
        recipient_team_id: recipient.teamId,
        markdown_text: markdown,
      });
      if (!res.ts) throw new Error("chat.startStream returned no ts");
      return res.ts;
    },
    async appendStream(channelId, ts, markdown, steps) {
      if (!steps || steps.length === 0) {
        await client.chat.appendStream({ channel: channelId, ts, markdown_text: markdown });
        return;
      }
      // Steps go as chunks, and then the text goes as a chunk too (one or the other per call).
      const text = markdown === "" ? [] : [{ type: "markdown_text" as const, text: markdown }];
      const updates = steps.map((s) => ({ type: "task_update" as const, ...s }));
      await client.chat.appendStream({ channel: channelId, ts, chunks: [...updates, ...text] });
    },
    async stopStream(channelId, ts) {
      await client.chat.stopStream({ channel: channelId, ts });
    },
    async sharedFileNames(channelId, threadTs, sinceTs) {
      const names = new Set<string>();
      let cursor: string | undefined;
      do {
        const res = await client.conversations.replies({
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
    async setStatus(channelId, threadTs, status, loadingMessages) {
      await client.assistant.threads.setStatus({
        channel_id: channelId,
        thread_ts: threadTs,
        status,
        ...(loadingMessages ? { loading_messages: [...loadingMessages] } : {}),
      });
    },
    async setSessionStatus(channelId, threadTs, status, title) {
      if (!sessions.available) return;
      try {
        await client.agents.sessions.setStatus({
          channel_id: channelId,
          thread_ts: threadTs,
          status,
          ...(title ? { title: title.slice(0, 200) } : {}),
        });
      } catch (err) {
        // Not in this workspace (or this token): stop asking; the assistant status still shows.
        const code = (err as { data?: { error?: string } }).data?.error ?? "";
        if (SESSIONS_MISSING.has(code)) sessions.available = false;
        throw err;
      }
    },
    async join(channelId) {
      try {
        await client.conversations.join({ channel: channelId });
        return true;
      } catch {
        // Private channels, DMs, restricted workspaces: posting will say what is wrong.
        return false;
      }
    },
    async isAdmin(userId) {
      const res = await client.users.info({ user: userId });
      return res.user?.is_admin === true || res.user?.is_owner === true;
    },
    async person(userId) {
      const known = people.get(userId);
      if (known && known.until > Date.now()) return known.person;
      let person: Person | undefined;
      try {
        const { user } = await client.users.info({ user: userId });
        person = user && {
          teamId: user.team_id,
          guest: user.is_restricted === true || user.is_ultra_restricted === true,
          deleted: user.deleted === true,
        };
      } catch {
        return undefined; // not cached: Slack may answer next time
      }
      if (people.size >= PEOPLE_MAX) people.delete(people.keys().next().value ?? "");
      people.set(userId, { person, until: Date.now() + PEOPLE_TTL_MS });
      return person;
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
