/**
 * Fairness limits on starting and continuing tasks: per person and per channel, in one-minute
 * windows shared by every instance (slots claimed in the store, so no counter primitive is
 * needed and the check is atomic on every backend). Refusals say when to try again.
 */
import type { ThreadStore } from "./ports.ts";

export interface RateLimits {
  /** Tasks and follow-ups one person may start per minute (0: no limit). */
  readonly perUserPerMinute: number;
  /** Tasks and follow-ups all people together may start per minute in one channel. */
  readonly perChannelPerMinute: number;
}

export const NO_RATE_LIMITS: RateLimits = { perUserPerMinute: 0, perChannelPerMinute: 0 };

const WINDOW_MS = 60_000;

/**
 * Takes one slot of each limit for a request by `userId` in `channelId`; returns what to tell
 * the person when a limit is reached (nothing is taken then from the other limit's future).
 */
export async function takeRateSlot(
  store: Pick<ThreadStore, "claimOnce">,
  limits: RateLimits,
  req: { readonly teamId: string; readonly channelId: string; readonly userId: string },
  now: number,
): Promise<string | undefined> {
  const window = Math.floor(now / WINDOW_MS);
  const wait = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
  if (!(await slot(store, req.teamId, `user:${req.userId}`, window, limits.perUserPerMinute))) {
    return `You have started ${limits.perUserPerMinute} tasks or follow-ups in the last minute, the most one person may. Please try again in ${wait} s.`;
  }
  if (
    !(await slot(store, req.teamId, `channel:${req.channelId}`, window, limits.perChannelPerMinute))
  ) {
    return `${limits.perChannelPerMinute} tasks or follow-ups were started in this channel in the last minute, the most it takes. Please try again in ${wait} s.`;
  }
  return undefined;
}

async function slot(
  store: Pick<ThreadStore, "claimOnce">,
  teamId: string,
  scope: string,
  window: number,
  limit: number,
): Promise<boolean> {
  if (limit <= 0) return true;
  for (let i = 0; i < limit; i++) {
    // Kept a little past the window so a late clock on another instance still sees it.
    if (await store.claimOnce(teamId, `rate:${scope}:${window}:${i}`, 2 * WINDOW_MS)) return true;
  }
  return false;
}
