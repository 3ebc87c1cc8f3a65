/**
 * A Slack writer for unit tests that records what people would see in the thread. Like the
 * Slack scheduler, it keeps only the latest waiting edit of each message and renders it when
 * it is "sent": here, when the test calls `flush()` (as a budget refill would).
 */
import type {
  SlackWriter,
  StreamBudget,
  StreamEnd,
  StreamStep,
  UploadItem,
} from "../../../src/runs/ports.ts";
import type { MessagePayload } from "../../../src/view/render.ts";

export interface ShownMessage {
  readonly ts: string;
  readonly threadTs: string | undefined;
  payload: MessagePayload;
  edits: number;
  deleted: boolean;
}

type Lazy = MessagePayload | (() => MessagePayload | undefined);

export class TranscriptWriter implements SlackWriter {
  readonly messages: ShownMessage[] = [];
  readonly uploads: UploadItem[] = [];
  readonly calls: string[] = [];
  #ts = 1_700_000_000;
  /** Edits waiting for their turn, by message: only the latest of each is kept. */
  readonly #waiting = new Map<string, { lazy: Lazy; settle: () => void }>();

  async post(_channelId: string, payload: MessagePayload, threadTs?: string): Promise<string> {
    const ts = `${++this.#ts}.000100`;
    this.calls.push("chat.postMessage");
    this.messages.push({ ts, threadTs, payload, edits: 0, deleted: false });
    return ts;
  }

  update(_channelId: string, ts: string, payload: Lazy, options?: { final?: boolean }) {
    const previous = this.#waiting.get(ts);
    if (previous) {
      previous.settle(); // superseded: resolves unsent
      this.#waiting.delete(ts);
    }
    if (options?.final) {
      this.#send(ts, payload);
      return Promise.resolve();
    }
    return new Promise<void>((settle) => this.#waiting.set(ts, { lazy: payload, settle }));
  }

  /** Sends every waiting edit (rendered now), as the scheduler does when the budget allows. */
  async flush(): Promise<void> {
    for (const [ts, { lazy, settle }] of [...this.#waiting]) {
      this.#waiting.delete(ts);
      this.#send(ts, lazy);
      settle();
    }
    await new Promise((r) => setImmediate(r));
  }

  #send(ts: string, lazy: Lazy): void {
    const payload = typeof lazy === "function" ? lazy() : lazy;
    if (!payload) return;
    const shown = this.messages.find((m) => m.ts === ts);
    if (!shown)
      throw Object.assign(new Error("message_not_found"), { data: { error: "message_not_found" } });
    this.calls.push("chat.update");
    shown.payload = payload;
    shown.edits++;
  }

  async remove(_channelId: string, ts: string): Promise<void> {
    this.#waiting.get(ts)?.settle();
    this.#waiting.delete(ts);
    const shown = this.messages.find((m) => m.ts === ts);
    if (shown) shown.deleted = true;
  }

  async upload(_channelId: string, _threadTs: string, files: readonly UploadItem[]): Promise<void> {
    this.uploads.push(...files);
  }

  async sharedFileNames(): Promise<Set<string>> {
    return new Set(this.uploads.map((u) => u.filename));
  }

  /** The text of the visible messages of a thread, in order. */
  visible(threadTs: string): string[] {
    return this.messages
      .filter((m) => m.threadTs === threadTs && !m.deleted)
      .map((m) => JSON.stringify(m.payload.blocks));
  }

  ephemeral = async () => undefined;
  react = async () => undefined;
  unreact = async () => undefined;
  join = async () => true;
  setStatus = async () => undefined;
  setSessionStatus = async () => undefined;
  setTitle = async () => undefined;
  isAdmin = async () => false;
  person = async () => undefined;
  /** Streams Slack has not ended, by message ts; what a stream shows is its markdown so far. */
  readonly #streaming = new Set<string>();
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
    _channelId: string,
    threadTs: string,
    _recipient: { userId: string; teamId: string },
    markdown: string,
  ): Promise<string> {
    this.calls.push("chat.startStream");
    const refusal = this.refuseNextStream;
    this.refuseNextStream = undefined;
    if (refusal) throw slackError(refusal);
    const ts = `${++this.#ts}.000100`;
    this.messages.push({
      ts,
      threadTs,
      payload: { text: markdown, blocks: [] },
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
}

function slackError(code: string): Error {
  return Object.assign(new Error(code), { data: { ok: false, error: code } });
}
