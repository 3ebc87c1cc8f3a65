/**
 * The answer streamed with Slack's native streaming, addressed to the person who asked: the
 * text is appended to a stream message that replaces the "working…" one (and, once that one
 * holds all the bytes Slack takes or is past the rotation time, to the next stream message).
 * When Slack ends or refuses the stream, or when no stream can start (auto: no budget now),
 * the answer goes on by editing messages; the final answer is appended at once, and its
 * status goes below it with the stream's stop (or by an edit, if the stream does not hold it).
 */
import type { Clock } from "../../util/clock.ts";
import type { StreamEnd, TaskDisplay } from "../ports.ts";
import { EditSink, type SinkOptions } from "./edit-sink.ts";
import { NativeStream } from "./native-stream.ts";
import type { AnswerPlace, AnswerSink, FinalAnswer, RunningAnswer } from "./sink.ts";

export interface NativeSinkOptions extends SinkOptions {
  /** Streams outside DMs are addressed to a person. */
  readonly recipient: { readonly userId: string; readonly teamId: string };
  /** Where the answer is changed (a stream message took over, or a part was sealed): record it. */
  readonly onMoved: () => Promise<void>;
  /** The stream ended early and what it showed is not the rendered answer: show it again. */
  readonly reshow: () => void;
  /** Start only if the stream budget allows at once (auto), else edit. */
  readonly ifBudget: boolean;
  readonly rotateMs: number;
  readonly clock: Clock;
  /** How Slack shows the agent's steps in the stream (`task_display_mode`). */
  readonly display?: TaskDisplay | undefined;
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
      ifBudget: options.ifBudget,
      rotateMs: options.rotateMs,
      clock: options.clock,
      display: options.display,
      onStarted: async (streamTs, from) => {
        edits.streamedIn(streamTs, from);
        await options.onMoved();
      },
      onLeft: () => {
        // The stream message gets the full rendering by the next edit.
        edits.forgetShown();
        options.reshow();
      },
    });
  }

  get place(): AnswerPlace {
    return this.#edits.place;
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

  async final(answer: FinalAnswer): Promise<boolean> {
    // A stream that holds the whole answer needs no edit: its stop adds the status below it,
    // as rendered for the message the answer ends in (the rest may have gone on in a new one).
    const end = (): StreamEnd | undefined => {
      const [only, ...more] = answer.render(this.#edits.sealedChars);
      const [body, ...status] = only?.blocks ?? [];
      return only && more.length === 0 && body?.type === "markdown"
        ? { blocks: status, ...(only.metadata ? { metadata: only.metadata } : {}) }
        : undefined;
    };
    if (await this.#stream.end(answer.text, end)) return true;
    return this.#edits.final(answer);
  }

  removeControl(): Promise<void> {
    return this.#edits.removeControl();
  }
}
