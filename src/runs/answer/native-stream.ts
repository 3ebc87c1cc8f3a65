/**
 * Slack's native streaming for one run (`chat.startStream` / `appendStream` / `stopStream`):
 * the answer is appended to a stream message in whole lines (tables and half-open formatting
 * held back), one append at a time, each sending whatever arrived since the last. When Slack
 * ends or refuses the stream, the run goes back to editing messages.
 */
import type { Logger } from "pino";
import { slackErrorCode } from "../../view/errors.ts";
import { StreamablePrefix } from "../../view/markdown.ts";
import { MESSAGE_MARKDOWN_LIMIT } from "../../view/render.ts";
import { neutralizeMentions } from "../../view/sanitize.ts";
import type { SlackWriter, StreamStep } from "../ports.ts";

export interface NativeStreamOptions {
  readonly writer: SlackWriter;
  readonly channelId: string;
  readonly threadTs: string;
  /** Streams outside DMs are addressed to a person. */
  readonly recipient: { readonly userId: string; readonly teamId: string };
  readonly log: Logger;
  /** The stream message exists: the run's answer lives there from now on. */
  readonly onStarted: (streamTs: string) => Promise<void>;
  /** Streaming ended (expired, stopped, refused, too long): the run edits messages again. */
  readonly onLeft: () => void;
}

export class NativeStream {
  readonly #opts: NativeStreamOptions;
  #on = true;
  #streamTs: string | undefined;
  /** The prefix of the answer already in the stream. */
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

  constructor(options: NativeStreamOptions) {
    this.#opts = options;
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

  #queue(latest: () => string): Promise<boolean> {
    const send = () => this.#send(latest());
    this.#appending = this.#appending.then(send, send);
    return this.#appending;
  }

  /** Ends the stream (if one started); the message can then be edited like any other. */
  async leave(why: string): Promise<void> {
    if (!this.#on) return;
    this.#on = false;
    await this.#appending.catch(() => false);
    this.#opts.log.info({ why }, "native streaming ended; editing the message from now on");
    if (this.#streamTs) {
      await this.#opts.writer
        .stopStream(this.#opts.channelId, this.#streamTs)
        .catch(() => undefined);
    }
    this.#opts.onLeft();
  }

  async #send(text: string): Promise<boolean> {
    if (!this.#on) return false;
    this.#streamedFull = text;
    const safe = this.#streamable.of(text);
    // One message holds MESSAGE_MARKDOWN_LIMIT characters; past that the run edits messages
    // (in parts). Sending first would not do: a big piece is more than Slack takes at once.
    if (safe.length > MESSAGE_MARKDOWN_LIMIT) {
      void this.leave("the answer outgrew one message");
      return false;
    }
    const add = safe.slice(this.#streamed.length);
    // Steps wait for the stream to exist (it starts with text).
    const steps = this.#streamTs === undefined ? [] : this.#steps.splice(0);
    if (add === "" && steps.length === 0) return false;
    const { writer, channelId, threadTs, recipient } = this.#opts;
    try {
      if (this.#streamTs === undefined) {
        this.#streamTs = await writer.startStream(
          channelId,
          threadTs,
          recipient,
          neutralizeMentions(add),
        );
        await this.#opts.onStarted(this.#streamTs);
      } else {
        await writer.appendStream(channelId, this.#streamTs, neutralizeMentions(add), steps);
      }
      this.#streamed = safe;
      return true;
    } catch (err) {
      // Expired (message_not_in_streaming_state), stopped by the user, or refused: go on by
      // editing the same message (or the working message if no stream started).
      void this.leave(slackErrorCode(err) ?? String(err));
      return false;
    }
  }
}
