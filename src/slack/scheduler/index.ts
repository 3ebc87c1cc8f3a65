/** The Slack scheduler's entry: a scheduler on Redis buckets (shared) or memory, and its types. */
import { SlackScheduler } from "./scheduler.ts";
import type { SchedulerOptions } from "./options.ts";
import { connectRedisBuckets } from "./token-buckets.ts";

export { budgetsWith, DEFAULT_BUDGETS, EDIT_METHOD, rateLimitedRetryAfter } from "./budgets.ts";
export type { MethodBudget, Rate } from "./budgets.ts";
export type { SchedulerMetrics, WaitStats } from "./metrics.ts";
export type { EditOptions, Priority, ScheduleOptions, SchedulerOptions } from "./options.ts";
export { SlackScheduler } from "./scheduler.ts";
export { BudgetWaitExceeded } from "./lanes.ts";
export type { EditResult, LaneLoad } from "./lanes.ts";
export { StreamChoice } from "./stream-choice.ts";
export type { Clock } from "../../util/clock.ts";

/**
 * A scheduler whose budget lives in Redis when `redisUrl` is set (every instance of the app
 * shares it), in memory otherwise.
 */
export async function createSlackScheduler(
  options: SchedulerOptions & {
    readonly redisUrl?: string | undefined;
    /** Prefix of the bucket keys in Redis (default "slack-rl:"). */
    readonly redisPrefix?: string;
  },
): Promise<SlackScheduler> {
  const { redisUrl, redisPrefix, ...rest } = options;
  if (!redisUrl) return new SlackScheduler(rest);
  const buckets = await connectRedisBuckets(redisUrl, {
    ...(redisPrefix === undefined ? {} : { prefix: redisPrefix }),
    ...(rest.onError ? { onError: rest.onError } : {}),
  });
  return new SlackScheduler({ ...rest, buckets });
}
