/**
 * The Slack messages that show one run, in order: posts the parts that are new, edits the one
 * that grows, removes extras at the end. The writer decides when an edit goes out and asks for
 * its payload only then, so each sent edit is rendered once, with the latest text.
 */
import type { Logger } from "pino";
import { slackErrorCode } from "../../view/errors.ts";
import type { MessagePayload } from "../../view/render.ts";
import type { SlackWriter } from "../ports.ts";

/** Slack answers these when a message cannot be edited any more: carry on in a new one. */
const GONE = new Set(["message_not_found", "cant_update_message", "edit_window_closed"]);

export interface RunMessagesOptions {
  readonly writer: SlackWriter;
  readonly channelId: string;
  readonly threadTs: string;
  /** The messages already showing the run. */
  readonly initial: readonly string[];
  readonly log: Logger;
}

export class RunMessages {
  readonly #writer: SlackWriter;
  readonly #channel: string;
  readonly #thread: string;
  readonly #log: Logger;
  #ts: string[];
  /** What each message shows now (its payload as JSON): unchanged ones are not sent again. */
  #sent: string[] = [];
  /** Posts of new parts, one at a time and in order. */
  #posting: Promise<void> = Promise.resolve();
  /** The final write has begun: interim edits post nothing more. */
  #final = false;
  /** The interim edit queued and not rendered yet, if any: it will show the latest text anyway. */
  #queued: object | undefined;

  constructor(options: RunMessagesOptions) {
    this.#writer = options.writer;
    this.#channel = options.channelId;
    this.#thread = options.threadTs;
    this.#log = options.log;
    this.#ts = [...options.initial];
  }

  get ts(): readonly string[] {
    return this.#ts;
  }

  replace(ts: readonly string[]): void {
    this.#ts = [...ts];
    this.#sent = [];
  }

  forgetShown(): void {
    this.#sent = [];
  }

  /**
   * Queues the running answer's rendering (every part, `render` called when the edit is sent)
   * for the last message. True when this call's text reached Slack; false when a queued one will
   * show it (no second edit is queued while one waits), or nothing had changed.
   */
  async interim(render: () => MessagePayload[] | undefined): Promise<boolean> {
    const index = this.#ts.length - 1;
    const ts = this.#ts[index];
    if (ts === undefined || this.#queued) return false;
    const mine = {};
    this.#queued = mine;
    const done = () => {
      if (this.#queued === mine) this.#queued = undefined;
    };
    let wrote = false;
    let more: MessagePayload[] = [];
    const payloadNow = () => {
      done();
      const parts = render();
      if (!parts) return undefined;
      more = parts.slice(index + 1);
      const payload = parts[index] ?? parts.at(-1);
      const json = JSON.stringify(payload);
      if (payload === undefined || json === this.#sent[index]) return undefined;
      this.#sent[index] = json;
      wrote = true;
      return payload;
    };
    try {
      await this.#writer.update(this.#channel, ts, payloadNow, { final: false });
    } catch (err) {
      done();
      if (!GONE.has(slackErrorCode(err) ?? "")) throw err;
      // The message is gone or frozen: the text goes on in a new one.
      const payload = render()?.[index];
      if (payload) await this.#repost(index, payload);
      wrote = payload !== undefined;
    }
    // Replaced unrendered (by a final edit, or dropped with its message): nothing waits now.
    done();
    if (more.length > 0 && !this.#final) await this.#postFrom(index + 1, more);
    return wrote;
  }

  async final(payloads: readonly MessagePayload[]): Promise<void> {
    this.#final = true;
    await this.#posting.catch(() => undefined);
    for (const [i, payload] of payloads.entries()) {
      const json = JSON.stringify(payload);
      if (this.#sent[i] === json) continue;
      const ts = this.#ts[i];
      if (ts === undefined) {
        this.#ts.push(await this.#writer.post(this.#channel, payload, this.#thread));
      } else {
        try {
          await this.#writer.update(this.#channel, ts, payload, { final: true });
        } catch (err) {
          if (!GONE.has(slackErrorCode(err) ?? "")) throw err;
          await this.#repost(i, payload);
        }
      }
      this.#sent[i] = json;
    }
    for (const extra of this.#ts.splice(payloads.length)) {
      await this.#writer
        .remove(this.#channel, extra)
        .catch((err: unknown) => this.#log.warn({ err }, "could not remove a surplus message"));
    }
  }

  /** Forgets every message: the final answer is posted anew (its messages could not be edited). */
  abandon(): void {
    this.#ts = [];
    this.#sent = [];
  }

  async #repost(index: number, payload: MessagePayload): Promise<void> {
    this.#ts[index] = await this.#writer.post(this.#channel, payload, this.#thread);
    this.#sent[index] = JSON.stringify(payload);
  }

  /** Posts the parts from `first` on that have no message yet, in order. */
  #postFrom(first: number, parts: readonly MessagePayload[]): Promise<void> {
    this.#posting = this.#posting.then(async () => {
      for (const [offset, payload] of parts.entries()) {
        if (this.#final) return; // the final write shows every part
        const i = first + offset;
        if (this.#ts[i] !== undefined) continue; // posted meanwhile; edits keep it current
        this.#ts[i] = await this.#writer.post(this.#channel, payload, this.#thread);
        this.#sent[i] = JSON.stringify(payload);
      }
    });
    return this.#posting;
  }
}
