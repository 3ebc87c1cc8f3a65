/**
 * The Slack writer for unit tests: records what people would see (messages and their edits,
 * uploads, ephemeral messages, reactions, the agent view's status and title) without Slack.
 *
 * Edits are shown at once by default, as a writer with budget to spare would. With
 * `{ edits: "scheduled" }` it behaves like the Slack scheduler: it keeps only the latest
 * waiting edit of each message (the superseded one resolves unsent) and renders it when it is
 * "sent", here when the test calls `flush()` (as a budget refill would); a final edit goes at
 * once. Native streams show their markdown as it is appended; `endStream` ends one as Slack
 * would (expired, or stopped by its reader), and `refuseNextStream` makes a start fail.
 */
import type {
  Person,
  SlackWriter,
  StreamBudget,
  StreamEnd,
  StreamStep,
  TaskDisplay,
  UploadItem,
} from "../../../src/runs/ports.ts";
import type { MessagePayload } from "../../../src/view/render.ts";

export interface ShownMessage {
  readonly channelId: string;
  readonly ts: string;
  readonly threadTs: string | undefined;
  /** The message as last shown. */
  payload: MessagePayload;
  /** Its `text`, as last shown. */
  text: string;
  /** Edits shown so far. */
  edits: number;
  deleted: boolean;
}

/** A file uploaded into a thread. */
export interface Uploaded extends UploadItem {
  readonly channelId: string;
  readonly threadTs: string;
}

export interface Ephemeral {
  channelId: string;
  userId: string;
  text: string;
  threadTs?: string;
}

type Lazy = MessagePayload | (() => MessagePayload | undefined);

export class FakeSlackWriter implements SlackWriter {
  readonly messages: ShownMessage[] = [];
  readonly uploads: Uploaded[] = [];
  /** The files of each upload call (each a Slack message of files), in order. */
  readonly uploadBatches: Uploaded[][] = [];
  readonly ephemerals: Ephemeral[] = [];
  /** The reactions on each message, by ts. */
  readonly reactions = new Map<string, string[]>();
  /** The Web API methods called for messages, in order (chat.postMessage, chat.update). */
  readonly calls: string[] = [];
  /** Workspace admins and owners. */
  readonly admins = new Set<string>();
  /** People by id; anyone else is a member of the workspace ("T1"). */
  readonly people = new Map<string, { teamId: string; guest: boolean; deleted: boolean }>();
  /** People Slack cannot say who they are just now (`users.info` failing): no answer is kept. */
  readonly unidentified = new Set<string>();
  /** The agent-view status of each thread, as last set ("" once cleared). */
  readonly statuses = new Map<string, string>();
  /** The agent-view title of each thread. */
  readonly titles = new Map<string, string>();
  /** The agent session status of each thread, as last set. */
  readonly sessions = new Map<string, string>();

  readonly #scheduled: boolean;
  #ts = 1_700_000_000;
  /** Edits waiting for their turn, by message: only the latest of each is kept. */
  readonly #waiting = new Map<string, { lazy: Lazy; settle: () => void }>();
  #held: Promise<void> | undefined;
  #releaseHeld = () => {};
  #postError: string | undefined;

  constructor(options: { edits?: "at once" | "scheduled" } = {}) {
    this.#scheduled = options.edits === "scheduled";
  }

  /** Posts wait (Slack's budget is spent) until `releasePosts`. */
  holdPosts(): void {
    this.#held = new Promise((resolve) => (this.#releaseHeld = resolve));
  }

  releasePosts(): void {
    this.#releaseHeld();
    this.#held = undefined;
  }

  /** Every post fails with this Slack error code from now on. */
  failPosts(code: string): void {
    this.#postError = code;
  }

  async post(channelId: string, payload: MessagePayload, threadTs?: string): Promise<string> {
    await this.#held;
    if (this.#postError) throw slackError(this.#postError);
    const ts = `${++this.#ts}.000100`;
    this.calls.push("chat.postMessage");
    this.messages.push({
      channelId,
      ts,
      threadTs,
      payload,
      text: payload.text,
      edits: 0,
      deleted: false,
    });
    return ts;
  }

  update(channelId: string, ts: string, payload: Lazy, options?: { final?: boolean }) {
    const key = `${channelId}/${ts}`;
    const previous = this.#waiting.get(key);
    if (previous) {
      previous.settle(); // superseded: resolves unsent
      this.#waiting.delete(key);
    }
    if (!this.#scheduled || options?.final) {
      try {
        this.#send(channelId, ts, payload);
      } catch (err) {
        return Promise.reject(err);
      }
      return Promise.resolve();
    }
    return new Promise<void>((settle) => this.#waiting.set(key, { lazy: payload, settle }));
  }

  /** Sends every waiting edit (rendered now), as the scheduler does when the budget allows. */
  async flush(): Promise<void> {
    for (const [key, { lazy, settle }] of [...this.#waiting]) {
      this.#waiting.delete(key);
      const slash = key.indexOf("/");
      this.#send(key.slice(0, slash), key.slice(slash + 1), lazy);
      settle();
    }
    await new Promise((r) => setImmediate(r));
  }

  #send(channelId: string, ts: string, lazy: Lazy): void {
    const payload = typeof lazy === "function" ? lazy() : lazy;
    if (!payload) return;
    const shown = this.messages.find((m) => m.channelId === channelId && m.ts === ts);
    if (!shown) throw slackError("message_not_found");
    this.calls.push("chat.update");
    shown.payload = payload;
    shown.text = payload.text;
    shown.edits++;
  }

  async remove(channelId: string, ts: string): Promise<void> {
    const key = `${channelId}/${ts}`;
    this.#waiting.get(key)?.settle();
    this.#waiting.delete(key);
    const shown = this.messages.find((m) => m.channelId === channelId && m.ts === ts);
    if (shown) shown.deleted = true;
  }

  async upload(channelId: string, threadTs: string, files: readonly UploadItem[]): Promise<void> {
    // The bytes as they were sent: the app may give their memory back once uploaded.
    const batch = files.map((f) => ({ ...f, bytes: Buffer.from(f.bytes), channelId, threadTs }));
    this.uploads.push(...batch);
    this.uploadBatches.push(batch);
  }

  async sharedFileNames(channelId: string, threadTs: string): Promise<Set<string>> {
    const shared = this.uploads.filter((u) => u.channelId === channelId && u.threadTs === threadTs);
    return new Set(shared.map((u) => u.filename));
  }

  async ephemeral(channelId: string, userId: string, text: string, threadTs?: string) {
    this.ephemerals.push({ channelId, userId, text, ...(threadTs ? { threadTs } : {}) });
  }

  async react(_channelId: string, ts: string, name: string): Promise<void> {
    this.reactions.set(ts, [...(this.reactions.get(ts) ?? []), name]);
  }

  async unreact(_channelId: string, ts: string, name: string): Promise<void> {
    this.reactions.set(
      ts,
      (this.reactions.get(ts) ?? []).filter((n) => n !== name),
    );
  }

  async setStatus(_channelId: string, threadTs: string, status: string): Promise<void> {
    this.statuses.set(threadTs, status);
  }

  async setTitle(_channelId: string, threadTs: string, title: string): Promise<void> {
    this.titles.set(threadTs, title);
  }

  async setSessionStatus(_channelId: string, threadTs: string, status: string): Promise<void> {
    this.sessions.set(threadTs, status);
  }

  async join(): Promise<boolean> {
    return true;
  }

  async person(userId: string): Promise<Person | undefined> {
    if (this.unidentified.has(userId)) return undefined;
    return this.people.get(userId) ?? { teamId: "T1", guest: false, deleted: false };
  }

  async isAdmin(userId: string): Promise<boolean> {
    return this.admins.has(userId);
  }

  /** Streams Slack has not ended, by message ts; what a stream shows is its markdown so far. */
  readonly #streaming = new Set<string>();
  /** The `task_display_mode` of each chat.startStream, in order. */
  readonly displays: (TaskDisplay | undefined)[] = [];
  /** The error Slack answers the next chat.startStream with, if any. */
  refuseNextStream: string | undefined;
  /** Stops wait for this (their budget is spent) before they are sent. */
  stopsWaitFor: Promise<void> = Promise.resolve();
  /** The stream budget auto streaming asks; see `allowStreams`. */
  streams?: StreamBudget;

  /** Lets `starts` streams start at once (the budget's tokens), and no more. */
  allowStreams(starts: number): void {
    let left = starts;
    const tryStart = async (...args: Parameters<SlackWriter["startStream"]>) => {
      if (left <= 0) return undefined;
      left -= 1;
      return this.startStream(...args);
    };
    this.streams = { tryStart, tryNext: tryStart };
  }

  async startStream(
    channelId: string,
    threadTs: string,
    _recipient: { userId: string; teamId: string },
    markdown: string,
    display?: TaskDisplay,
  ): Promise<string> {
    this.calls.push("chat.startStream");
    this.displays.push(display);
    const refusal = this.refuseNextStream;
    this.refuseNextStream = undefined;
    if (refusal) throw slackError(refusal);
    const ts = `${++this.#ts}.000100`;
    const payload = { text: markdown, blocks: [] };
    this.messages.push({
      channelId,
      ts,
      threadTs,
      payload,
      text: markdown,
      edits: 0,
      deleted: false,
    });
    this.#streaming.add(ts);
    return ts;
  }

  async appendStream(
    _channelId: string,
    ts: string,
    markdown: string,
    steps?: readonly StreamStep[],
  ): Promise<void> {
    this.calls.push("chat.appendStream");
    const shown = this.messages.find((m) => m.ts === ts);
    if (!shown || !this.#streaming.has(ts)) {
      throw slackError(this.#ended.get(ts) ?? "message_not_in_streaming_state");
    }
    shown.payload = { ...shown.payload, text: shown.payload.text + markdown };
    shown.text = shown.payload.text;
    this.steps.push(...(steps ?? []));
  }

  async stopStream(_channelId: string, ts: string, end?: StreamEnd): Promise<void> {
    await this.stopsWaitFor;
    this.calls.push("chat.stopStream");
    if (!this.#streaming.delete(ts)) {
      throw slackError(this.#ended.get(ts) ?? "message_not_in_streaming_state");
    }
    const shown = this.messages.find((m) => m.ts === ts);
    // The stop's blocks go below what was streamed.
    if (shown && end) shown.payload = { ...shown.payload, ...end };
  }

  /** The agent's steps as the streams received them. */
  readonly steps: StreamStep[] = [];

  /** Slack ends a stream on its own: it expired, or its reader stopped it (`stopped_by_user`). */
  endStream(ts: string, error = "message_not_in_streaming_state"): void {
    this.#streaming.delete(ts);
    this.#ended.set(ts, error);
  }

  readonly #ended = new Map<string, string>();

  /** Whether a stream is still open. */
  streaming(ts: string): boolean {
    return this.#streaming.has(ts);
  }

  /** The text of each message in a thread (deleted ones too), oldest first. */
  thread(threadTs: string): string[] {
    return this.messages.filter((m) => m.threadTs === threadTs).map((m) => m.text);
  }

  /** The blocks of the visible messages of a thread, in order. */
  visible(threadTs: string): string[] {
    return this.messages
      .filter((m) => m.threadTs === threadTs && !m.deleted)
      .map((m) => JSON.stringify(m.payload.blocks));
  }
}

/** An error as Slack's Web API client throws it for an `ok: false` answer. */
function slackError(code: string): Error {
  return Object.assign(new Error(code), { data: { error: code } });
}
