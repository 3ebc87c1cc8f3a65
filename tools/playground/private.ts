/**
 * The messages only you see ("Only visible to you"), where and when Slack shows them: the app's
 * `chat.postEphemeral`s, a slash command's acknowledgement with a body, and what the app sends
 * to a `response_url`. Each carries the `ts` it sits at among the channel's messages (its own
 * for an ephemeral; the latest one when it came for the others), so the page shows them in
 * time order, and each can be dismissed, as in Slack.
 */
import { z } from "zod";
import type { LocalSlack } from "../local-slack/index.ts";
import type { ResponseUrlPost } from "../local-slack/types.ts";

export interface PrivateMessage {
  readonly id: string;
  readonly channel: string;
  /** Shown in this thread (Slack shows it only where the thread already has replies). */
  readonly threadTs?: string | undefined;
  /** Where it sits among the messages: it shows after every message up to this ts. */
  readonly ts: string;
  readonly text: string;
  readonly blocks: unknown[];
}

/** Where a `response_url` answers: the channel (and thread) of the command or the button. */
export interface ResponsePlace {
  readonly channel: string;
  readonly threadTs?: string | undefined;
}

const ResponseBody = z.object({
  text: z.string().optional(),
  blocks: z.array(z.unknown()).optional(),
  delete_original: z.boolean().optional(),
});

export class PrivateMessages {
  readonly #slack: LocalSlack;
  readonly #user: string;
  readonly #channels: readonly string[];
  /** Acknowledgements and response_url answers, in arrival order. */
  readonly #told: PrivateMessage[] = [];
  readonly #places = new Map<string, ResponsePlace>();
  readonly #dismissed = new Set<string>();
  #seq = 0;

  constructor(slack: LocalSlack, user: string, channels: readonly string[]) {
    this.#slack = slack;
    this.#user = user;
    this.#channels = channels;
    slack.on("response_url", (post) => this.#responded(post));
  }

  /** A `response_url` for a request made in `place`. */
  responseUrl(place: ResponsePlace): string {
    const id = `r${++this.#seq}`;
    this.#places.set(id, place);
    return this.#slack.responseUrl(id);
  }

  /** A slash command's acknowledgement that had a body (Slack shows it only to the user). */
  acknowledged(channel: string, text: string): void {
    this.#told.push({ id: `a${++this.#seq}`, channel, ts: this.#latestTs(), text, blocks: [] });
  }

  dismiss(id: string): boolean {
    const known = this.list(true).some((m) => m.id === id);
    if (known) this.#dismissed.add(id);
    return known;
  }

  /** What the user sees, oldest first (dismissed ones too when `all`). */
  list(all = false): PrivateMessage[] {
    const ephemerals = this.#slack.ephemerals(undefined, this.#user).map((e) => ({
      id: `e${e.message_ts}`,
      channel: e.channel,
      threadTs: e.thread_ts,
      ts: e.message_ts,
      text: e.markdown_text ?? e.text,
      blocks: e.blocks ?? [],
    }));
    return [...ephemerals, ...this.#told].filter((m) => all || !this.#dismissed.has(m.id));
  }

  #responded(post: ResponseUrlPost): void {
    const place = this.#places.get(post.id);
    const body = ResponseBody.safeParse(post.body);
    if (post.status !== 200 || !place || !body.success || body.data.delete_original) return;
    const { text = "", blocks = [] } = body.data;
    this.#told.push({
      id: `${post.id}.${++this.#seq}`,
      ...place,
      ts: this.#latestTs(),
      text,
      blocks,
    });
  }

  /** The newest ts in the workspace: what arrives now shows after it. */
  #latestTs(): string {
    let latest = "0.000000";
    const all = [
      ...this.#channels.flatMap((c) => this.#slack.messages(c, { includeReplies: true })),
      ...this.#slack.ephemerals(),
    ];
    for (const m of all) {
      const ts = "message_ts" in m ? m.message_ts : m.ts;
      if (compareTs(ts, latest) > 0) latest = ts;
    }
    return latest;
  }
}

/** Slack timestamps in order: seconds, then the fraction (both compared as numbers). */
export function compareTs(a: string, b: string): number {
  const [as = "0", af = ""] = a.split(".");
  const [bs = "0", bf = ""] = b.split(".");
  return (
    as.length - bs.length ||
    as.localeCompare(bs) ||
    af.padEnd(6, "0").localeCompare(bf.padEnd(6, "0"))
  );
}
