/** Slack's rate budgets per method (the tiers), and what a 429 asks for. */
import type { TokenBucketSpec } from "./token-buckets.ts";
import { WINDOW_MS, type WindowSpec } from "./windows.ts";

export interface Rate {
  readonly perMinute: number; // the tier figure, before `safety`
  readonly burst: number; // calls that may go out back to back
}

export interface MethodBudget extends Rate {
  readonly perKey?: Rate; // a second budget per key (chat.postMessage: a channel), with the team's
}

/** Tier figures from Slack's rate-limits page and each method's reference page. */
export const DEFAULT_BUDGETS: Readonly<Record<string, MethodBudget>> = {
  // "1 message per second to a specific channel", and a workspace-wide limit of "several
  // hundred messages per minute" (chat.postMessage's reference page): the low end of that.
  "chat.postMessage": { perMinute: 300, burst: 10, perKey: { perMinute: 60, burst: 3 } },
  "chat.update": { perMinute: 50, burst: 3 }, // Tier 3
  "chat.delete": { perMinute: 50, burst: 3 }, // Tier 3
  "reactions.add": { perMinute: 50, burst: 3 }, // Tier 3
  "reactions.remove": { perMinute: 50, burst: 3 }, // Tier 3
  "conversations.join": { perMinute: 50, burst: 3 }, // Tier 3
  "conversations.replies": { perMinute: 50, burst: 3 }, // Tier 3
  "chat.postEphemeral": { perMinute: 100, burst: 5 }, // Tier 4
  "files.getUploadURLExternal": { perMinute: 100, burst: 5 }, // Tier 4
  "files.completeUploadExternal": { perMinute: 100, burst: 5 }, // Tier 4
  "chat.appendStream": { perMinute: 100, burst: 5 }, // Tier 4
  "users.info": { perMinute: 100, burst: 5 }, // Tier 4
  "assistant.threads.setStatus": { perMinute: 100, burst: 5 }, // Tier 4
  "assistant.threads.setTitle": { perMinute: 100, burst: 5 }, // Tier 4
  // Not on the rate-limits page yet: treated like the assistant status it goes with.
  "agents.sessions.setStatus": { perMinute: 100, burst: 5 },
  // Tier 2. A run whose stream cannot start at once edits instead (nobody waits for a start), so
  // a minute's starts may all go at once. Stops are never what an answer waits for: two at once.
  "chat.startStream": { perMinute: 20, burst: 20 },
  "chat.stopStream": { perMinute: 20, burst: 2 },
};

/** Seconds Slack asked to wait when `err` is a 429 (WebClient with rejectRateLimitedCalls). */
export function rateLimitedRetryAfter(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as { code?: unknown; retryAfter?: unknown };
  if (e.code !== "slack_webapi_rate_limited_error") return undefined;
  return typeof e.retryAfter === "number" && e.retryAfter > 0 ? e.retryAfter : 1;
}

/** A workspace's window for `method`: `safety` of the tier's calls in any minute (at least one). */
export function windowFor(key: string, method: string, budget: Rate, safety: number): WindowSpec {
  const limit = Math.max(1, Math.floor(budget.perMinute * safety));
  if (!(budget.perMinute >= 1 && budget.burst >= 1)) {
    throw new Error(`${method}: a budget needs ≥ 1 call a minute and a burst ≥ 1`);
  }
  const burst = Math.min(Math.floor(budget.burst), limit);
  return { kind: "window", key, limit, windowMs: WINDOW_MS, burst, units: 0, ageMs: 0 };
}

/** A channel's token bucket: burst + refill × 1 minute ≤ safety × perMinute, in any minute. */
export function bucketFor(method: string, r: Rate, safety: number): Omit<TokenBucketSpec, "key"> {
  const ratePerMs = (r.perMinute * safety - r.burst) / 60_000;
  if (!(r.burst >= 1 && ratePerMs > 0)) {
    throw new Error(`${method}: burst must be ≥ 1 and below safety × perMinute`);
  }
  return { ratePerMs, burst: r.burst };
}

/** The tier defaults with per-method overrides of calls per minute. */
export function budgetsWith(
  overrides: Readonly<Record<string, number>>,
): Record<string, MethodBudget> {
  const budgets: Record<string, MethodBudget> = { ...DEFAULT_BUDGETS };
  for (const [method, perMinute] of Object.entries(overrides)) {
    const base = budgets[method] ?? { perMinute, burst: 3 };
    // For chat.postMessage the per-channel rate moves with it; a tiny budget has no burst.
    budgets[method] = {
      ...base,
      perMinute,
      burst: perMinute <= 2 * base.burst ? 1 : base.burst,
      ...(base.perKey ? { perKey: { ...base.perKey, perMinute } } : {}),
    };
  }
  return budgets;
}
