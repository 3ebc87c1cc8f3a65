/**
 * The relay's ThreadHistory port on Slack: `conversations.replies` (Tier 3, far less for
 * commercially distributed apps outside the Marketplace, per Slack's rate-limits page) and
 * `users.info` for the authors' display names, every call through the workspace's share of
 * the rate budget, none waiting longer than `waitMs` for it.
 */
import type { WebClient } from "@slack/web-api";
import { z } from "zod";
import type { ThreadHistory, ThreadMessage } from "../relay/ports.ts";
import {
  BudgetWaitExceeded,
  rateLimitedRetryAfter,
  type SlackScheduler,
} from "../slack/scheduler/index.ts";
import { slackErrorCode } from "../view/errors.ts";
import { ThreadUnreadable } from "./compose.ts";
import { plainText } from "./render.ts";

/** Pages of 200 messages read at most (the newest `limit` are kept of what was read). */
const MAX_PAGES = 5;
/** Authors whose names are asked for; the others are shown by their user id. */
const MAX_AUTHORS = 20;
const NAMES_TTL_MS = 10 * 60_000;
const NAMES_MAX = 5000;

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
type Reply = NonNullable<z.infer<typeof Replies>["messages"]>[number];

const UserInfo = z.object({
  user: z.object({
    name: z.string().nullish(),
    real_name: z.string().nullish(),
    profile: z
      .object({ display_name: z.string().nullish(), real_name: z.string().nullish() })
      .nullish(),
  }),
});

export interface SlackHistoryOptions {
  readonly client: Pick<WebClient, "conversations" | "users">;
  readonly tokenFor: (teamId: string) => string | undefined | Promise<string | undefined>;
  readonly scheduler: Pick<SlackScheduler, "schedule">;
  /** How long one call may wait for its budget before the read gives up. */
  readonly waitMs: number;
  readonly now?: () => number;
}

const numeric = (ts: string) => Number(ts);

export function slackThreadHistory(options: SlackHistoryOptions): ThreadHistory {
  const now = options.now ?? Date.now;
  const names = new Map<string, { name: string; until: number }>();
  const call = <T>(teamId: string, method: string, fn: () => Promise<T>) =>
    options.scheduler.schedule(teamId, method, fn, { maxWaitMs: options.waitMs });

  async function page(
    teamId: string,
    channel: string,
    ts: string,
    latest: string,
    cursor?: string,
  ) {
    const token = await options.tokenFor(teamId);
    const res = await call(teamId, "conversations.replies", () =>
      options.client.conversations.replies({
        channel,
        ts,
        latest,
        inclusive: false,
        limit: 200,
        ...(cursor ? { cursor } : {}),
        ...(token === undefined ? {} : { token }),
      }),
    );
    return Replies.parse(res);
  }

  /** A person's display name (remembered a while); their id when Slack would not say. */
  async function nameOf(teamId: string, userId: string): Promise<string> {
    const key = `${teamId}/${userId}`;
    const hit = names.get(key);
    if (hit && hit.until > now()) return hit.name;
    const token = await options.tokenFor(teamId);
    const name = await call(teamId, "users.info", () =>
      options.client.users.info({ user: userId, ...(token === undefined ? {} : { token }) }),
    ).then(
      (res) => {
        const u = UserInfo.parse(res).user;
        return u.profile?.display_name || u.profile?.real_name || u.real_name || u.name || userId;
      },
      () => userId,
    );
    if (names.size >= NAMES_MAX) names.delete(names.keys().next().value ?? "");
    names.set(key, { name, until: now() + NAMES_TTL_MS });
    return name;
  }

  /** The thread's messages up to `latest` (at most MAX_PAGES pages), or why Slack refused. */
  async function replies(teamId: string, channel: string, ts: string, latest: string) {
    const read: Reply[] = [];
    let cursor: string | undefined;
    let pages = 0;
    try {
      do {
        const res = await page(teamId, channel, ts, latest, cursor);
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

  return {
    async read(teamId, thread, limit) {
      const { read, more } = await replies(
        teamId,
        thread.channelId,
        thread.threadTs,
        thread.beforeTs,
      );
      const before = numeric(thread.beforeTs);
      const earlier = read.filter(
        (m) => numeric(m.ts) < before && !m.subtype?.startsWith("channel_"),
      );
      const kept = earlier.slice(-limit);
      // Ids seen in the thread (authors and mentions), most recent first, named up to a point.
      const ids = new Set<string>();
      for (const m of [...kept].reverse()) {
        if (m.user && !m.bot_id) ids.add(m.user);
        for (const hit of (m.text ?? "").matchAll(/<@([UW][A-Z0-9]{1,20})(?:\|[^>]{0,200})?>/g)) {
          if (hit[1]) ids.add(hit[1]);
        }
      }
      // Asked together: the whole read waits for the budget at most `waitMs` once more.
      const asked = [...ids].slice(0, MAX_AUTHORS);
      const found = await Promise.all(asked.map((id) => nameOf(teamId, id)));
      const known = new Map(asked.map((id, i) => [id, found[i] ?? id]));
      const messages: ThreadMessage[] = kept.map((m) => ({
        ts: m.ts,
        author:
          (m.bot_id ? (m.bot_profile?.name ?? m.username) : undefined) ??
          (m.user ? (known.get(m.user) ?? m.user) : "someone"),
        text: plainText(m.text ?? "", (id) => known.get(id)),
        fileNames: (m.files ?? []).flatMap((f) => (f.name ? [f.name] : [])),
      }));
      const left = more ? 1 : 0; // more pages than read: at least one more message
      return { messages, omitted: earlier.length - kept.length + left };
    },
  };
}
