/**
 * A workspace's budget for one Slack method as Slack counts it: at most `limit` calls in any
 * sliding window (a minute, plus a second for the time a call takes to reach Slack), at any
 * pace within it. A minute's calls may all be spent in the first seconds of a burst of runs,
 * which a token bucket (a small burst, then a steady refill) never allows: ten answers of twelve
 * seconds each get about twice the edits (`npm run bench:pacing`).
 *
 * Spending a whole minute at once would leave nothing for the rest of it, so the calls left are
 * paced: after `burst` calls back to back, the next goes `horizonMs / left` after the one before
 * (on average), `left` being the window's calls not spent yet plus those that leave the window
 * within the horizon. A burst of demand spends the window's calls quickly at first and ever more
 * slowly (like exp(-t / horizon)), never running dry; under sustained demand calls go at the
 * window's own rate (limit / window), as the calls leaving it make room.
 */

export interface WindowSpec {
  readonly kind: "window";
  readonly key: string;
  /** Calls allowed in any window. */
  readonly limit: number;
  readonly windowMs: number;
  /** The window's unspent calls are spread over about this long. */
  readonly horizonMs: number;
  /** Calls that may go back to back (at most `limit`). */
  readonly burst: number;
}

/** Slack's minute, and a second for a call's way there (its window counts arrivals). */
export const WINDOW_MS = 61_000;

/**
 * Ms until a call may go (0: now), given the window's calls at `times` (ascending, none older
 * than the window). A positive answer is when to ask again; other takers may come first.
 */
export function windowWait(spec: WindowSpec, times: readonly number[], now: number): number {
  const n = times.length;
  if (n >= spec.limit) {
    // The call goes once enough of the window's calls have left it.
    return Math.max(1, Math.ceil((times[n - spec.limit] ?? now) + spec.windowMs - now));
  }
  const burst = Math.max(1, Math.min(spec.burst, spec.limit));
  if (n < burst) return 0;
  let leaving = 0;
  const soon = now - spec.windowMs + spec.horizonMs;
  while (leaving < n && (times[leaving] ?? Infinity) <= soon) leaving++;
  const gap = spec.horizonMs / (spec.limit - n + leaving);
  return Math.max(0, Math.ceil((times[n - burst] ?? now) + burst * gap - now));
}

/** Drops the calls that left the window by `now` (times ascending); returns how many are left. */
export function expire(spec: WindowSpec, times: number[], now: number): number {
  let old = 0;
  while (old < times.length && (times[old] ?? now) <= now - spec.windowMs) old++;
  if (old > 0) times.splice(0, old);
  return times.length;
}

/** Records a call at `now`, keeping `times` ascending (another instance's clock may differ). */
export function record(times: number[], now: number): void {
  let i = times.length;
  while (i > 0 && (times[i - 1] ?? 0) > now) i--;
  times.splice(i, 0, now);
}

/**
 * The same algorithm, atomic in Redis, for one key of the take script: a sorted set of call
 * times (score = time; the member adds the count, so two calls at one ms stay two). Reads
 * `key`, `now` and the spec's numbers `limit`, `windowMs`, `horizonMs`, `burst`; sets `w`,
 * the wait. `WINDOW_TAKE_LUA` records the call under a member of its own (two calls stamped with
 * one ms by instances whose clocks differ are two members, never one).
 */
export const WINDOW_WAIT_LUA = `
    redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.17g', now - windowMs))
    local n = redis.call('ZCARD', key)
    w = 0
    if n >= limit then
      local at = redis.call('ZRANGE', key, n - limit, n - limit, 'WITHSCORES')
      w = math.max(1, math.ceil(tonumber(at[2]) + windowMs - now))
    else
      local b = math.max(1, math.min(burst, limit))
      if n >= b then
        local soon = string.format('%.17g', now - windowMs + horizonMs)
        local left = limit - n + redis.call('ZCOUNT', key, '-inf', soon)
        local at = redis.call('ZRANGE', key, n - b, n - b, 'WITHSCORES')
        w = math.max(0, math.ceil(tonumber(at[2]) + b * (horizonMs / left) - now))
      end
    end`;

export const WINDOW_TAKE_LUA = `
    local seq = redis.call('ZCARD', key)
    local at = string.format('%.17g', now)
    while redis.call('ZADD', key, 'NX', at, at .. ':' .. seq) == 0 do seq = seq + 1 end
    redis.call('PEXPIRE', key, math.ceil(windowMs) + 1000)`;
