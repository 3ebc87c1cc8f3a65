/**
 * Slack's native streaming for one run (`chat.startStream` / `appendStream` / `stopStream`):
 * the answer is appended to a stream message in whole lines (tables and half-open formatting
 * held back), one append at a time, each sending whatever arrived since the last. Slack ends a
 * stream about five minutes after it started, so a stream older than `rotateMs` goes on in a
 * new stream message of the thread (the old one is stopped when the budget allows; nothing of
 * the answer waits for that). When Slack ends or refuses the stream, or no stream can start,
 * the run goes back to editing messages.
 */
import type { Logger } from "pino";
import type { Clock } from "../../util/clock.ts";
import { systemClock } from "../../util/clock.ts";
import { slackErrorCode } from "../../view/errors.ts";
import { StreamablePrefix } from "../../view/markdown.ts";
import { MESSAGE_MARKDOWN_LIMIT } from "../../view/render.ts";
import { neutralizeMentions } from "../../view/sanitize.ts";
import type { SlackWriter, StreamEnd, StreamStep } from "../ports.ts";

/** Slack's answers when it ended the stream itself: nothing is left to stop. */
const ENDED_BY_SLACK = new Set(["message_not_in_streaming_state", "stopped_by_user"]);

export interface NativeStreamOptions {
  readonly writer: SlackWriter;
  readonly channelId: string;
  readonly threadTs: string;
  /** Streams outside DMs are addressed to a person. */
  readonly recipient: { readonly userId: string; readonly teamId: string };
  readonly log: Logger;
  /**
   * A stream message exists: the answer from character `from` on lives there from now on (0
   * for the run's first stream message; more after a rotation).
   */
  readonly onStarted: (streamTs: string, from: number) => Promise<void>;
  /** Streaming ended (expired, stopped, refused, too long): the run edits messages again. */
  readonly onLeft: () => void;
  /**
   * Start a stream only if Slack's budget lets it start at once (`writer.streams`), and edit
   * otherwise; by default a start waits for the budget like any call.
   */
  readonly ifBudget?: boolean;
  /** How long one stream message is streamed into before the answer goes on in a new one. */
  readonly rotateMs?: number;
  readonly clock?: Clock;
}

export class NativeStream {
  readonly #opts: NativeStreamOptions;
  readonly #clock: Clock;
  #on = true;
  #streamTs: string | undefined;
  /** When the current stream message started, and the answer's character it starts at. */
  #startedAt = 0;
  #partStart = 0;
  /** The prefix of the answer already in the stream messages. */
  #streamed = "";
  /** What of the answer may be streamed, read as it grows. */
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
  /** Stops of stream messages the answer rotated out of, under way. */
  #stops: Promise<void> = Promise.resolve();
  /** Leaving streaming, once: the run edits when this is done. */
  #leaving: Promise<boolean> | undefined;

  constructor(options: NativeStreamOptions) {
    this.#opts = options;
    this.#clock = options.clock ?? systemClock;
  }

  get on(): boolean {
    return this.#on;
  }

  /**
   * Sends what of `latest()` is new and safe to stream, after any append under way. Appends
   * coalesce while one waits for Slack's budget: the waiting one reads the latest text when
   * its turn comes, so a fast stream costs one read of the answer per append sent, not per
   * delta. Resolves true when this call sent something (false when a waiting one will).
   */
  append(latest: () => string): Promise<boolean> {
    if (this.#waiting.text) return Promise.resolve(false);
    this.#waiting.text = true;
    return this.#queue(() => {
      this.#waiting.text = false;
      return latest();
    });
  }

  /**
   * A step of the agent's work: sent with the next append as a task update (the step before
   * it marked complete), so Slack shows the run's plan above its answer.
   */
  step(title: string): Promise<boolean> {
    const n = ++this.#stepCount;
    if (n > 1)
      this.#steps.push({ id: `step-${n - 1}`, title: this.#lastTitle, status: "complete" });
    this.#steps.push({ id: `step-${n}`, title: neutralizeMentions(title), status: "in_progress" });
    this.#lastTitle = neutralizeMentions(title);
    // An append waiting (of text, or of steps) sends this step too.
    if (this.#waiting.text || this.#waiting.steps) return Promise.resolve(false);
    this.#waiting.steps = true;
    return this.#queue(() => {
      this.#waiting.steps = false;
      return this.#streamedFull;
    });
  }

  /**
   * The run ended with `text`: what of it the stream lacks is appended at once (on the append
   * budget: the answer shows whole without waiting for a stop), then the stream is stopped
   * when the stop budget allows, with `end` (the run's status and buttons) below the answer
   * when the stream holds all of it. True when that stop showed the final answer (no edit is
   * needed); false when an edit must show it.
   */
  async end(text: string, end: StreamEnd | undefined): Promise<boolean> {
    if (this.#on) await this.#appending.catch(() => false);
    const whole = await this.#appendRest(text);
    return this.#leaveWith("the run ended", whole ? end : undefined);
  }

  /** Appends what of the final `text` the stream lacks; true when it then holds all of it. */
  async #appendRest(text: string): Promise<boolean> {
    const ts = this.#streamTs;
    if (!this.#on || ts === undefined || !text.startsWith(this.#streamed)) return false;
    if (text.length - this.#partStart > MESSAGE_MARKDOWN_LIMIT) return false;
    const rest = text.slice(this.#streamed.length);
    if (rest === "") return true;
    // Whole lines, as every append (a final newline shows as nothing).
    const lines = rest.endsWith("\n") ? rest : `${rest}\n`;
    try {
      await this.#opts.writer.appendStream(this.#opts.channelId, ts, neutralizeMentions(lines));
    } catch (err) {
      this.#endedBySlack(err);
      return false;
    }
    this.#streamed = text;
    return true;
  }

  #queue(latest: () => string): Promise<boolean> {
    const send = () => this.#send(latest());
    this.#appending = this.#appending.then(send, send);
    return this.#appending;
  }

  /** Ends the stream (if one started); the message can then be edited like any other. */
  async leave(why: string): Promise<void> {
    await this.#leaveWith(why, undefined);
  }

  /** Leaves once; true when the stop carried `end` into the message. */
  #leaveWith(why: string, end: StreamEnd | undefined): Promise<boolean> {
    this.#leaving ??= this.#leave(why, end);
    return this.#leaving;
  }

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

  /**
   * Stops a stream message when the stop budget allows (true once it did); Slack may have
   * ended it already.
   */
  #stop(ts: string, end?: StreamEnd): Promise<boolean> {
    const { writer, channelId, log } = this.#opts;
    const stop = writer.stopStream(channelId, ts, end).then(
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

  /** Slack said the stream is over (expired, or its reader stopped it): no stop is due. */
  #endedBySlack(err: unknown): void {
    const code = slackErrorCode(err);
    if (ENDED_BY_SLACK.has(code ?? "")) this.#streamTs = undefined;
    void this.leave(code ?? String(err));
  }

  async #send(text: string): Promise<boolean> {
    if (!this.#on) return false;
    this.#streamedFull = text;
    const safe = this.#streamable.of(text);
    const add = safe.slice(this.#streamed.length);
    // Steps wait for the stream to exist (it starts with text).
    if (add === "" && (this.#streamTs === undefined || this.#steps.length === 0)) return false;
    const rotate = add !== "" && this.#streamTs !== undefined && this.#due();
    if (this.#outgrows(safe, rotate ? this.#streamed.length : this.#partStart)) return false;
    try {
      if (this.#streamTs === undefined) {
        if (!(await this.#start(add))) return false;
      } else if (!(rotate && (await this.#rotate(add)))) {
        if (this.#outgrows(safe, this.#partStart)) return false;
        const steps = this.#steps.splice(0);
        await this.#opts.writer.appendStream(
          this.#opts.channelId,
          this.#streamTs,
          neutralizeMentions(add),
          steps,
        );
      }
      this.#streamed = safe;
      return true;
    } catch (err) {
      // Expired (message_not_in_streaming_state), stopped by the user, or refused: go on by
      // editing the same message (or the working message if no stream started).
      this.#endedBySlack(err);
      return false;
    }
  }

  /**
   * One message holds MESSAGE_MARKDOWN_LIMIT characters; past that the run edits messages (in
   * parts). Sending first would not do: a big piece is more than Slack takes at once.
   */
  #outgrows(safe: string, from: number): boolean {
    if (safe.length - from <= MESSAGE_MARKDOWN_LIMIT) return false;
    void this.leave("the answer outgrew one message");
    return true;
  }

  #due(): boolean {
    const { rotateMs } = this.#opts;
    return rotateMs !== undefined && this.#clock.now() - this.#startedAt >= rotateMs;
  }

  /**
   * Starts the run's stream message with `add`: when the budget allows it at once (auto), or
   * when its turn comes. False when none started: the run edits from now on.
   */
  async #start(add: string): Promise<boolean> {
    const { writer, channelId, threadTs, recipient, ifBudget } = this.#opts;
    const markdown = neutralizeMentions(add);
    const ts = ifBudget
      ? await writer.streams?.tryStart(channelId, threadTs, recipient, markdown)
      : await writer.startStream(channelId, threadTs, recipient, markdown);
    if (ts === undefined) {
      void this.leave("no stream budget now");
      return false;
    }
    await this.#started(ts, 0);
    return true;
  }

  /**
   * Goes on in a new stream message with `add` if one can start at once; the one before is
   * stopped (when the stop budget allows) and keeps what it shows. False when none could
   * start now: the answer goes on in the current one, and the next append tries again (Slack
   * ends it at about five minutes; then the run edits).
   */
  async #rotate(add: string): Promise<boolean> {
    const { writer, channelId, threadTs, recipient } = this.#opts;
    const previous = this.#streamTs;
    const markdown = neutralizeMentions(add);
    const ts = writer.streams
      ? await writer.streams.tryNext(channelId, threadTs, recipient, markdown)
      : await writer.startStream(channelId, threadTs, recipient, markdown);
    if (ts === undefined) return false;
    await this.#started(ts, this.#streamed.length);
    if (previous !== undefined) this.#stop(previous);
    return true;
  }

  async #started(ts: string, from: number): Promise<void> {
    this.#streamTs = ts;
    this.#startedAt = this.#clock.now();
    this.#partStart = from;
    // Steps reported meanwhile go into it with the next append.
    await this.#opts.onStarted(ts, from);
  }
}
