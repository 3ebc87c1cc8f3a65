/**
 * ThreadHistory on `conversations.replies` (Tier 3, far less for commercially distributed apps
 * outside the Marketplace: Slack's rate-limits page) and `users.info`, through the budget.
 */
import type { WebClient } from "@slack/web-api";
import { z } from "zod";
import { ThreadUnreadable } from "../thread-context/compose.ts";
import type { ThreadHistory, ThreadMessage } from "../thread-context/history.ts";
import { plainText } from "../thread-context/render.ts";
import { slackErrorCode } from "../view/errors.ts";
import { remembered } from "./remembered.ts";
import {
  BudgetWaitExceeded,
  rateLimitedRetryAfter,
  type SlackScheduler,
} from "./scheduler/index.ts";

/** Authors whose names are asked for; the others are shown by their user id. */
const MAX_AUTHORS = 20;
/** Pages of 200 messages read at most (the newest `limit` are kept of what was read). */
const MAX_PAGES = 5;

const Reply = z.object({
  ts: z.string(),
  text: z.string().nullish(),
  user: z.string().nullish(),
  bot_id: z.string().nullish(),
  username: z.string().nullish(),
  bot_profile: z.object({ name: z.string().nullish() }).nullish(),
  subtype: z.string().nullish(),
  files: z.array(z.object({ name: z.string().nullish() })).nullish(),
});
type Reply = z.infer<typeof Reply>;
const Replies = z.object({
  messages: z.array(Reply).nullish(),
  response_metadata: z.object({ next_cursor: z.string().nullish() }).nullish(),
});

const UserInfo = z.object({
  user: z.object({
    name: z.string().nullish(),
    real_name: z.string().nullish(),
    profile: z
      .object({ display_name: z.string().nullish(), real_name: z.string().nullish() })
      .nullish(),
  }),
});

/** Ids seen in the messages (authors and mentions), most recent first, up to MAX_AUTHORS. */
function peopleIn(kept: readonly Reply[]): string[] {
  const ids = new Set<string>();
  for (const m of [...kept].reverse()) {
    if (m.user && !m.bot_id) ids.add(m.user);
    for (const hit of (m.text ?? "").matchAll(/<@([UW][A-Z0-9]{1,20})(?:\|[^>]{0,200})?>/g)) {
      if (hit[1]) ids.add(hit[1]);
    }
  }
  return [...ids].slice(0, MAX_AUTHORS);
}

function asMessage(m: Reply, known: ReadonlyMap<string, string>): ThreadMessage {
  return {
    ts: m.ts,
    author:
      (m.bot_id ? (m.bot_profile?.name ?? m.username) : undefined) ??
      (m.user ? (known.get(m.user) ?? m.user) : "someone"),
    text: plainText(m.text ?? "", (id) => known.get(id)),
    fileNames: (m.files ?? []).flatMap((f) => (f.name ? [f.name] : [])),
  };
}

export function slackThreadHistory(options: {
  readonly client: Pick<WebClient, "conversations" | "users">;
  readonly tokenFor: (teamId: string) => string | undefined | Promise<string | undefined>;
  readonly scheduler: Pick<SlackScheduler, "schedule">;
  readonly waitMs: number;
  readonly now?: () => number;
}): ThreadHistory {
  const { client, waitMs } = options;
  const call = async <T>(teamId: string, method: string, fn: (auth: object) => Promise<T>) => {
    const auth = { token: await options.tokenFor(teamId) };
    return options.scheduler.schedule(teamId, method, () => fn(auth), { maxWaitMs: waitMs });
  };
  const names = remembered<string>({ ttlMs: 10 * 60_000, max: 5000, now: options.now });
  // Their id when Slack would not say.
  const nameOf = (teamId: string, userId: string) =>
    names(`${teamId}/${userId}`, () =>
      call(teamId, "users.info", (auth) => client.users.info({ user: userId, ...auth })).then(
        (res) => {
          const u = UserInfo.parse(res).user;
          return u.profile?.display_name || u.profile?.real_name || u.real_name || u.name || userId;
        },
        () => userId,
      ),
    );

  const readReplies = async (teamId: string, channel: string, ts: string, latest: string) => {
    const read: Reply[] = [];
    let cursor: string | undefined;
    let pages = 0;
    try {
      do {
        const res = await call(teamId, "conversations.replies", (auth) =>
          client.conversations.replies({
            channel,
            ts,
            latest,
            inclusive: false,
            limit: 200,
            ...(cursor ? { cursor } : {}),
            ...auth,
          }),
        );
        const parsed = Replies.parse(res);
        read.push(...(parsed.messages ?? []));
        cursor = parsed.response_metadata?.next_cursor || undefined;
        pages += 1;
      } while (cursor && pages < MAX_PAGES);
    } catch (err) {
      if (err instanceof BudgetWaitExceeded || rateLimitedRetryAfter(err) !== undefined) {
        throw new ThreadUnreadable("Slack's rate limit for reading threads", { cause: err });
      }
      const code = slackErrorCode(err);
      const why = code ? `Slack said ${code}` : "Slack did not answer";
      throw new ThreadUnreadable(why, { cause: err });
    }
    return { read, more: cursor !== undefined };
  };

  return {
    async read(teamId, thread, limit) {
      const { channelId, threadTs, beforeTs } = thread;
      const { read, more } = await readReplies(teamId, channelId, threadTs, beforeTs);
      const before = Number(beforeTs);
      const earlier = read.filter(
        (m) => Number(m.ts) < before && !m.subtype?.startsWith("channel_"),
      );
      const kept = earlier.slice(-limit);
      // Asked together: the whole read waits for the budget at most `waitMs` once more.
      const asked = peopleIn(kept);
      const found = await Promise.all(asked.map((id) => nameOf(teamId, id)));
      const known = new Map(asked.map((id, i) => [id, found[i] ?? id]));
      return {
        messages: kept.map((m) => asMessage(m, known)),
        // More pages than read: at least one more message.
        omitted: earlier.length - kept.length + (more ? 1 : 0),
      };
    },
  };
}
