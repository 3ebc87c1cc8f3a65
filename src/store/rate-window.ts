/**
 * Rate limits as one atomic sliding-window log per request: recorded in all its limits or none;
 * at most `limit` in ANY window (a fixed window lets 2 × limit through around its edge). Not
 * `rate-limiter-flexible`: fixed windows, one key per call (a second limit's refusal leaves the
 * first spent), its SQLite limiter needs better-sqlite3.
 */
import { parseJson } from "./record-format.ts";
import type { RateDecision, RateLimit } from "./types.ts";

export type RateCount = { readonly key: string; readonly limit: number };

/** Undefined when the request was recorded. */
export type RateRefusal = { readonly index: number; readonly retryAfterMs: number } | undefined;

/** Oldest first (a missing or unreadable log holds none). */
export function parseLog(raw: string | undefined): number[] {
  const times = raw === undefined ? undefined : parseJson(raw);
  return Array.isArray(times) ? times.filter((t): t is number => typeof t === "number") : [];
}

/**
 * On logs read in one transaction: `now` added in order (another instance's clock may lag); a
 * refusal names the full limit that frees last, so a retry then finds room in all.
 */
export function decideRate(
  counts: readonly RateCount[],
  logs: readonly (readonly number[])[],
  windowMs: number,
  now: number,
): { readonly refusal: RateRefusal; readonly logs: number[][] } {
  const kept = logs.map((times) => times.filter((t) => t > now - windowMs).sort((a, b) => a - b));
  let refusal: RateRefusal;
  counts.forEach(({ limit }, index) => {
    const times = kept[index] ?? [];
    if (times.length < limit) return;
    // Room comes back when enough of them have left the window to leave one place free.
    const retryAfterMs = (times[times.length - limit] ?? now) + windowMs - now;
    if (!refusal || retryAfterMs > refusal.retryAfterMs) refusal = { index, retryAfterMs };
  });
  const added = refusal ? kept : kept.map((times) => [...times, now].sort((a, b) => a - b));
  return { refusal, logs: added };
}

/**
 * The same as one Redis script (atomic); each log a sorted set of request ids scored by time.
 * KEYS: the logs; ARGV: windowMs, now, the request's id, each log's limit. Returns {0, 0} when
 * recorded, else {the refusing log's 1-based index, ms until it has room}.
 */
export const REDIS_CONSUME_RATE = `
local window = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local refused, wait = 0, -1
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local limit = tonumber(ARGV[i + 3])
  local count = redis.call('ZCARD', key)
  if count >= limit then
    local first = redis.call('ZRANGE', key, count - limit, count - limit, 'WITHSCORES')
    local w = tonumber(first[2]) + window - now
    if w > wait then refused, wait = i, w end
  end
end
if refused > 0 then return {refused, wait} end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, ARGV[3])
  redis.call('PEXPIRE', key, window)
end
return {0, 0}
`;

/** A bad call is a bug, not an outage. */
export function checkRateCall(limits: readonly RateLimit[], windowMs: number, now: number): void {
  if (limits.length === 0) throw new RangeError("consumeRate needs at least one limit");
  if (new Set(limits.map((l) => l.name)).size < limits.length) {
    throw new RangeError("consumeRate counts a request once per limit: its names must differ");
  }
  for (const { name, limit } of limits) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`rate limit ${name} must be a whole number ≥ 1, not ${limit}`);
    }
  }
  if (!Number.isInteger(windowMs) || windowMs < 1) {
    throw new RangeError(`a rate window must be a whole number of ms ≥ 1, not ${windowMs}`);
  }
  if (!Number.isSafeInteger(now)) throw new RangeError(`a rate time must be whole ms, not ${now}`);
}

export function rateDecision(limits: readonly RateLimit[], refusal: RateRefusal): RateDecision {
  if (!refusal) return { allowed: true };
  const limit = limits[refusal.index];
  if (!limit) throw new Error(`the store refused by an unknown rate limit (${refusal.index})`);
  return { allowed: false, refusedBy: limit.name, retryAfterMs: Math.max(1, refusal.retryAfterMs) };
}
