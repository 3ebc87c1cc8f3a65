/**
 * The answer shown by editing the run's messages: posts new parts, edits the one that grows,
 * removes extras at the end, posts anew what Slack no longer lets be edited. The writer asks for
 * an edit's payload only when it goes out, so each is rendered once, with the latest text.
 */
import type { Logger } from "pino";
import { slackErrorCode } from "../../view/errors.ts";
import type { MessagePayload } from "../../view/render.ts";
import type { SlackWriter } from "../ports.ts";
import type { AnswerPlace, AnswerSink, FinalAnswer, RunningAnswer } from "./sink.ts";

/** Slack answers these when a message cannot be edited any more: carry on in a new one. */
const GONE = new Set(["message_not_found", "cant_update_message", "edit_window_closed"]);

export interface SinkOptions {
  readonly writer: SlackWriter;
  readonly channelId: string;
  readonly threadTs: string;
  readonly initial: AnswerPlace;
  readonly log: Logger;
  /** A stream message the run's previous owner may have left streaming: stopped before edits. */
  readonly leftStreaming?: string | undefined;
}

export class EditSink implements AnswerSink {
  readonly #opts: SinkOptions;
  /** The messages after the sealed ones. */
  #ts: string[];
  /** What each of them shows (its payload as JSON): unchanged ones are not sent again. */
  #sent: string[] = [];
  #posting: Promise<void> = Promise.resolve();
  /** The final write has begun: interim edits post nothing more. */
  #ending = false;
  /** The interim edit queued and not rendered yet: it will show the latest text anyway. */
  #queued: object | undefined;
  #controlTs: string | undefined;
  /** Sealed messages, and how many characters of the answer they show. */
  readonly #sealed: string[];
  #sealedChars: number;
  /** The stop of a stream left streaming: edits wait for it. */
  #ready: Promise<void> | undefined;

  constructor(options: SinkOptions) {
    const { initial } = options;
    this.#opts = options;
    this.#controlTs = initial.controlTs;
    const count = initial.sealed?.messages ?? 0;
    this.#sealed = initial.messageTs.slice(0, count);
    this.#sealedChars = initial.sealed?.chars ?? 0;
    this.#ts = initial.messageTs.slice(count);
  }

  get sealedChars(): number {
    return this.#sealedChars;
  }

  get place(): AnswerPlace {
    const sealed = this.#sealed.length;
    return {
      messageTs: sealed === 0 ? this.#ts : [...this.#sealed, ...this.#ts],
      ...(this.#controlTs !== undefined ? { controlTs: this.#controlTs } : {}),
      ...(sealed > 0 ? { sealed: { messages: sealed, chars: this.#sealedChars } } : {}),
    };
  }

  show(answer: RunningAnswer): Promise<boolean> {
    const edit = () => this.#interim(() => answer.render(this.#sealedChars));
    const stopped = this.#leftStreamingStopped();
    return stopped ? stopped.then(edit) : edit();
  }

  step(): void {} // the status line of the next edit shows the steps

  async leave(): Promise<void> {}

  async final(answer: FinalAnswer): Promise<boolean> {
    const { log } = this.#opts;
    const payloads = answer.render(this.#sealedChars);
    await this.#leftStreamingStopped();
    const show = () => this.#showFinal(payloads).then(() => true);
    return show().catch((err: unknown) => {
      log.error({ err, code: slackErrorCode(err) }, "final edit failed; posting the answer anew");
      this.#ts = [];
      this.#sent = [];
      return show().catch((e: unknown) => {
        log.error({ err: e }, "could not show the final answer");
        return false;
      });
    });
  }

  async removeControl(): Promise<void> {
    const control = this.#controlTs;
    // The answer lives in the stream message now: the "working…" message has done its job.
    if (control === undefined || this.place.messageTs.includes(control)) return;
    await this.#opts.writer.remove(this.#opts.channelId, control).catch((err: unknown) => {
      this.#opts.log.warn({ err }, "could not remove the working message");
    });
  }

  #leftStreamingStopped(): Promise<void> | undefined {
    const { writer, channelId, leftStreaming } = this.#opts;
    if (leftStreaming === undefined) return undefined;
    // Slack answers message_not_in_streaming_state when it was stopped or expired already.
    this.#ready ??= writer.stopStream(channelId, leftStreaming).catch(() => undefined);
    return this.#ready;
  }

  /**
   * A stream message shows the answer from character `from` on: the run's first (the "working…"
   * message is kept as control), or a rotated stream's next (the ones before it are sealed).
   */
  streamedIn(streamTs: string, from: number): void {
    if (from === 0) {
      this.#controlTs = this.#ts[0] ?? this.#controlTs;
    } else {
      this.#sealed.push(...this.#ts);
      this.#sealedChars = from;
    }
    this.#ts = [streamTs];
    this.#sent = [];
  }

  /** The stream ended: the next edit sends every part in full. */
  forgetShown(): void {
    this.#sent = [];
  }

  /** Queues the running answer's rendering for the last message (see `AnswerSink.show`). */
  async #interim(render: () => MessagePayload[] | undefined): Promise<boolean> {
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
    const { writer, channelId } = this.#opts;
    try {
      await writer.update(channelId, ts, payloadNow, { final: false });
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
    if (more.length > 0 && !this.#ending) await this.#postFrom(index + 1, more);
    return wrote;
  }

  async #showFinal(payloads: readonly MessagePayload[]): Promise<void> {
    const { writer, channelId, threadTs, log } = this.#opts;
    this.#ending = true;
    await this.#posting.catch(() => undefined);
    for (const [i, payload] of payloads.entries()) {
      const json = JSON.stringify(payload);
      if (this.#sent[i] === json) continue;
      const ts = this.#ts[i];
      if (ts === undefined) {
        this.#ts.push(await writer.post(channelId, payload, threadTs));
      } else {
        try {
          await writer.update(channelId, ts, payload, { final: true });
        } catch (err) {
          if (!GONE.has(slackErrorCode(err) ?? "")) throw err;
          await this.#repost(i, payload);
        }
      }
      this.#sent[i] = json;
    }
    for (const extra of this.#ts.splice(payloads.length)) {
      await writer
        .remove(channelId, extra)
        .catch((err: unknown) => log.warn({ err }, "could not remove a surplus message"));
    }
  }

  async #repost(index: number, payload: MessagePayload): Promise<void> {
    const { writer, channelId, threadTs } = this.#opts;
    this.#ts[index] = await writer.post(channelId, payload, threadTs);
    this.#sent[index] = JSON.stringify(payload);
  }

  /** Posts the parts from `first` on that have no message yet, one at a time, in order. */
  #postFrom(first: number, parts: readonly MessagePayload[]): Promise<void> {
    const { writer, channelId, threadTs } = this.#opts;
    this.#posting = this.#posting.then(async () => {
      for (const [offset, payload] of parts.entries()) {
        if (this.#ending) return; // the final write shows every part
        const i = first + offset;
        if (this.#ts[i] !== undefined) continue; // posted meanwhile; edits keep it current
        this.#ts[i] = await writer.post(channelId, payload, threadTs);
        this.#sent[i] = JSON.stringify(payload);
      }
    });
    return this.#posting;
  }
}
