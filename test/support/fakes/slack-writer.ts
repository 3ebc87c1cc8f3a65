/**
 * A Slack writer for unit tests that records what people would see in the thread. Like the
 * Slack scheduler, it keeps only the latest waiting edit of each message and renders it when
 * it is "sent": here, when the test calls `flush()` (as a budget refill would).
 */
import type { SlackWriter, UploadItem } from "../../../src/runs/ports.ts";
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
  startStream = (): Promise<string> => Promise.reject(new Error("not used"));
  appendStream = (): Promise<void> => Promise.reject(new Error("not used"));
  stopStream = (): Promise<void> => Promise.reject(new Error("not used"));
}
