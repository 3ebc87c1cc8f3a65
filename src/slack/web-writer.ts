/** The relay's SlackWriter port on Slack's Web API (WebClient). */
import type { WebClient } from "@slack/web-api";
import { type Dispatcher, request } from "undici";
import type {
  Person,
  SlackWriter,
  StreamEnd,
  StreamStep,
  TaskDisplay,
  UploadItem,
} from "../runs/ports.ts";
import { slackErrorCode } from "../view/errors.ts";
import type { MessagePayload } from "../view/render.ts";
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

/**
 * Each SlackWriter call is one Web API call (uploads: one per batch of files). `token` gives the
 * workspace's bot token for each call (else the client's own is used); `dispatcher` carries the
 * files' bytes to Slack's upload URLs (the app's outbound proxy, if any).
 */
export function webClientWriter(
  client: WebClient,
  token?: () => Promise<string>,
  dispatcher?: Dispatcher,
): SlackWriter {
  return new WebClientWriter(client, token, dispatcher);
}

class WebClientWriter implements SlackWriter {
  readonly #client: WebClient;
  /** False once Slack said this app has no agent sessions API. */
  #sessions = true;
  /** Every task and reply checks its sender: people are remembered 10 minutes. */
  readonly #people = remembered<Person | undefined>({ ttlMs: 10 * 60_000, max: 10_000 });
  readonly #token: (() => Promise<string>) | undefined;
  readonly #dispatcher: Dispatcher | undefined;

  constructor(client: WebClient, token?: () => Promise<string>, dispatcher?: Dispatcher) {
    this.#client = client;
    this.#token = token;
    this.#dispatcher = dispatcher;
  }

  async #auth(): Promise<{ token?: string }> {
    return this.#token ? { token: await this.#token() } : {};
  }

  async post(channelId: string, payload: MessagePayload, threadTs?: string): Promise<string> {
    const res = await this.#client.chat.postMessage({
      ...(await this.#auth()),
      channel: channelId,
      text: payload.text,
      blocks: payload.blocks,
      ...(payload.metadata ? { metadata: payload.metadata } : {}),
      ...(threadTs ? { thread_ts: threadTs } : {}),
      unfurl_links: false,
      unfurl_media: false,
    });
    if (!res.ts) throw new Error("chat.postMessage returned no ts");
    return res.ts;
  }

  async update(
    channelId: string,
    ts: string,
    lazy: MessagePayload | (() => MessagePayload | undefined),
  ): Promise<void> {
    const payload = typeof lazy === "function" ? lazy() : lazy;
    if (payload === undefined) return; // nothing new to show
    await this.#client.chat.update({
      ...(await this.#auth()),
      channel: channelId,
      ts,
      text: payload.text,
      blocks: payload.blocks,
      ...(payload.metadata ? { metadata: payload.metadata } : {}),
    });
  }

  async remove(channelId: string, ts: string): Promise<void> {
    await this.#client.chat.delete({ ...(await this.#auth()), channel: channelId, ts });
  }

  async ephemeral(
    channelId: string,
    userId: string,
    text: string,
    threadTs?: string,
  ): Promise<void> {
    await this.#client.chat.postEphemeral({
      ...(await this.#auth()),
      channel: channelId,
      user: userId,
      text,
      ...(threadTs ? { thread_ts: threadTs } : {}),
    });
  }

  async react(channelId: string, ts: string, name: string): Promise<void> {
    const reaction = { ...(await this.#auth()), channel: channelId, timestamp: ts, name };
    await this.#client.reactions.add(reaction).catch((err: unknown) => {
      if (slackErrorCode(err) !== "already_reacted") throw err;
    });
  }

  async unreact(channelId: string, ts: string, name: string): Promise<void> {
    const reaction = { ...(await this.#auth()), channel: channelId, timestamp: ts, name };
    await this.#client.reactions.remove(reaction).catch((err: unknown) => {
      if (slackErrorCode(err) !== "no_reaction") throw err;
    });
  }

  /**
   * Uploads files as Slack's external upload flow asks: an upload URL per file
   * (files.getUploadURLExternal), its bytes POSTed there raw ("Files can be sent as raw bytes or
   * can be multipart form encoded", the method's reference page), then one
   * files.completeUploadExternal per batch (one message). The bytes are sent as they are: the
   * WebClient's filesUploadV2 copies each file twice (into a Uint8Array, then a Blob), which a
   * run's files of tens of MB cannot afford.
   */
  async upload(channelId: string, threadTs: string, files: readonly UploadItem[]): Promise<void> {
    for (let i = 0; i < files.length; i += UPLOAD_BATCH) {
      const batch = files.slice(i, i + UPLOAD_BATCH);
      const auth = await this.#auth();
      const uploaded: { id: string; title: string }[] = [];
      for (const f of batch) {
        const target = await this.#client.files.getUploadURLExternal({
          ...auth,
          filename: f.filename,
          length: f.bytes.length,
        });
        if (!target.upload_url || !target.file_id) {
          throw new Error("files.getUploadURLExternal returned no upload URL");
        }
        await this.#send(target.upload_url, f.bytes, auth.token);
        uploaded.push({ id: target.file_id, title: f.title ?? f.filename });
      }
      await this.#client.files.completeUploadExternal({
        ...auth,
        files: uploaded as [{ id: string; title: string }],
        channel_id: channelId,
        thread_ts: threadTs,
      });
    }
  }

  /** A file's bytes to its upload URL, as they are (no copy); Slack answers 200 when it has them. */
  async #send(url: string, bytes: Buffer, token: string | undefined): Promise<void> {
    const res = await request(url, {
      method: "POST",
      body: bytes,
      headers: {
        "content-type": "application/octet-stream",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      ...(this.#dispatcher ? { dispatcher: this.#dispatcher } : {}),
      headersTimeout: UPLOAD_TIMEOUT_MS,
      bodyTimeout: UPLOAD_TIMEOUT_MS,
    });
    await res.body.dump();
    if (res.statusCode !== 200)
      throw new Error(`Slack refused a file's bytes: HTTP ${res.statusCode}`);
  }

  async startStream(
    channelId: string,
    threadTs: string,
    recipient: { userId: string; teamId: string },
    markdown: string,
    display?: TaskDisplay,
  ): Promise<string> {
    const res = await this.#client.chat.startStream({
      ...(await this.#auth()),
      channel: channelId,
      thread_ts: threadTs,
      recipient_user_id: recipient.userId,
      recipient_team_id: recipient.teamId,
      markdown_text: markdown,
      ...(display ? { task_display_mode: display } : {}),
    });
    if (!res.ts) throw new Error("chat.startStream returned no ts");
    return res.ts;
  }

  async appendStream(
    channelId: string,
    ts: string,
    markdown: string,
    steps?: readonly StreamStep[],
  ): Promise<void> {
    if (!steps || steps.length === 0) {
      await this.#client.chat.appendStream({
        ...(await this.#auth()),
        channel: channelId,
        ts,
        markdown_text: markdown,
      });
      return;
    }
    // Steps go as chunks, and then the text goes as a chunk too (one or the other per call).
    const text = markdown === "" ? [] : [{ type: "markdown_text" as const, text: markdown }];
    const updates = steps.map((s) => ({ type: "task_update" as const, ...s }));
    await this.#client.chat.appendStream({
      ...(await this.#auth()),
      channel: channelId,
      ts,
      chunks: [...updates, ...text],
    });
  }

  async stopStream(channelId: string, ts: string, end?: StreamEnd): Promise<void> {
    await this.#client.chat.stopStream({
      ...(await this.#auth()),
      channel: channelId,
      ts,
      // Blocks "appended to the end of the message" (chat.stopStream's reference page).
      ...(end ? { blocks: end.blocks } : {}),
      ...(end?.metadata ? { metadata: end.metadata } : {}),
    });
  }

  async sharedFileNames(
    channelId: string,
    threadTs: string,
    sinceTs?: string,
  ): Promise<Set<string>> {
    const names = new Set<string>();
    let cursor: string | undefined;
    do {
      const res = await this.#client.conversations.replies({
        ...(await this.#auth()),
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
  }

  async setStatus(
    channelId: string,
    threadTs: string,
    status: string,
    loadingMessages?: readonly string[],
  ): Promise<void> {
    await this.#client.assistant.threads.setStatus({
      ...(await this.#auth()),
      channel_id: channelId,
      thread_ts: threadTs,
      status,
      ...(loadingMessages ? { loading_messages: [...loadingMessages] } : {}),
    });
  }

  async setTitle(channelId: string, threadTs: string, title: string): Promise<void> {
    await this.#client.assistant.threads.setTitle({
      ...(await this.#auth()),
      channel_id: channelId,
      thread_ts: threadTs,
      title,
    });
  }

  async setSessionStatus(
    channelId: string,
    threadTs: string,
    status: "processing" | "active",
    title?: string,
  ): Promise<void> {
    if (!this.#sessions) return;
    try {
      await this.#client.agents.sessions.setStatus({
        ...(await this.#auth()),
        channel_id: channelId,
        thread_ts: threadTs,
        status,
        ...(title ? { title: title.slice(0, 200) } : {}),
      });
    } catch (err) {
      // Not in this workspace (or this token): stop asking; the assistant status still shows.
      if (SESSIONS_MISSING.has(slackErrorCode(err) ?? "")) this.#sessions = false;
      throw err;
    }
  }

  async join(channelId: string): Promise<boolean> {
    try {
      await this.#client.conversations.join({ ...(await this.#auth()), channel: channelId });
      return true;
    } catch {
      // Private channels, DMs, restricted workspaces: posting will say what is wrong.
      return false;
    }
  }

  async isAdmin(userId: string): Promise<boolean> {
    const res = await this.#client.users.info({ ...(await this.#auth()), user: userId });
    return res.user?.is_admin === true || res.user?.is_owner === true;
  }

  person(userId: string): Promise<Person | undefined> {
    const lookUp = async () => {
      const { user } = await this.#client.users.info({ ...(await this.#auth()), user: userId });
      return (
        user && {
          teamId: user.team_id,
          guest: user.is_restricted === true || user.is_ultra_restricted === true,
          deleted: user.deleted === true,
        }
      );
    };
    // Not remembered when Slack does not answer: it may next time.
    return this.#people(userId, lookUp).catch(() => undefined);
  }
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
