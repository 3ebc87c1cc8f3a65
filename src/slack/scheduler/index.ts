/** The Slack scheduler's entry: a scheduler on Redis buckets (shared) or memory, and its types. */
import { type SchedulerOptions, SlackScheduler } from "./scheduler.ts";
import { connectRedisBuckets } from "./token-buckets.ts";

export { budgetsWith, DEFAULT_BUDGETS, rateLimitedRetryAfter } from "./budgets.ts";
export type { ScheduleOptions, SchedulerOptions } from "./scheduler.ts";
export { SlackScheduler } from "./scheduler.ts";
export { BudgetWaitExceeded } from "./lanes.ts";
export type { EditResult, LaneLoad } from "./lanes.ts";
export { StreamChoice } from "./stream-choice.ts";
export type { Clock } from "../../util/clock.ts";

/** A scheduler whose budget lives in Redis when `redisUrl` is set (every instance shares it). */
export async function createSlackScheduler(
  options: SchedulerOptions & {
    readonly redisUrl?: string | undefined;
    readonly redisPrefix?: string;
  },
): Promise<SlackScheduler> {
  const { redisUrl, redisPrefix: prefix, ...rest } = options;
  if (!redisUrl) return new SlackScheduler(rest);
  const buckets = await connectRedisBuckets(redisUrl, { prefix, onError: rest.onError });
  return new SlackScheduler({ ...rest, buckets });
}
