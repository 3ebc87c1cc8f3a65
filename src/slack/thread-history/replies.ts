/**
 * A Slack thread's messages read back with `conversations.replies` (Tier 3, far less for
 * commercially distributed apps outside the Marketplace, per Slack's rate-limits page), page by
 * page through the workspace's share of the rate budget; a refusal in words for the person.
 */
import type { WebClient } from "@slack/web-api";
import { z } from "zod";
import { ThreadUnreadable } from "../../thread-context/compose.ts";
import { slackErrorCode } from "../../view/errors.ts";
import { BudgetWaitExceeded, rateLimitedRetryAfter } from "../scheduler/index.ts";

/** Pages of 200 messages read at most (the newest `limit` are kept of what was read). */
const MAX_PAGES = 5;

const Replies = z.object({
  messages: z
    .array(
      z.object({
        ts: z.string(),
        text: z.string().nullish(),
        user: z.string().nullish(),
        bot_id: z.string().nullish(),
        username: z.string().nullish(),
        bot_profile: z.object({ name: z.string().nullish() }).nullish(),
        subtype: z.string().nullish(),
        files: z.array(z.object({ name: z.string().nullish() })).nullish(),
      }),
    )
    .nullish(),
  has_more: z.boolean().nullish(),
  response_metadata: z.object({ next_cursor: z.string().nullish() }).nullish(),
});
export type Reply = NonNullable<z.infer<typeof Replies>["messages"]>[number];

/** How one Slack call is made for a workspace: its token, through its budget. */
export interface SlackCalls {
  readonly client: Pick<WebClient, "conversations" | "users">;
  readonly token: (teamId: string) => Promise<string | undefined>;
  readonly call: <T>(teamId: string, method: string, fn: () => Promise<T>) => Promise<T>;
}

export interface ThreadPlace {
  readonly teamId: string;
  readonly channel: string;
  readonly ts: string;
  /** Only messages before this one are read. */
  readonly latest: string;
}

async function page(slack: SlackCalls, at: ThreadPlace, cursor: string | undefined) {
  const token = await slack.token(at.teamId);
  const res = await slack.call(at.teamId, "conversations.replies", () =>
    slack.client.conversations.replies({
      channel: at.channel,
      ts: at.ts,
      latest: at.latest,
      inclusive: false,
      limit: 200,
      ...(cursor ? { cursor } : {}),
      ...(token === undefined ? {} : { token }),
    }),
  );
  return Replies.parse(res);
}

/**
 * The thread's messages up to `latest` (at most MAX_PAGES pages) and whether Slack has more;
 * rejects with ThreadUnreadable saying why Slack refused.
 */
export async function readReplies(
  slack: SlackCalls,
  at: ThreadPlace,
): Promise<{ read: Reply[]; more: boolean }> {
  const read: Reply[] = [];
  let cursor: string | undefined;
  let pages = 0;
  try {
    do {
      const res = await page(slack, at, cursor);
      read.push(...(res.messages ?? []));
      cursor = res.response_metadata?.next_cursor || undefined;
      pages += 1;
    } while (cursor && pages < MAX_PAGES);
  } catch (err) {
    if (err instanceof BudgetWaitExceeded || rateLimitedRetryAfter(err) !== undefined) {
      throw new ThreadUnreadable("Slack's rate limit for reading threads", { cause: err });
    }
    const code = slackErrorCode(err);
    throw new ThreadUnreadable(code ? `Slack said ${code}` : "Slack did not answer", {
      cause: err,
    });
  }
  return { read, more: cursor !== undefined };
}
