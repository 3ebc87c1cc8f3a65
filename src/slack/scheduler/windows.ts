/**
 * A workspace's budget for one Slack method: at most `limit` calls in any sliding window. Owed
 * calls go once it has room; paced ones (interim texts) spend only the calls the finals will not
 * need. The reasoning: docs/benchmarks.md, "How the budgets are spent (issue 33)".
 */

export interface WindowSpec {
  readonly kind: "window";
  readonly key: string;
  readonly limit: number;
  readonly windowMs: number;
  /** Paced calls that may go back to back (at most `limit`). */
  readonly burst: number;
  /** For a paced call: the units (runs, messages) sharing the spare calls; 0 for an owed call. */
  readonly units: number;
  /** For a paced call: the units' mean age. */
  readonly ageMs: number;
}

/** Slack's minute, and a second for a call's way there (its window counts arrivals). */
export const WINDOW_MS = 61_000;

/** A paced call that finds no spare call asks again this often: the reserve shrinks as runs age. */
export const RESERVE_RECHECK_MS = 1000;

/**
 * The calls kept for the units' final calls: the most, over every τ up to a window ahead, by which
 * the finals expected within τ (a run of age a ends within τ with chance τ / (a + τ), Gott's
 * scale-free prior) exceed the calls leaving the window within τ.
 */
export function reserveOf(spec: WindowSpec, times: readonly number[], now: number): number {
  const expected = (tau: number) => (spec.units * tau) / (spec.ageMs + tau);
  // Between two leaves the excess only grows: its most is just before one, or a window ahead.
  let reserve = expected(spec.windowMs) - times.length;
  for (let left = 0; left < times.length; left++) {
    const tau = (times[left] ?? now) + spec.windowMs - now;
    reserve = Math.max(reserve, expected(tau) - left);
  }
  return Math.max(0, reserve);
}

/**
 * Over how long `spare` calls are spread: √(age × window × spare / units), the horizon that
 * minimises the expected longest wait under the same prior; at most the window.
 */
export function paceHorizon(spec: WindowSpec, spare: number): number {
  const h = Math.sqrt((spec.ageMs * spec.windowMs * spare) / Math.max(1, spec.units));
  return Math.min(spec.windowMs, h);
}

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
  if (spec.units <= 0) return 0;
  const spare = spec.limit - reserveOf(spec, times, now) - n;
  if (spare < 1) {
    // Asked again once a call leaves the window, or the reserve shrank as the runs aged.
    const first = times[0];
    if (first === undefined) return RESERVE_RECHECK_MS;
    return Math.max(1, Math.min(RESERVE_RECHECK_MS, Math.ceil(first + spec.windowMs - now)));
  }
  const burst = Math.max(1, Math.min(spec.burst, spec.limit));
  if (n < burst) return 0;
  const horizon = paceHorizon(spec, spare);
  let leaving = 0;
  const soon = now - spec.windowMs + horizon;
  while (leaving < n && (times[leaving] ?? Infinity) <= soon) leaving++;
  const gap = horizon / (spare + leaving);
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
 * The same algorithm in Lua, for one key of the take script: a sorted set of call times. Reads
 * `key`, `now`, `limit`, `windowMs`, `burst`, `units`, `ageMs`; sets `w`, the wait.
 * `WINDOW_TAKE_LUA` gives each call a member of its own (two calls stamped with one ms stay two).
 */
export const WINDOW_WAIT_LUA = `
    redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.17g', now - windowMs))
    local n = redis.call('ZCARD', key)
    w = 0
    if n >= limit then
      local at = redis.call('ZRANGE', key, n - limit, n - limit, 'WITHSCORES')
      w = math.max(1, math.ceil(tonumber(at[2]) + windowMs - now))
    elseif units > 0 then
      local calls = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
      local reserve = units * windowMs / (ageMs + windowMs) - n
      for left = 0, n - 1 do
        local tau = tonumber(calls[2 * left + 2]) + windowMs - now
        reserve = math.max(reserve, units * tau / (ageMs + tau) - left)
      end
      local spare = limit - math.max(0, reserve) - n
      if spare < 1 then
        w = ${RESERVE_RECHECK_MS}
        if n > 0 then
          w = math.max(1, math.min(w, math.ceil(tonumber(calls[2]) + windowMs - now)))
        end
      else
        local b = math.max(1, math.min(burst, limit))
        if n >= b then
          local h = math.min(windowMs, math.sqrt(ageMs * windowMs * spare / math.max(1, units)))
          local soon = string.format('%.17g', now - windowMs + h)
          local left = spare + redis.call('ZCOUNT', key, '-inf', soon)
          local at = redis.call('ZRANGE', key, n - b, n - b, 'WITHSCORES')
          w = math.max(0, math.ceil(tonumber(at[2]) + b * (h / left) - now))
        end
      end
    end`;

export const WINDOW_TAKE_LUA = `
    local seq = redis.call('ZCARD', key)
    local at = string.format('%.17g', now)
    while redis.call('ZADD', key, 'NX', at, at .. ':' .. seq) == 0 do seq = seq + 1 end
    redis.call('PEXPIRE', key, math.ceil(windowMs) + 1000)`;
