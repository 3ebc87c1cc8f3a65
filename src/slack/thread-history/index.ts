/**
 * The relay's ThreadHistory port on Slack: `conversations.replies` (replies.ts) and `users.info`
 * for the authors' display names (names.ts), every call through the workspace's share of the
 * rate budget, none waiting longer than `waitMs` for it.
 */
import type { WebClient } from "@slack/web-api";
import type { ThreadHistory, ThreadMessage } from "../../thread-context/history.ts";
import { plainText } from "../../thread-context/render.ts";
import type { SlackScheduler } from "../scheduler/index.ts";
import { displayNames } from "./names.ts";
import { readReplies, type Reply, type SlackCalls } from "./replies.ts";

/** Authors whose names are asked for; the others are shown by their user id. */
const MAX_AUTHORS = 20;

export interface SlackHistoryOptions {
  readonly client: Pick<WebClient, "conversations" | "users">;
  readonly tokenFor: (teamId: string) => string | undefined | Promise<string | undefined>;
  readonly scheduler: Pick<SlackScheduler, "schedule">;
  /** How long one call may wait for its budget before the read gives up. */
  readonly waitMs: number;
  readonly now?: () => number;
}

const numeric = (ts: string) => Number(ts);

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

export function slackThreadHistory(options: SlackHistoryOptions): ThreadHistory {
  const slack: SlackCalls = {
    client: options.client,
    token: async (teamId) => options.tokenFor(teamId),
    call: (teamId, method, fn) =>
      options.scheduler.schedule(teamId, method, fn, { maxWaitMs: options.waitMs }),
  };
  const nameOf = displayNames(slack, options.now ?? Date.now);
  return {
    async read(teamId, thread, limit) {
      const { read, more } = await readReplies(slack, {
        teamId,
        channel: thread.channelId,
        ts: thread.threadTs,
        latest: thread.beforeTs,
      });
      const before = numeric(thread.beforeTs);
      const earlier = read.filter(
        (m) => numeric(m.ts) < before && !m.subtype?.startsWith("channel_"),
      );
      const kept = earlier.slice(-limit);
      // Asked together: the whole read waits for the budget at most `waitMs` once more.
      const asked = peopleIn(kept);
      const found = await Promise.all(asked.map((id) => nameOf(teamId, id)));
      const known = new Map(asked.map((id, i) => [id, found[i] ?? id]));
      const left = more ? 1 : 0; // more pages than read: at least one more message
      return {
        messages: kept.map((m) => asMessage(m, known)),
        omitted: earlier.length - kept.length + left,
      };
    },
  };
}
