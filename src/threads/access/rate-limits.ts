/**
 * Fairness limits on starting and continuing tasks: per person and per channel, in any sliding
 * minute, shared by every instance. Both are checked and counted by one atomic store operation
 * per request (`consumeRate`): a request refused by either limit counts in neither. Refusals
 * say when to try again.
 */
import type { ThreadStore } from "../ports.ts";

export interface RateLimits {
  /** Tasks and follow-ups one person may start per minute (0: no limit). */
  readonly perUserPerMinute: number;
  /** Tasks and follow-ups all people together may start per minute in one channel. */
  readonly perChannelPerMinute: number;
}

export const NO_RATE_LIMITS: RateLimits = { perUserPerMinute: 0, perChannelPerMinute: 0 };

const WINDOW_MS = 60_000;

/**
 * Counts a request by `userId` in `channelId` against both limits; returns what to tell the
 * person when one is reached (then nothing is counted in either).
 */
export async function takeRateSlot(
  store: Pick<ThreadStore, "consumeRate">,
  limits: RateLimits,
  req: { readonly teamId: string; readonly channelId: string; readonly userId: string },
  now: number,
): Promise<string | undefined> {
  const user = { name: `user:${req.userId}`, limit: limits.perUserPerMinute };
  const channel = { name: `channel:${req.channelId}`, limit: limits.perChannelPerMinute };
  const counted = [user, channel].filter((l) => l.limit > 0);
  if (counted.length === 0) return undefined;
  const decision = await store.consumeRate(req.teamId, counted, WINDOW_MS, now);
  if (decision.allowed) return undefined;
  const wait = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  if (decision.refusedBy === user.name) {
    return `You have started ${user.limit} tasks or follow-ups in the last minute, the most one person may. Please try again in ${wait} s.`;
  }
  return `${channel.limit} tasks or follow-ups were started in this channel in the last minute, the most it takes. Please try again in ${wait} s.`;
}
