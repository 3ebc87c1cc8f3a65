/**
 * Slack's native streaming for one run (`chat.startStream` / `appendStream` / `stopStream`): the
 * answer is appended in whole lines (tables and half-open formatting held back), one append at a
 * time. Past STREAM_MESSAGE_BYTES, or older than `rotateMs`, it goes on in a new stream message.
 * When Slack ends or refuses the stream, or none can start, the run goes back to editing.
 */
import type { Logger } from "pino";
import { type Clock, systemClock } from "../../util/clock.ts";
import { slackErrorCode } from "../../view/errors.ts";
import { type FenceState, scanFences } from "../../view/markdown-scan.ts";
import { StreamablePrefix } from "../../view/markdown.ts";
import { neutralizeMentions } from "../../view/sanitize.ts";
import type { SlackWriter, StreamEnd, StreamStep, TaskDisplay } from "../ports.ts";
import { EditSink, type SinkOptions } from "./edit-sink.ts";
import type { AnswerPlace, AnswerSink, FinalAnswer, RunningAnswer } from "./sink.ts";
import {
  closingLine,
  nextPiece,
  type Piece,
  reopeningLine,
  STREAM_MESSAGE_BYTES,
  utf8Bytes,
} from "./stream-parts.ts";

/** Slack's answers when it ended the stream itself: nothing is left to stop. */
const ENDED_BY_SLACK = new Set(["message_not_in_streaming_state", "stopped_by_user"]);

export interface NativeStreamOptions {
  readonly writer: SlackWriter;
  readonly channelId: string;
  readonly threadTs: string;
  readonly recipient: { readonly userId: string; readonly teamId: string };
  readonly log: Logger;
  /** A stream message exists: the answer from character `from` on lives there now. */
  readonly onStarted: (streamTs: string, from: number) => Promise<void>;
  /** Streaming ended (expired, stopped, refused, too long): the run edits messages again. */
  readonly onLeft: () => void;
  /** Start a stream only if Slack's budget lets it start at once (default: wait). */
  readonly ifBudget?: boolean;
  readonly rotateMs?: number | undefined;
  readonly clock?: Clock;
  /** `task_display_mode`; Slack's default when absent. */
  readonly display?: TaskDisplay | undefined;
}

/** Steps held for the next message (the one they were for is full): the latest this many bytes. */
const STEPS_HELD_BYTES = 1_500;

const stepBytes = (steps: readonly StreamStep[]): number =>
  steps.reduce((n, s) => n + utf8Bytes(s.title), 0);

export class NativeStream {
  readonly #opts: NativeStreamOptions;
  readonly #clock: Clock;
  #on = true;
  /** The run ended: what is appended now completes its answer. */
  #ending = false;
  #streamTs: string | undefined;
  #startedAt = 0;
  /** The prefix of the answer already in the stream messages. */
  #streamed = "";
  /** Bytes sent into the current stream message, its steps' titles included. */
  #used = 0;
  #fence: FenceState | undefined;
  readonly #streamable = new StreamablePrefix();
  #appending: Promise<boolean> = Promise.resolve(false);
  /** An append of the latest text, or of steps alone, queued and not begun. */
  readonly #waiting = { text: false, steps: false };
  /** Steps reported and not in the stream yet; the one before them is still in progress. */
  #steps: StreamStep[] = [];
  #stepCount = 0;
  #lastTitle = "";
  /** The whole text as last seen, so a step alone appends no text of its own. */
  #streamedFull = "";
  /** Stops of the stream messages the answer went on from. */
  #stops: Promise<void> = Promise.resolve();
  #leaving: Promise<boolean> | undefined;

  constructor(options: NativeStreamOptions) {
    this.#opts = options;
    this.#clock = options.clock ?? systemClock;
  }

  get on(): boolean {
    return this.#on;
  }

  /** Sends what of `latest()` is new and safe to stream; appends waiting coalesce. True if sent. */
  append(latest: () => string): Promise<boolean> {
    if (this.#waiting.text) return Promise.resolve(false);
    this.#waiting.text = true;
    return this.#queue(() => {
      this.#waiting.text = false;
      return latest();
    });
  }

  /** A step of the agent's work: a task update with the next append (the one before complete). */
  step(title: string): Promise<boolean> {
    const n = ++this.#stepCount;
    if (n > 1)
      this.#steps.push({ id: `step-${n - 1}`, title: this.#lastTitle, status: "complete" });
    this.#steps.push({ id: `step-${n}`, title: neutralizeMentions(title), status: "in_progress" });
    this.#lastTitle = neutralizeMentions(title);
    // Held while no message has room for them: the latest ones are what the plan shows now.
    while (this.#steps.length > 1 && stepBytes(this.#steps) > STEPS_HELD_BYTES) this.#steps.shift();
    // An append waiting (of text, or of steps) sends this step too.
    if (this.#waiting.text || this.#waiting.steps) return Promise.resolve(false);
    this.#waiting.steps = true;
    return this.#queue(() => {
      this.#waiting.steps = false;
      return this.#streamedFull;
    });
  }

  /**
   * The run ended with `text`: what the stream lacks is appended at once, then the stream stopped
   * when the budget allows, with `end()` below if it holds all of it. False when an edit must.
   */
  async end(text: string, end: () => StreamEnd | undefined): Promise<boolean> {
    this.#ending = true;
    if (this.#streamTs !== undefined)
      this.#opts.writer.hurryStream?.(this.#opts.channelId, this.#streamTs);
    if (this.#on) await this.#appending.catch(() => false);
    const whole = await this.#appendRest(text);
    return this.leave("the run ended", whole ? end() : undefined);
  }

  /** Appends what of the final `text` the stream lacks; true when it then holds all of it. */
  async #appendRest(text: string): Promise<boolean> {
    if (!this.#on || this.#streamTs === undefined || !text.startsWith(this.#streamed)) return false;
    if (text.length === this.#streamed.length) return true;
    // Whole lines, as every append (a final newline shows as nothing).
    const lines = text.endsWith("\n") ? text : `${text}\n`;
    const open = this.#fence ?? { open: undefined, info: "" };
    const atEnd = scanFences(lines.slice(this.#streamed.length), { ...open });
    await this.#streamTo(lines, atEnd.open === undefined ? undefined : atEnd);
    if (!this.#on || this.#streamed.length !== lines.length) return false;
    this.#streamed = text;
    return true;
  }

  #queue(latest: () => string): Promise<boolean> {
    const send = () => this.#send(latest());
    this.#appending = this.#appending.then(send, send);
    return this.#appending;
  }

  /** Ends the stream (once): the message can then be edited. */
  leave(why: string, end?: StreamEnd): Promise<boolean> {
    this.#leaving ??= this.#leave(why, end);
    return this.#leaving;
  }

  /** True when the stop carried `end` into the message. */
  async #leave(why: string, end: StreamEnd | undefined): Promise<boolean> {
    this.#on = false;
    await this.#appending.catch(() => false);
    this.#opts.log.info({ why }, "native streaming ended; editing the message from now on");
    const ts = this.#streamTs;
    const stopped = ts === undefined ? false : this.#stop(ts, end);
    await this.#stops;
    this.#opts.onLeft();
    return end !== undefined && (await stopped);
  }

  /** Stops a stream message when the budget allows (true once it did), its code block closed. */
  #stop(ts: string, end?: StreamEnd, closing = ""): Promise<boolean> {
    const { writer, channelId, log } = this.#opts;
    const closed =
      closing === ""
        ? Promise.resolve()
        : writer.appendStream(channelId, ts, closing).catch((err: unknown) => {
            log.warn({ err, code: slackErrorCode(err) }, "could not close a stream's code block");
          });
    const stop = closed
      .then(() => writer.stopStream(channelId, ts, end))
      .then(
        () => true,
        (err: unknown) => {
          const code = slackErrorCode(err) ?? "";
          if (!ENDED_BY_SLACK.has(code)) log.warn({ err, code }, "could not stop a stream");
          return false;
        },
      );
    this.#stops = this.#stops.then(() => stop).then(() => undefined);
    return stop;
  }

  async #send(text: string): Promise<boolean> {
    if (!this.#on) return false;
    this.#streamedFull = text;
    const safe = this.#streamable.of(text);
    return this.#streamTo(safe, this.#streamable.fence);
  }

  /** Streams up to `safe` (ending in `fence`) and the held steps, in new messages as due. */
  async #streamTo(safe: string, fence: FenceState | undefined): Promise<boolean> {
    let sent = false;
    // Rotation by time goes only where nothing is left open, and only while a start can go.
    let rotate = true;
    try {
      while (this.#on) {
        const ts = this.#streamTs;
        const more = safe.length > this.#streamed.length;
        if (!more && (ts === undefined || this.#steps.length === 0)) return sent;
        const { rotateMs } = this.#opts;
        const due =
          ts !== undefined &&
          rotate &&
          more &&
          this.#fence === undefined &&
          rotateMs !== undefined &&
          this.#clock.now() - this.#startedAt >= rotateMs;
        if (ts !== undefined && !due && (await this.#fill(ts, safe, fence))) {
          sent = true;
          continue;
        }
        if (!more) return sent; // the steps wait for the next message
        const piece = this.#piece(safe, fence);
        if (piece === undefined) {
          void this.leave("a line is longer than a stream message holds");
          return sent;
        }
        if (await this.#open(safe, piece, due)) {
          sent = true;
        } else if (due) {
          rotate = false; // no start now: on in this one; the next append tries again
        } else {
          void this.leave(
            ts === undefined ? "no stream budget now" : "no stream budget for the next message",
          );
          return sent;
        }
      }
      return sent;
    } catch (err) {
      // Expired, stopped by the user (no stop is due then), or refused: the run goes on by editing.
      const code = slackErrorCode(err);
      if (ENDED_BY_SLACK.has(code ?? "")) this.#streamTs = undefined;
      void this.leave(code ?? String(err));
      return false;
    }
  }

  /** Appends to the current message what it has room for, with the steps held; false if none. */
  async #fill(ts: string, safe: string, fence: FenceState | undefined): Promise<boolean> {
    const steps = this.#steps;
    const room = STREAM_MESSAGE_BYTES - this.#used - stepBytes(steps);
    const piece = nextPiece(safe, this.#streamed.length, this.#fence, fence, room);
    if (piece === undefined) return false;
    this.#steps = [];
    const { writer, channelId } = this.#opts;
    await writer.appendStream(channelId, ts, piece.markdown, steps, this.#ending);
    this.#used += piece.bytes + stepBytes(steps);
    this.#streamed = safe.slice(0, piece.end);
    this.#fence = piece.fence;
    return true;
  }

  /** What of `safe` a new stream message takes, with room for the steps held. */
  #piece(safe: string, fence: FenceState | undefined): Piece | undefined {
    const reopening = utf8Bytes(reopeningLine(this.#fence));
    const room = STREAM_MESSAGE_BYTES - stepBytes(this.#steps) - reopening;
    return nextPiece(safe, this.#streamed.length, this.#fence, fence, room);
  }

  /**
   * Starts a stream message with `piece` (the open code block opened again), in auto mode or by
   * time only if a start can go at once; the one before is stopped when the budget allows.
   */
  async #open(safe: string, piece: Piece, byTime: boolean): Promise<boolean> {
    const { writer, channelId, threadTs, recipient, ifBudget, display } = this.#opts;
    const previous = this.#streamTs;
    const reopening = reopeningLine(this.#fence);
    const markdown = reopening + piece.markdown;
    const start = [channelId, threadTs, recipient, markdown, display] as const;
    let ts: string | undefined;
    if (previous === undefined) {
      ts = ifBudget ? await writer.streams?.tryStart(...start) : await writer.startStream(...start);
    } else {
      ts =
        writer.streams && (byTime || ifBudget)
          ? await writer.streams.tryNext(...start)
          : await writer.startStream(...start);
    }
    if (ts === undefined) return false;
    const closing = closingLine(this.#fence);
    await this.#started(ts, safe, piece, reopening);
    if (previous !== undefined) this.#stop(previous, undefined, closing);
    return true;
  }

  async #started(ts: string, safe: string, piece: Piece, reopening: string): Promise<void> {
    const from = this.#streamed.length;
    this.#streamTs = ts;
    this.#startedAt = this.#clock.now();
    this.#used = utf8Bytes(reopening) + piece.bytes;
    this.#streamed = safe.slice(0, piece.end);
    this.#fence = piece.fence;
    await this.#opts.onStarted(ts, from);
  }
}

export interface NativeSinkOptions
  extends
    SinkOptions,
    Pick<NativeStreamOptions, "recipient" | "ifBudget" | "rotateMs" | "clock" | "display"> {
  /** A stream message took over, or a part was sealed: record where the answer is. */
  readonly onMoved: () => Promise<void>;
  /** The stream ended early and what it showed is not the rendered answer: show it again. */
  readonly reshow: () => void;
}

/** A streamed run's sink: a stream replaces the "working…" message; ended early, edits go on. */
export class NativeSink implements AnswerSink {
  /** Where the answer goes once the stream is over. */
  readonly #edits: EditSink;
  readonly #stream: NativeStream;

  constructor(options: NativeSinkOptions) {
    const edits = new EditSink(options);
    this.#edits = edits;
    this.#stream = new NativeStream({
      ...options,
      onStarted: async (streamTs, from) => {
        edits.streamedIn(streamTs, from);
        await options.onMoved();
      },
      onLeft: () => {
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

  async leave(why: string): Promise<void> {
    await this.#stream.leave(why);
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
