/** What callers tell the scheduler: edit and call options, and how a scheduler is set up. */
import type { AppMetrics } from "../../metrics.ts";
import type { Clock } from "../../util/clock.ts";
import type { MethodBudget } from "./budgets.ts";
import type { TokenBuckets } from "./token-buckets.ts";

export type Priority = "high" | "normal";

export interface EditOptions {
  /** The last edit of a run: goes before interim edits and is not held by the per-message interval. */
  readonly final?: boolean;
  /** Edits of one run share the per-message interval (a run split over several messages). */
  readonly runId?: string;
}

export interface ScheduleOptions {
  /** The per-key bucket to take from as well (chat.postMessage: the channel). */
  readonly key?: string;
  readonly priority?: Priority;
  /** Waiting since then (default: now); calls of one rank go oldest first. */
  readonly since?: number;
  /** Give up (BudgetWaitExceeded) when the call has not started within this long. */
  readonly maxWaitMs?: number;
  /**
   * An interim text of `unit` (a stream's append with more to come): it spends only the calls
   * the owed ones will not need (windows.ts). `last`: the unit's final one, owed like any call.
   */
  readonly pace?: { readonly unit: string; readonly last?: boolean };
}

export interface SchedulerOptions {
  readonly clock?: Clock;
  /** Memory by default; RedisTokenBuckets to share the budget between instances. close() closes them. */
  readonly buckets?: TokenBuckets;
  /** Share of every budget the scheduler may use in any minute. Default 0.9. */
  readonly safety?: number;
  /** Overrides of DEFAULT_BUDGETS, by method. */
  readonly budgets?: Readonly<Record<string, MethodBudget>>;
  /** Minimum time between two interim edits of one message (or run). Default 1000 ms. */
  readonly minEditIntervalMs?: number;
  /** How many 429s in a row a call survives before it fails. Default 10 (as WebClient's own retries). */
  readonly maxRateLimitRetries?: number;
  /** The app's Prometheus metrics: Slack calls by outcome, queue waits. */
  readonly metrics?: AppMetrics;
  /** Told about unexpected failures of the scheduler itself (e.g. the bucket store). */
  readonly onError?: (err: unknown) => void;
}
