/**
 * The scheduler's budgets: sliding windows (windows.ts) and token buckets (a channel's posts), in
 * memory, or in Redis as one Lua script when instances share a workspace's budget.
 */
import { createHash } from "node:crypto";
import {
  expire,
  record,
  WINDOW_TAKE_LUA,
  WINDOW_WAIT_LUA,
  type WindowSpec,
  windowWait,
} from "./windows.ts";

/** A budget a call takes from: a token bucket or a sliding window. */
export type BucketSpec = TokenBucketSpec | WindowSpec;

export interface TokenBucketSpec {
  readonly kind?: "bucket";
  readonly key: string;
  readonly ratePerMs: number;
  /** Calls that may go out back to back after a quiet spell. */
  readonly burst: number;
}

export interface TakeAnswer {
  readonly wait: number; // 0: the tokens were taken; else ms until every bucket has one
  readonly firstWait: number; // the first bucket's own (the scheduler puts the workspace's first)
}

export interface TokenBuckets {
  /** Takes a token from every bucket or none (a post the workspace refuses spends no channel's). */
  take(buckets: readonly BucketSpec[], now: number): Promise<TakeAnswer>;
  readonly shared: boolean; // other instances take from them too (and race for each token)
  /** Deletes every bucket whose key starts with `prefix` (a workspace that uninstalled the app). */
  forget?(prefix: string): Promise<void>;
  close(): Promise<void>;
}

interface BucketState {
  tokens: number;
  at: number;
}

/** Refills a bucket up to `now`; `wait`: until it holds a whole token. */
function refill(spec: TokenBucketSpec, state: BucketState | undefined, now: number) {
  let tokens = state?.tokens ?? spec.burst;
  let at = state?.at ?? now;
  // Another instance with a clock ahead of ours may have stamped the bucket in our future: then
  // nothing is refilled and the wait counts from its stamp (time never runs backwards here).
  if (now > at) {
    tokens = Math.min(spec.burst, tokens + (now - at) * spec.ratePerMs);
    at = now;
  }
  const wait = tokens >= 1 ? 0 : Math.ceil(at - now + (1 - tokens) / spec.ratePerMs);
  return { tokens, at, wait };
}

export class MemoryTokenBuckets implements TokenBuckets {
  readonly shared = false;
  readonly #state = new Map<string, BucketState & { fullAt: number }>();
  /** Each window's call times, ascending. */
  readonly #windows = new Map<string, { times: number[]; spec: WindowSpec }>();

  async take(buckets: readonly BucketSpec[], now: number): Promise<TakeAnswer> {
    return this.takeNow(buckets, now);
  }

  takeNow(buckets: readonly BucketSpec[], now: number): TakeAnswer {
    const waits = buckets.map((b) => {
      if (b.kind !== "window") return refill(b, this.#state.get(b.key), now).wait;
      const { times } = this.#windowOf(b);
      expire(b, times, now);
      return windowWait(b, times, now);
    });
    const wait = Math.max(0, ...waits);
    if (wait > 0) return { wait, firstWait: waits[0] ?? 0 };
    for (const b of buckets) {
      if (b.kind === "window") {
        record(this.#windowOf(b).times, now);
        continue;
      }
      const r = refill(b, this.#state.get(b.key), now);
      const tokens = r.tokens - 1;
      this.#state.set(b.key, { tokens, at: r.at, fullAt: r.at + (b.burst - tokens) / b.ratePerMs });
    }
    if (this.#state.size + this.#windows.size > 10_000) this.#sweep(now);
    return { wait: 0, firstWait: 0 };
  }

  #windowOf(spec: WindowSpec): { times: number[]; spec: WindowSpec } {
    let w = this.#windows.get(spec.key);
    if (!w) this.#windows.set(spec.key, (w = { times: [], spec }));
    return w;
  }

  async forget(prefix: string): Promise<void> {
    for (const key of this.#state.keys()) if (key.startsWith(prefix)) this.#state.delete(key);
    for (const key of this.#windows.keys()) if (key.startsWith(prefix)) this.#windows.delete(key);
  }

  /** Forgets full buckets and empty windows: a missing one is a full, or empty, one. */
  #sweep(now: number): void {
    for (const [key, s] of this.#state) if (s.fullAt <= now) this.#state.delete(key);
    for (const [key, w] of this.#windows) {
      if (expire(w.spec, w.times, now) === 0) this.#windows.delete(key);
    }
  }

  async close(): Promise<void> {}
}

/**
 * MemoryTokenBuckets' algorithms, atomic in Redis, with numbers as exact doubles (so both answer
 * alike). A bucket is a hash {tokens, at} expiring once full again, a window a sorted set expiring
 * with its last call: idle keys cost nothing. ARGV: now, then six per key: "b", rate, burst, 0, 0,
 * 0; or "w", limit, windowMs, burst, units, ageMs. Returns {wait, firstWait}.
 */
const TAKE_SCRIPT = `
local now = tonumber(ARGV[1])
local tokens, stamps = {}, {}
local wait, first = 0, 0
for i, key in ipairs(KEYS) do
  local j = 6 * i - 4
  local w = 0
  if ARGV[j] == 'w' then
    local limit, windowMs, burst = tonumber(ARGV[j + 1]), tonumber(ARGV[j + 2]), tonumber(ARGV[j + 3])
    local units, ageMs = tonumber(ARGV[j + 4]), tonumber(ARGV[j + 5])
    ${WINDOW_WAIT_LUA}
  else
    local rate, burst = tonumber(ARGV[j + 1]), tonumber(ARGV[j + 2])
    local state = redis.call('HMGET', key, 'tokens', 'at')
    local t = tonumber(state[1]) or burst
    local at = tonumber(state[2]) or now
    if now > at then
      t = math.min(burst, t + (now - at) * rate)
      at = now
    end
    tokens[i], stamps[i] = t, at
    if t < 1 then w = math.ceil(at - now + (1 - t) / rate) end
  end
  wait = math.max(wait, w)
  if i == 1 then first = w end
end
if wait > 0 then return {wait, first} end
for i, key in ipairs(KEYS) do
  local j = 6 * i - 4
  if ARGV[j] == 'w' then
    local windowMs = tonumber(ARGV[j + 2])
    ${WINDOW_TAKE_LUA}
  else
    local rate, burst = tonumber(ARGV[j + 1]), tonumber(ARGV[j + 2])
    local left = tokens[i] - 1
    redis.call('HSET', key, 'tokens', string.format('%.17g', left), 'at', string.format('%.17g', stamps[i]))
    redis.call('PEXPIRE', key, math.ceil(stamps[i] - now + (burst - left) / rate) + 1000)
  end
end
return {0, 0}
`;
const scriptArgs = (b: BucketSpec): string[] =>
  b.kind === "window"
    ? ["w", ...[b.limit, b.windowMs, b.burst, b.units, b.ageMs].map(String)]
    : ["b", String(b.ratePerMs), String(b.burst), "0", "0", "0"];
const TAKE_SHA = createHash("sha1").update(TAKE_SCRIPT).digest("hex");

/** The part of a node-redis client the buckets use (any RESP version, modules or scripts). */
export interface ScriptClient {
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  on(event: "error", listener: (err: unknown) => void): unknown;
  scanIterator?(options: { MATCH: string; COUNT: number }): AsyncIterable<string[]>;
  unlink?(keys: string[]): Promise<unknown>;
  readonly isOpen: boolean;
  close(): Promise<void>;
}

export interface RedisBucketsOptions {
  readonly prefix?: string | undefined; // before every bucket key, default "slack-rl:"
  /** Told once per outage; the buckets fall back to memory meanwhile. */
  readonly onError?: ((err: unknown) => void) | undefined;
}

export class RedisTokenBuckets implements TokenBuckets {
  readonly shared = true;
  readonly #client: ScriptClient;
  readonly #prefix: string;
  readonly #onError: (err: unknown) => void;
  // While Redis is unreachable each instance keeps to a budget of its own rather than stopping
  // every Slack write: a few 429s (handled by the scheduler) are better than silence.
  readonly #fallback = new MemoryTokenBuckets();
  #failing = false;

  constructor(client: ScriptClient, options: RedisBucketsOptions = {}) {
    this.#client = client;
    this.#prefix = options.prefix ?? "slack-rl:";
    this.#onError = options.onError ?? (() => {});
    // node-redis emits "error" on every failed reconnect attempt; report an outage once.
    client.on("error", (err: unknown) => this.#report(err));
  }

  #report(err: unknown): void {
    if (!this.#failing) this.#onError(err);
    this.#failing = true;
  }

  async take(buckets: readonly BucketSpec[], now: number): Promise<TakeAnswer> {
    const keys = buckets.map((b) => this.#prefix + b.key);
    const args = [String(now), ...buckets.flatMap(scriptArgs)];
    try {
      const reply = await this.#eval(keys, args);
      this.#failing = false;
      const answer: readonly unknown[] = Array.isArray(reply) ? reply : [reply, 0];
      return { wait: Number(answer[0]), firstWait: Number(answer[1]) };
    } catch (err) {
      this.#report(err);
      return this.#fallback.takeNow(buckets, now);
    }
  }

  async #eval(keys: string[], args: string[]): Promise<unknown> {
    try {
      return await this.#client.evalSha(TAKE_SHA, { keys, arguments: args });
    } catch (err) {
      // The script cache is empty after a Redis restart or on a new server: send it once in full.
      if (!String(err).includes("NOSCRIPT")) throw err;
      return await this.#client.eval(TAKE_SCRIPT, { keys, arguments: args });
    }
  }

  /** A workspace's buckets go with it (they would expire within a minute anyway). Never KEYS. */
  async forget(prefix: string): Promise<void> {
    const { scanIterator, unlink } = this.#client;
    if (!scanIterator || !unlink) return;
    const match = `${(this.#prefix + prefix).replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
    for await (const keys of scanIterator.call(this.#client, { MATCH: match, COUNT: 500 })) {
      if (keys.length > 0) await unlink.call(this.#client, keys);
    }
  }

  async close(): Promise<void> {
    if (this.#client.isOpen) await this.#client.close();
  }
}

/** Buckets on their own Redis client (close() closes it). */
export async function connectRedisBuckets(
  url: string,
  options: RedisBucketsOptions = {},
): Promise<RedisTokenBuckets> {
  // Loaded only when Redis is used. No offline queue: while disconnected a take fails at once
  // (and falls back to memory) instead of holding every Slack write until Redis is back.
  const redis = await import("@redis/client");
  const client = redis.createClient({ url, disableOfflineQueue: true });
  const buckets = new RedisTokenBuckets(client, options);
  await client.connect();
  return buckets;
}
