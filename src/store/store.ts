/**
 * The store of Slack thread → service conversation mappings, on keyv: embedded SQLite by
 * default, Redis (@keyv/redis) when REDIS_URL is set, memory for unit tests. Every key is
 * namespaced by Slack team, so workspaces never see each other's threads.
 */
import { join } from "node:path";
import KeyvRedis from "@keyv/redis";
import { Keyv } from "keyv";
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

/** The store boundary. */
export interface ThreadStore {
  getThread(key: SlackThreadKey): Promise<ThreadRecord | undefined>;
  putThread(record: ThreadRecord): Promise<void>;
  /**
   * Read-modify-write of one thread, serialised per thread in this process. `change`
   * returns the new record, or undefined to leave it as it is.
   */
  updateThread(
    key: SlackThreadKey,
    change: (current: ThreadRecord) => ThreadRecord | undefined,
  ): Promise<ThreadRecord | undefined>;
  /** True for the first caller only, for `ttlMs` (event and command dedupe). */
  claimOnce(teamId: string, name: string, ttlMs: number): Promise<boolean>;
  /** Whether the backing store answers. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

const THREAD_TTL_MS = 90 * 24 * 3600 * 1000;
const NAMESPACE = "taskbot";

const threadKey = (k: SlackThreadKey) => `t:${k.teamId}:thread:${k.channelId}:${k.threadTs}`;

type Claim = (key: string, ttlMs: number) => Promise<boolean>;

class KeyvThreadStore implements ThreadStore {
  readonly #keyv: Keyv<ThreadRecord>;
  readonly #claim: Claim;
  readonly #ping: () => Promise<boolean>;
  readonly #close: () => Promise<void>;
  readonly #locks = new Map<string, Promise<unknown>>();

  constructor(
    keyv: Keyv<ThreadRecord>,
    claim: Claim,
    ping: () => Promise<boolean>,
    close: () => Promise<void>,
  ) {
    this.#keyv = keyv;
    this.#claim = claim;
    this.#ping = ping;
    this.#close = close;
  }

  async getThread(key: SlackThreadKey): Promise<ThreadRecord | undefined> {
    return (await this.#keyv.get(threadKey(key))) ?? undefined;
  }

  async putThread(record: ThreadRecord): Promise<void> {
    const ok = await this.#keyv.set(threadKey(record), record, THREAD_TTL_MS);
    if (!ok) throw new Error("the store did not accept the write");
  }

  updateThread(
    key: SlackThreadKey,
    change: (current: ThreadRecord) => ThreadRecord | undefined,
  ): Promise<ThreadRecord | undefined> {
    const k = threadKey(key);
    const previous = this.#locks.get(k) ?? Promise.resolve();
    const next = previous
      .catch(() => undefined)
      .then(async () => {
        const current = await this.getThread(key);
        if (!current) return undefined;
        const updated = change(current);
        if (!updated) return current;
        const stamped = { ...updated, updatedAt: Date.now() };
        await this.putThread(stamped);
        return stamped;
      });
    this.#locks.set(k, next);
    void next.finally(() => {
      if (this.#locks.get(k) === next) this.#locks.delete(k);
    });
    return next;
  }

  claimOnce(teamId: string, name: string, ttlMs: number): Promise<boolean> {
    return this.#claim(`${NAMESPACE}:claim:t:${teamId}:${name}`, ttlMs);
  }

  ping(): Promise<boolean> {
    return this.#ping();
  }

  close(): Promise<void> {
    return this.#close();
  }
}

function onError(keyv: Keyv, report: (err: unknown) => void): void {
  keyv.on("error", report);
}

/** The embedded store: one SQLite file under `dataDir`, nothing to install. */
export function createSqliteStore(
  path: string,
  report: (err: unknown) => void = () => {},
): ThreadStore {
  const adapter = new SqliteKeyvAdapter(path);
  const keyv = new Keyv<ThreadRecord>({ store: adapter, namespace: NAMESPACE });
  onError(keyv, report);
  const sweep = setInterval(() => adapter.purgeExpired(), 10 * 60_000);
  sweep.unref();
  return new KeyvThreadStore(
    keyv,
    (key, ttl) => adapter.setIfAbsent(key, "1", ttl),
    async () => {
      try {
        await adapter.get("__ping__");
        return true;
      } catch {
        return false;
      }
    },
    async () => {
      clearInterval(sweep);
      await adapter.disconnect();
    },
  );
}

export const defaultSqlitePath = (dataDir: string) => join(dataDir, "taskbot.sqlite");

/** Shared state for several instances: Redis through @keyv/redis. */
export function createRedisStore(
  url: string,
  report: (err: unknown) => void = () => {},
): ThreadStore {
  const adapter = new KeyvRedis<ThreadRecord>(url, { throwOnConnectError: false });
  const keyv = new Keyv<ThreadRecord>({ store: adapter, namespace: NAMESPACE });
  onError(keyv, report);
  adapter.on("error", report);
  return new KeyvThreadStore(
    keyv,
    async (key, ttl) => {
      const client = (await adapter.getClient()) as unknown as {
        set(k: string, v: string, o: { NX: true; PX: number }): Promise<string | null>;
      };
      return (await client.set(key, "1", { NX: true, PX: Math.max(1, Math.round(ttl)) })) === "OK";
    },
    async () => {
      try {
        const client = (await adapter.getClient()) as unknown as { ping(): Promise<string> };
        return (await client.ping()) === "PONG";
      } catch {
        return false;
      }
    },
    () => adapter.disconnect(),
  );
}

/** The fake: the same store on keyv's in-memory map (no persistence). */
export function createMemoryStore(): ThreadStore {
  const keyv = new Keyv<ThreadRecord>({ namespace: NAMESPACE });
  const claims = new Map<string, number>();
  return new KeyvThreadStore(
    keyv,
    async (key, ttl) => {
      const now = Date.now();
      const until = claims.get(key);
      if (until !== undefined && until > now) return false;
      claims.set(key, now + ttl);
      return true;
    },
    async () => true,
    async () => {},
  );
}
