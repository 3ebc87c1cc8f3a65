/** The shared store for several instances: Redis through @keyv/redis, atomic ops in Lua. */
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { setTimeout as delay } from "node:timers/promises";
import KeyvRedis, { createClient } from "@keyv/redis";
import { Keyv } from "keyv";
import {
  DEFAULT_NAMESPACE,
  iteratedKeys,
  KeyvThreadStore,
  type Primitives,
  type StoreOptions,
} from "./keyv-store.ts";
import { REDIS_CONSUME_RATE } from "./rate-window.ts";
import type { StampedRecord } from "./record-format.ts";
import type { ThreadStore } from "./types.ts";
import { StartupError } from "../util/startup-error.ts";

// Compare-and-set: a lease is only renewed or released by its holder; a run index entry (and
// fields that go with it) removed only if nobody rewrote it, rewritten only while it is there.
const RENEW_IF_HOLDS = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
const DELETE_IF_HOLDS = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;
const HDEL_IF_SAME = `if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1], unpack(ARGV, 3)) else return 0 end`;
const HSET_IF_EXISTS = `if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) + 1 else return 0 end`;

/** Keys deleted per UNLINK while a workspace's keys are scanned (SCAN's COUNT hint too). */
const DELETE_BATCH = 500;

/** REDIS_CONNECT_TIMEOUT_MS's default. */
const DEFAULT_REDIS_CONNECT_TIMEOUT_MS = 10_000;

/** The message never names the URL's credentials. */
export class RedisUnreachableError extends StartupError {
  override readonly name = "RedisUnreachableError";
}

/** The Redis store, connected on first use (`openRedisStore` waits for it), reconnecting by itself. */
export function createRedisStore(
  url: string,
  report: (err: unknown) => void = () => {},
  options: StoreOptions = {},
): ThreadStore {
  return redisStore(url, report, options).store;
}

/** The Redis store once Redis answered, for start-up; else a RedisUnreachableError in time. */
export async function openRedisStore(
  url: string,
  report: (err: unknown) => void = () => {},
  options: StoreOptions & { readonly connectTimeoutMs?: number } = {},
): Promise<ThreadStore> {
  const { store, redis } = redisStore(url, report, options);
  const timeoutMs = options.connectTimeoutMs ?? DEFAULT_REDIS_CONNECT_TIMEOUT_MS;
  const failure = await redis.open(timeoutMs);
  if (failure === undefined) return store;
  await redis.destroy();
  throw new RedisUnreachableError(redisUnreachable(url, timeoutMs, failure));
}

/** Where (host and port only) and what to check. */
export function redisUnreachable(url: string, timeoutMs: number, why: string): string {
  return `Cannot connect to Redis at ${redisHost(url)} within ${formatSeconds(timeoutMs)} (${why}): check REDIS_URL, that Redis runs and is reachable from here, and its password.`;
}

function redisStore(
  url: string,
  report: (err: unknown) => void,
  options: StoreOptions,
): { store: ThreadStore; redis: ReadyClient } {
  const namespace = options.namespace ?? DEFAULT_NAMESPACE;
  const client = newClient(url);
  client.on("error", report);
  const adapter = new KeyvRedis<StampedRecord>(client, {
    throwOnConnectError: true,
    throwOnErrors: true,
    connectionTimeout: 2000,
  });
  adapter.on("error", report);
  const keyv = new Keyv<StampedRecord>({ store: adapter, namespace, throwOnErrors: true });
  keyv.on("error", report);
  const redis = new ReadyClient(client, report);
  // keyv's records are `<namespace>::<namespace>:<key>` (@keyv/redis prefixes its namespace
  // and separator to the key keyv already prefixed with its own).
  const primitives = {
    ...redisPrimitives(redis, `${namespace}:runs`, `${namespace}::${namespace}:`),
    recordKeys: (prefix: string) => iteratedKeys(keyv, prefix),
  };
  return { store: new KeyvThreadStore(keyv, primitives, { ...options, namespace }), redis };
}

function redisHost(url: string): string {
  const parsed = URL.parse(url);
  return parsed ? parsed.host || "(no host)" : "(an unreadable REDIS_URL)";
}

const formatSeconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/** Fails fast while Redis is unreachable (no offline queue), reconnects in the background. */
function newClient(url: string) {
  return createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 2000,
      reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2000),
    },
  });
}

type RedisClient = ReturnType<typeof newClient>;

/** The client, connected on first use and waited for (briefly) while it reconnects. */
class ReadyClient {
  readonly #client: RedisClient;
  readonly #report: (err: unknown) => void;
  #opening: Promise<unknown> | undefined;
  /** One wait for "ready" shared by every call made meanwhile (not a listener each). */
  #waiting: Promise<void> | undefined;

  constructor(client: RedisClient, report: (err: unknown) => void) {
    this.#client = client;
    this.#report = report;
  }

  /** The client once ready; within 2 s or a StoreUnavailableError (never an endless wait). */
  async connected(): Promise<RedisClient> {
    const client = this.#client;
    if (client.isReady) return client;
    this.#waiting ??= this.#waitReady().finally(() => {
      this.#waiting = undefined;
    });
    await this.#waiting;
    if (!client.isReady) throw new Error("Redis is not reachable");
    return client;
  }

  /** Waits at most `timeoutMs` for Redis to answer: undefined once it did, else why not. */
  async open(timeoutMs: number): Promise<string | undefined> {
    const client = this.#client;
    let lastError: unknown;
    let accepted = false;
    const onError = (err: unknown) => (lastError = err);
    const onConnect = () => (accepted = true);
    // Not events.once: it gives up at the first failed attempt, and Redis may still be starting.
    let onReady = () => {};
    const ready = new Promise<void>((resolve) => (onReady = resolve));
    client.on("error", onError).on("connect", onConnect).on("ready", onReady);
    const stop = new AbortController();
    try {
      if (!client.isOpen) this.#opening = client.connect().catch(this.#report);
      if (!client.isReady) {
        await Promise.race([ready, delay(timeoutMs, undefined, { signal: stop.signal })]);
      }
    } finally {
      stop.abort();
      client.off("error", onError).off("connect", onConnect).off("ready", onReady);
    }
    if (client.isReady) return undefined;
    if (lastError !== undefined) return errorName(lastError);
    return accepted ? "it accepted the connection but never answered" : "no connection";
  }

  async close(): Promise<void> {
    if (this.#client.isOpen) await this.#client.close();
  }

  /** Drops the connection at once and stops reconnecting (nothing is waiting for an answer). */
  async destroy(): Promise<void> {
    if (this.#client.isOpen) this.#client.destroy();
    await this.#opening;
  }

  async #waitReady(): Promise<void> {
    const client = this.#client;
    if (!client.isOpen) this.#opening = client.connect().catch(this.#report);
    const stop = new AbortController();
    try {
      await Promise.race([
        this.#opening,
        once(client, "ready", { signal: stop.signal }),
        delay(2000, undefined, { signal: stop.signal }),
      ]);
    } catch {
      // aborted waits
    } finally {
      stop.abort();
    }
  }
}

/** A system error code (ECONNREFUSED…) or Redis' error prefix (WRONGPASS…): never the message. */
function errorName(err: unknown): string {
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === "string" && /^E[A-Z_]+$/.test(code)) return code;
  const prefix = typeof message === "string" ? /^[A-Z]{3,}\b/.exec(message)?.[0] : undefined;
  return prefix ?? "an error";
}

/** The run index is the hash `runsHash`: listing it is one command, not a key scan. */
function redisPrimitives(
  redis: ReadyClient,
  runsHash: string,
  recordPrefix: string,
): Omit<Primitives, "recordKeys"> {
  const connected = () => redis.connected();
  const evaluate = async (script: string, keys: string[], args: string[]) =>
    Number(await (await connected()).eval(script, { keys, arguments: args }));
  const ms = (ttl: number) => Math.max(1, Math.round(ttl));
  const deletePrefix = async (prefix: string) => {
    const client = await connected();
    // SCAN with MATCH walks the keyspace in steps (never KEYS, which blocks Redis), and
    // UNLINK frees the values in the background.
    const match = `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
    for await (const keys of client.scanIterator({ MATCH: match, COUNT: DELETE_BATCH })) {
      for (let i = 0; i < keys.length; i += DELETE_BATCH) {
        await client.unlink(keys.slice(i, i + DELETE_BATCH));
      }
    }
  };
  return {
    setIfAbsent: async (k, v, ttl) =>
      (await (await connected()).set(k, v, { NX: true, PX: ms(ttl) })) === "OK",
    consumeRate: async (counts, windowMs, now) => {
      const reply = await (
        await connected()
      ).eval(REDIS_CONSUME_RATE, {
        keys: counts.map((c) => c.key),
        arguments: [
          String(windowMs),
          String(now),
          randomUUID(),
          ...counts.map((c) => `${c.limit}`),
        ],
      });
      // {0, 0}: counted; else the refusing log (1-based) and the ms until it has room.
      const [index, wait] = Array.isArray(reply) ? reply.map(Number) : [];
      if (index === undefined || wait === undefined || !(index >= 0)) {
        throw new Error(
          "Redis answered the rate limit script with something else than two numbers",
        );
      }
      return index > 0 ? { index: index - 1, retryAfterMs: wait } : undefined;
    },
    renewIfHolds: async (k, v, ttl) =>
      (await evaluate(RENEW_IF_HOLDS, [k], [v, `${ms(ttl)}`])) === 1,
    deleteIfHolds: async (k, v) => (await evaluate(DELETE_IF_HOLDS, [k], [v])) === 1,
    putEntry: async (k, v) => {
      await (await connected()).hSet(runsHash, k, v);
    },
    replaceEntry: async (k, v) => (await evaluate(HSET_IF_EXISTS, [runsHash], [k, v])) > 0,
    getEntry: async (k) => (await (await connected()).hGet(runsHash, k)) ?? undefined,
    deleteEntry: async (k) => {
      await (await connected()).hDel(runsHash, k);
    },
    deleteEntryIfSame: async (k, v, also) =>
      (await evaluate(HDEL_IF_SAME, [runsHash], [k, v, ...also])) > 0,
    entries: async (prefix) =>
      Object.entries(await (await connected()).hGetAll(runsHash)).filter(([k]) =>
        k.startsWith(prefix),
      ),
    deleteKeys: async (keys) => {
      if (keys.length > 0) await (await connected()).unlink([...keys]);
    },
    deletePrefix,
    deleteRecords: (prefix) => deletePrefix(`${recordPrefix}${prefix}`),
    ping: async () => (await (await connected()).ping()) === "PONG",
    close: () => redis.close(),
  };
}
