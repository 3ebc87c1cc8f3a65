/**
 * The answer streamed with Slack's native streaming, addressed to the person who asked: the
 * text is appended to a stream message that replaces the "working…" one. When Slack ends or
 * refuses the stream (or the answer outgrows one message), the answer goes on by editing
 * messages, the stream message first; the final answer is always an edit.
 */
import type { MessagePayload } from "../../view/render.ts";
import { EditSink, type SinkOptions } from "./edit-sink.ts";
import { NativeStream } from "./native-stream.ts";
import type { AnswerSink, RunningAnswer } from "./sink.ts";

export interface NativeSinkOptions extends SinkOptions {
  /** Streams outside DMs are addressed to a person. */
  readonly recipient: { readonly userId: string; readonly teamId: string };
  /** The messages showing the answer changed (the stream message took over): record them. */
  readonly onMoved: () => Promise<void>;
  /** The stream ended early and what it showed is not the rendered answer: show it again. */
  readonly reshow: () => void;
}

export class NativeSink implements AnswerSink {
  /** Where the answer goes once the stream is over (and where the final answer goes). */
  readonly #edits: EditSink;
  readonly #stream: NativeStream;

  constructor(options: NativeSinkOptions) {
    const edits = new EditSink(options);
    this.#edits = edits;
    this.#stream = new NativeStream({
      writer: options.writer,
      channelId: options.channelId,
      threadTs: options.threadTs,
      recipient: options.recipient,
      log: options.log,
      onStarted: async (streamTs) => {
        edits.streamedIn(streamTs);
        await options.onMoved();
      },
      onLeft: () => {
        // The stream message gets the full rendering by the next edit.
        edits.forgetShown();
        options.reshow();
      },
    });
  }

  get ts(): readonly string[] {
    return this.#edits.ts;
  }

  get controlTs(): string | undefined {
    return this.#edits.controlTs;
  }

  show(answer: RunningAnswer): Promise<boolean> {
    if (!this.#stream.on) return this.#edits.show(answer);
    return this.#stream.append(() => answer.text());
  }

  step(title: string): void {
    if (this.#stream.on) void this.#stream.step(title);
  }

  leave(why: string): Promise<void> {
    return this.#stream.leave(why);
  }

  async final(payloads: readonly MessagePayload[]): Promise<boolean> {
    await this.#stream.leave("the run ended");
    return this.#edits.final(payloads);
  }

  removeControl(): Promise<void> {
    return this.#edits.removeControl();
  }
}
