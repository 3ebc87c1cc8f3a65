/**
 * The answer shown by editing messages: the running rendering goes into the run's messages
 * (a long answer spans several), and the final one replaces it, posted anew if Slack no
 * longer lets the messages be edited.
 */
import type { Logger } from "pino";
import { slackErrorCode } from "../../view/errors.ts";
import type { MessagePayload } from "../../view/render.ts";
import type { SlackWriter } from "../ports.ts";
import { RunMessages } from "./messages.ts";
import type { AnswerSink, RunningAnswer } from "./sink.ts";

export interface SinkOptions {
  readonly writer: SlackWriter;
  readonly channelId: string;
  readonly threadTs: string;
  /** The messages already showing the run (its "working…" message, or more after a resume). */
  readonly initial: readonly string[];
  /** A "working…" message an earlier stream replaced (the run's record keeps it). */
  readonly controlTs: string | undefined;
  readonly log: Logger;
}

export class EditSink implements AnswerSink {
  readonly #opts: SinkOptions;
  readonly #messages: RunMessages;
  #controlTs: string | undefined;

  constructor(options: SinkOptions) {
    this.#opts = options;
    this.#controlTs = options.controlTs;
    this.#messages = new RunMessages({
      writer: options.writer,
      channelId: options.channelId,
      threadTs: options.threadTs,
      initial: options.initial,
      log: options.log,
    });
  }

  get ts(): readonly string[] {
    return this.#messages.ts;
  }

  get controlTs(): string | undefined {
    return this.#controlTs;
  }

  show(answer: RunningAnswer): Promise<boolean> {
    return this.#messages.interim(() => answer.render());
  }

  step(): void {
    // The status line of the next edit shows the steps.
  }

  async leave(): Promise<void> {
    // Edited messages need nothing to be left as they are.
  }

  async final(payloads: readonly MessagePayload[]): Promise<boolean> {
    const { log } = this.#opts;
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
    if (control === undefined || this.#messages.ts.includes(control)) return;
    await this.#opts.writer.remove(this.#opts.channelId, control).catch((err: unknown) => {
      this.#opts.log.warn({ err }, "could not remove the working message");
    });
  }

  /** A stream message took over from the first message (kept as the control message). */
  streamedIn(streamTs: string): void {
    this.#controlTs = this.#messages.ts[0] ?? this.#controlTs;
    this.#messages.replace([streamTs]);
  }

  /** The stream ended: whatever the messages show, the next edit sends every part in full. */
  forgetShown(): void {
    this.#messages.forgetShown();
  }
}
