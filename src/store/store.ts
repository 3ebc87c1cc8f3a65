/**
 * The app's shared state, on keyv: embedded SQLite by default, Redis (@keyv/redis) when
 * REDIS_URL is set, memory for unit tests. It holds the Slack thread → service conversation
 * mappings, the index of unfinished runs (what another instance needs to finish one), and
 * the atomic primitives several instances coordinate with: claim-once and leases. Every key
 * is namespaced by Slack team, so workspaces never see each other's threads.
 */
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import KeyvRedis, { createClient } from "@keyv/redis";
import { Keyv } from "keyv";
import type { ThreadRef } from "../service/client.ts";
import { SqliteKeyvAdapter } from "./sqlite-adapter.ts";

/** A follow-up typed while a run was in progress, waiting for its turn. */
export interface QueuedFollowUp {
  readonly userId: string;
  readonly text: string;
  /** The Slack message that carried it. */
  readonly ts: string;
  readonly hadFiles: boolean;
}

export interface ThreadRecord {
  readonly teamId: string;
  readonly channelId: string;
  /** The Slack thread: the ts of the channel message that shows the prompt. */
  readonly threadTs: string;
  readonly projectId: string;
  /** The service's thread id. */
  readonly threadId: string;
  /** Who started the task; only they (or an admin) may stop it. */
  readonly ownerUserId: string;
  /** The run in progress, if any. */
  readonly activeRunId: string | undefined;
  /** The bot message that shows the run in progress. */
  readonly activeMessageTs: string | undefined;
  readonly lastRunId: string | undefined;
  readonly queue: readonly QueuedFollowUp[];
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface SlackThreadKey {
  readonly teamId: string;
  readonly channelId: string;
  readonly threadTs: string;
}

/** An unfinished run: everything an instance needs to finish it in the same Slack messages. */
export interface RunRecord {
  readonly runId: string;
  readonly key: SlackThreadKey;
  readonly ref: ThreadRef;
  /** The bot messages showing the run, in order (long answers span several). */
  readonly messageTs: readonly string[];
  /** The text already shown, so a new owner neither repeats nor loses any. */
  readonly shownText: string;
  readonly startedAt: number;
  readonly note?: string;
  /** Files: not yet uploaded, upload under way (may have partly happened), or uploaded. */
  readonly uploads: "pending" | "started" | "done";
  /** Set when someone pressed Stop (on any instance). */
  readonly stoppedBy?: string;
  /** Who asked (native streams are addressed to them). */
  readonly owner?: string;
  /** A native-streaming run's "working…" message, removed once the answer is final. */
  readonly controlTs?: string;
}

/** The store could not be reached (Redis down, disk error): answer "temporarily unavailable". */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the store is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = "StoreUnavailableError";
  }
}

/** The store boundary. */
export interface ThreadStore {
  getThread(key: SlackThreadKey): Promise<ThreadRecord | undefined>;
  putThread(record: ThreadRecord): Promise<void>;
  /**
   * Read-modify-write of one thread, atomic across instances (a short lock per thread).
   * `change` returns the new record, or undefined to leave it as it is.
   */
  updateThread(
    key: SlackThreadKey,
    change: (current: ThreadRecord) => ThreadRecord | undefined,
  ): Promise<ThreadRecord | undefined>;
  /** True for the first caller only, for `ttlMs` (event and command dedupe). */
  claimOnce(teamId: string, name: string, ttlMs: number): Promise<boolean>;
  /** Takes a lease if nobody holds it. */
  acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Extends one's own lease; false when it was lost (expired and maybe taken). */
  renewLease(name: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Gives up one's own lease at once. */
  releaseLease(name: string, owner: string): Promise<void>;
  putRun(record: RunRecord): Promise<void>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  deleteRun(runId: string): Promise<void>;
  /** Every unfinished run. */
  listRuns(): Promise<RunRecord[]>;
  /** Records who pressed Stop on a run, for the instance that relays it. */
  requestStop(runId: string, userId: string): Promise<void>;
  stopRequester(runId: string): Promise<string | undefined>;
  /** Whether the backing store answers. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

const THREAD_TTL_MS = 90 * 24 * 3600 * 1000;
const RUN_TTL_MS = 7 * 24 * 3600 * 1000;
const LOCK_TTL_MS = 10_000;
/** Default key prefix; several bots (or test suites) can share one Redis with their own. */
export const DEFAULT_NAMESPACE = "taskbot";

const threadKey = (k: SlackThreadKey) => `t:${k.teamId}:thread:${k.channelId}:${k.threadTs}`;

/** What each backend provides beyond keyv's get/set: the atomic operations. */
interface Primitives {
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  renewIfHolds(key: string, value: string, ttlMs: number): Promise<boolean>;
  deleteIfHolds(key: string, value: string): Promise<boolean>;
  putEntry(key: string, value: string, ttlMs: number): Promise<void>;
  getEntry(key: string): Promise<string | undefined>;
  deleteEntry(key: string): Promise<void>;
  entries(prefix: string): Promise<string[]>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

async function guard<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw err instanceof StoreUnavailableError ? err : new StoreUnavailableError(err);
  }
}

class KeyvThreadStore implements ThreadStore {
  readonly #keyv: Keyv<ThreadRecord>;
  readonly #p: Primitives;
  readonly #ns: string;
  readonly #locks = new Map<string, Promise<unknown>>();

  constructor(keyv: Keyv<ThreadRecord>, primitives: Primitives, namespace: string) {
    this.#keyv = keyv;
    this.#p = primitives;
    this.#ns = namespace;
  }

  #lease(name: string): string {
    return `${this.#ns}:lease:${name}`;
  }

  #run(runId: string): string {
    return `${this.#ns}:run:${runId}`;
  }

  #stop(runId: string): string {
    return `${this.#ns}:stopreq:${runId}`;
  }

  async getThread(key: SlackThreadKey): Promise<ThreadRecord | undefined> {
    return guard(async () => (await this.#keyv.get(threadKey(key))) ?? undefined);
  }

  async putThread(record: ThreadRecord): Promise<void> {
    await guard(async () => {
      if (!(await this.#keyv.set(threadKey(record), record, THREAD_TTL_MS))) {
        throw new Error("the store did not accept the write");
      }
    });
  }

  updateThread(
    key: SlackThreadKey,
    change: (current: ThreadRecord) => ThreadRecord | undefined,
  ): Promise<ThreadRecord | undefined> {
    // In this process, one update of a thread at a time (cheap, keeps order); across
    // instances, a short lock in the shared store.
    const k = threadKey(key);
    const previous = this.#locks.get(k) ?? Promise.resolve();
    const next = previous
      .catch(() => undefined)
      .then(() =>
        this.#withLock(`lock:${k}`, async () => {
          const current = await this.getThread(key);
          if (!current) return undefined;
          const updated = change(current);
          if (!updated) return current;
          const stamped = { ...updated, updatedAt: Date.now() };
          await this.putThread(stamped);
          return stamped;
        }),
      );
    this.#locks.set(k, next);
    void next
      .catch(() => undefined)
      .finally(() => {
        if (this.#locks.get(k) === next) this.#locks.delete(k);
      });
    return next;
  }

  async #withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const key = this.#lease(name);
    const token = randomUUID();
    const deadline = Date.now() + LOCK_TTL_MS;
    for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
      if (await guard(() => this.#p.setIfAbsent(key, token, LOCK_TTL_MS))) break;
      if (Date.now() > deadline) throw new StoreUnavailableError(new Error(`lock ${name} is busy`));
      await delay(wait + Math.random() * wait);
    }
    try {
      return await fn();
    } finally {
      await this.#p.deleteIfHolds(key, token).catch(() => false);
    }
  }

  claimOnce(teamId: string, name: string, ttlMs: number): Promise<boolean> {
    return guard(() => this.#p.setIfAbsent(`${this.#ns}:claim:t:${teamId}:${name}`, "1", ttlMs));
  }

  acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return guard(() => this.#p.setIfAbsent(this.#lease(name), owner, ttlMs));
  }

  renewLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return guard(() => this.#p.renewIfHolds(this.#lease(name), owner, ttlMs));
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    await guard(() => this.#p.deleteIfHolds(this.#lease(name), owner));
  }

  async putRun(record: RunRecord): Promise<void> {
    await guard(() =>
      this.#p.putEntry(this.#run(record.runId), JSON.stringify(record), RUN_TTL_MS),
    );
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    const raw = await guard(() => this.#p.getEntry(this.#run(runId)));
    return raw === undefined ? undefined : (JSON.parse(raw) as RunRecord);
  }

  async deleteRun(runId: string): Promise<void> {
    await guard(async () => {
      await this.#p.deleteEntry(this.#run(runId));
      await this.#p.deleteEntry(this.#stop(runId));
    });
  }

  async requestStop(runId: string, userId: string): Promise<void> {
    await guard(() => this.#p.putEntry(this.#stop(runId), userId, RUN_TTL_MS));
  }

  stopRequester(runId: string): Promise<string | undefined> {
    return guard(() => this.#p.getEntry(this.#stop(runId)));
  }

  async listRuns(): Promise<RunRecord[]> {
    const values = await guard(() => this.#p.entries(this.#run("")));
    return values.map((v) => JSON.parse(v) as RunRecord);
  }

  ping(): Promise<boolean> {
    return this.#p.ping().catch(() => false);
  }

  close(): Promise<void> {
    return this.#p.close();
  }
}

/** The embedded store: one SQLite file under `dataDir`, nothing to install. */
export function createSqliteStore(
  path: string,
  report: (err: unknown) => void = () => {},
  namespace = DEFAULT_NAMESPACE,
): ThreadStore {
  const adapter = new SqliteKeyvAdapter(path);
  const keyv = new Keyv<ThreadRecord>({
    store: adapter,
    namespace,
    throwOnErrors: true,
  });
  keyv.on("error", report);
  const sweep = setInterval(() => adapter.purgeExpired(), 10 * 60_000);
  sweep.unref();
  return new KeyvThreadStore(
    keyv,
    {
      setIfAbsent: (k, v, ttl) => adapter.setIfAbsent(k, v, ttl),
      renewIfHolds: (k, v, ttl) => adapter.renewIfHolds(k, v, ttl),
      deleteIfHolds: (k, v) => adapter.deleteIfHolds(k, v),
      putEntry: async (k, v, ttl) => {
        await adapter.set(k, v, ttl);
      },
      getEntry: async (k) => (await adapter.get<string>(k)) as string | undefined,
      deleteEntry: async (k) => {
        await adapter.delete(k);
      },
      entries: async (prefix) => (await adapter.entries(prefix)).map(([, v]) => v),
      ping: async () => {
        await adapter.get("__ping__");
        return true;
      },
      close: async () => {
        clearInterval(sweep);
        await adapter.disconnect();
      },
    },
    namespace,
  );
}

export const defaultSqlitePath = (dataDir: string) => join(dataDir, "taskbot.sqlite");

// Compare-and-set scripts: a lease is only renewed or released by the instance that holds it.
const RENEW_IF_HOLDS = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
const DELETE_IF_HOLDS = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/** Shared state for several instances: Redis through @keyv/redis. */
export function createRedisStore(
  url: string,
  report: (err: unknown) => void = () => {},
  namespace = DEFAULT_NAMESPACE,
): ThreadStore {
  // Fail fast while Redis is unreachable (no offline queue), reconnect in the background.
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 2000,
      reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2000),
    },
  });
  client.on("error", report);
  const adapter = new KeyvRedis<ThreadRecord>(client, {
    throwOnConnectError: true,
    throwOnErrors: true,
    connectionTimeout: 2000,
  });
  adapter.on("error", report);
  const keyv = new Keyv<ThreadRecord>({
    store: adapter,
    namespace,
    throwOnErrors: true,
  });
  keyv.on("error", report);
  let opening: Promise<unknown> | undefined;
  /** One wait for "ready" shared by every call made meanwhile (not one listener per call). */
  let waiting: Promise<void> | undefined;
  const waitReady = async () => {
    if (!client.isOpen) {
      opening = client.connect().catch(report);
    }
    const stop = new AbortController();
    try {
      await Promise.race([
        opening,
        once(client, "ready", { signal: stop.signal }),
        delay(2000, undefined, { signal: stop.signal }),
      ]);
    } catch {
      // aborted waits
    } finally {
      stop.abort();
    }
  };
  /** The client once ready; within 2 s or a StoreUnavailableError (never an endless wait). */
  const connected = async () => {
    if (client.isReady) return client;
    waiting ??= waitReady().finally(() => {
      waiting = undefined;
    });
    await waiting;
    if (!client.isReady) throw new Error("Redis is not reachable");
    return client;
  };
  const runsHash = `${namespace}:runs`;
  return new KeyvThreadStore(
    keyv,
    {
      setIfAbsent: async (k, v, ttl) =>
        (await (await connected()).set(k, v, { NX: true, PX: Math.max(1, Math.round(ttl)) })) ===
        "OK",
      renewIfHolds: async (k, v, ttl) =>
        Number(
          await (
            await connected()
          ).eval(RENEW_IF_HOLDS, {
            keys: [k],
            arguments: [v, String(Math.max(1, Math.round(ttl)))],
          }),
        ) === 1,
      deleteIfHolds: async (k, v) =>
        Number(await (await connected()).eval(DELETE_IF_HOLDS, { keys: [k], arguments: [v] })) ===
        1,
      // The run index is one hash, so listing it is one command, not a key scan.
      putEntry: async (k, v) => {
        await (await connected()).hSet(runsHash, k, v);
      },
      getEntry: async (k) => (await (await connected()).hGet(runsHash, k)) ?? undefined,
      deleteEntry: async (k) => {
        await (await connected()).hDel(runsHash, k);
      },
      entries: async (prefix) =>
        Object.entries(await (await connected()).hGetAll(runsHash))
          .filter(([k]) => k.startsWith(prefix))
          .map(([, v]) => v),
      ping: async () => (await (await connected()).ping()) === "PONG",
      close: async () => {
        if (client.isOpen) await client.close();
      },
    },
    namespace,
  );
}

/** The fake: the same store on keyv's in-memory map (no persistence). */
export function createMemoryStore(namespace = DEFAULT_NAMESPACE): ThreadStore {
  const keyv = new Keyv<ThreadRecord>({ namespace });
  const entries = new Map<string, { value: string; until: number }>();
  const live = (k: string) => {
    const e = entries.get(k);
    if (e && e.until <= Date.now()) entries.delete(k);
    return entries.get(k);
  };
  return new KeyvThreadStore(
    keyv,
    {
      setIfAbsent: async (k, v, ttl) => {
        if (live(k)) return false;
        entries.set(k, { value: v, until: Date.now() + ttl });
        return true;
      },
      renewIfHolds: async (k, v, ttl) => {
        const e = live(k);
        if (e?.value !== v) return false;
        e.until = Date.now() + ttl;
        return true;
      },
      deleteIfHolds: async (k, v) => live(k)?.value === v && entries.delete(k),
      putEntry: async (k, v, ttl) => {
        entries.set(k, { value: v, until: Date.now() + ttl });
      },
      getEntry: async (k) => live(k)?.value,
      deleteEntry: async (k) => {
        entries.delete(k);
      },
      entries: async (prefix) =>
        [...entries.keys()]
          .filter((k) => k.startsWith(prefix) && live(k))
          .map((k) => live(k)?.value ?? ""),
      ping: async () => true,
      close: async () => {},
    },
    namespace,
  );
}
