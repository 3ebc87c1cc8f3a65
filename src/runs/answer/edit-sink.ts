/**
 * The answer shown by editing the run's messages, the final one posted anew if Slack no longer
 * lets them be edited. Messages a rotated stream sealed keep their part.
 */
import type { Logger } from "pino";
import { slackErrorCode } from "../../view/errors.ts";
import type { SlackWriter } from "../ports.ts";
import { RunMessages } from "./messages.ts";
import type { AnswerPlace, AnswerSink, FinalAnswer, RunningAnswer } from "./sink.ts";

export interface SinkOptions {
  readonly writer: SlackWriter;
  readonly channelId: string;
  readonly threadTs: string;
  /** Where the answer already is (its "working…" message, or more after a resume). */
  readonly initial: AnswerPlace;
  readonly log: Logger;
  /** A stream message the run's previous owner may have left streaming: stopped before edits. */
  readonly leftStreaming?: string | undefined;
}

export class EditSink implements AnswerSink {
  readonly #opts: SinkOptions;
  readonly #messages: RunMessages;
  #controlTs: string | undefined;
  /** Sealed messages, and how many characters of the answer they show. */
  readonly #sealed: string[];
  #sealedChars: number;
  /** The stop of a stream left streaming, if any: edits wait for it. */
  #ready: Promise<void> | undefined;

  constructor(options: SinkOptions) {
    const { initial } = options;
    this.#opts = options;
    this.#controlTs = initial.controlTs;
    const count = initial.sealed?.messages ?? 0;
    this.#sealed = initial.messageTs.slice(0, count);
    this.#sealedChars = initial.sealed?.chars ?? 0;
    this.#messages = new RunMessages({
      writer: options.writer,
      channelId: options.channelId,
      threadTs: options.threadTs,
      initial: initial.messageTs.slice(count),
      log: options.log,
    });
  }

  get sealedChars(): number {
    return this.#sealedChars;
  }

  get place(): AnswerPlace {
    const sealed = this.#sealed.length;
    return {
      messageTs: sealed === 0 ? this.#messages.ts : [...this.#sealed, ...this.#messages.ts],
      ...(this.#controlTs !== undefined ? { controlTs: this.#controlTs } : {}),
      ...(sealed > 0 ? { sealed: { messages: sealed, chars: this.#sealedChars } } : {}),
    };
  }

  show(answer: RunningAnswer): Promise<boolean> {
    const edit = () => this.#messages.interim(() => answer.render(this.#sealedChars));
    const stopped = this.#leftStreamingStopped();
    return stopped ? stopped.then(edit) : edit();
  }

  step(): void {} // the status line of the next edit shows the steps

  async leave(): Promise<void> {}

  async final(answer: FinalAnswer): Promise<boolean> {
    const { log } = this.#opts;
    const payloads = answer.render(this.#sealedChars);
    await this.#leftStreamingStopped();
    try {
      await this.#messages.final(payloads);
      return true;
    } catch (err) {
      log.error({ err, code: slackErrorCode(err) }, "final edit failed; posting the answer anew");
      this.#messages.abandon();
      try {
        await this.#messages.final(payloads);
        return true;
      } catch (e) {
        log.error({ err: e }, "could not show the final answer");
        return false;
      }
    }
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
   * message is kept as the control message), or the next one of a rotated stream (the messages
   * before it are sealed with what they show).
   */
  streamedIn(streamTs: string, from: number): void {
    if (from === 0) {
      this.#controlTs = this.#messages.ts[0] ?? this.#controlTs;
    } else {
      this.#sealed.push(...this.#messages.ts);
      this.#sealedChars = from;
    }
    this.#messages.replace([streamTs]);
  }

  /** The stream ended: the next edit sends every part in full. */
  forgetShown(): void {
    this.#messages.forgetShown();
  }
}
