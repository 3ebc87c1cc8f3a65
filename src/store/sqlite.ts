/**
 * The embedded store: one SQLite file on Node's built-in `node:sqlite`, nothing to install. Its
 * Keyv adapter is written here because @keyv/sqlite needs the native `sqlite3` build; it has the
 * atomic operations the store needs (setIfAbsent…).
 */
import { EventEmitter } from "node:events";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname, join } from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { Keyv, type KeyvStoreAdapter, type StoredData } from "keyv";
import { DEFAULT_NAMESPACE, KeyvThreadStore, type StoreOptions } from "./keyv-store.ts";
import { decideRate, parseLog, type RateCount, type RateRefusal } from "./rate-window.ts";
import type { StampedRecord } from "./record-format.ts";
import type { ThreadStore } from "./types.ts";

export function createSqliteStore(
  path: string,
  report: (err: unknown) => void = () => {},
  options: StoreOptions = {},
): ThreadStore {
  const adapter = new SqliteKeyvAdapter(path);
  const namespace = options.namespace ?? DEFAULT_NAMESPACE;
  const keyv = new Keyv<StampedRecord>({ store: adapter, namespace, throwOnErrors: true });
  keyv.on("error", report);
  const sweep = setInterval(() => adapter.purgeExpired(), 10 * 60_000);
  sweep.unref();
  return new KeyvThreadStore(
    keyv,
    {
      setIfAbsent: (k, v, ttl) => adapter.setIfAbsent(k, v, ttl),
      consumeRate: (counts, windowMs, now) => adapter.consumeRate(counts, windowMs, now),
      renewIfHolds: (k, v, ttl) => adapter.renewIfHolds(k, v, ttl),
      deleteIfHolds: (k, v) => adapter.deleteIfHolds(k, v),
      putEntry: async (k, v, ttl) => {
        await adapter.set(k, v, ttl);
      },
      replaceEntry: (k, v, ttl) => adapter.replaceIfLive(k, v, ttl),
      getEntry: async (k) => (await adapter.get<string>(k)) as string | undefined,
      deleteEntry: async (k) => {
        await adapter.delete(k);
      },
      deleteEntryIfSame: async (k, v, also) => {
        if (!(await adapter.deleteIfHolds(k, v))) return false;
        await adapter.deleteMany([...also]);
        return true;
      },
      entries: (prefix) => adapter.entries(prefix),
      deleteKeys: async (keys) => {
        await adapter.deleteMany([...keys]);
      },
      deletePrefix: async (prefix) => {
        await adapter.deletePrefix(prefix);
      },
      // keyv names its rows `<namespace>:<key>` (the atomic entries use other prefixes).
      deleteRecords: async (prefix) => {
        await adapter.deletePrefix(`${namespace}:${prefix}`);
      },
      recordKeys: async (prefix) => {
        const ns = `${namespace}:`;
        return (await adapter.entries(`${ns}${prefix}`)).map(([key]) => key.slice(ns.length));
      },
      ping: async () => {
        await adapter.get("__ping__");
        return true;
      },
      close: async () => {
        clearInterval(sweep);
        await adapter.disconnect();
      },
    },
    options,
  );
}

export const defaultSqlitePath = (dataDir: string) => join(dataDir, "taskbot.sqlite");

/**
 * The data directory (created 0700) and database files (0600) are the app's alone: sealed
 * secrets, everything people asked. An existing directory (a mounted volume) is left as it is.
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  closeSync(openSync(path, "a", 0o600));
  chmodSync(path, 0o600);
}

function keepPrivate(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(file)) chmodSync(file, 0o600);
  }
}

export class SqliteKeyvAdapter extends EventEmitter implements KeyvStoreAdapter {
  opts: { path: string; dialect: "sqlite" };
  namespace?: string | undefined;
  readonly #db: DatabaseSync;
  readonly #get: StatementSync;
  readonly #set: StatementSync;
  readonly #insert: StatementSync;
  readonly #del: StatementSync;
  readonly #purgeKey: StatementSync;
  readonly #renew: StatementSync;
  readonly #delIfHolds: StatementSync;
  readonly #entries: StatementSync;
  readonly #replace: StatementSync;
  readonly #delRange: StatementSync;

  constructor(path: string) {
    super();
    if (path !== ":memory:") createPrivately(path);
    this.opts = { path, dialect: "sqlite" };
    this.#db = new DatabaseSync(path);
    this.#db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = NORMAL;
      PRAGMA busy_timeout = 5000;
      CREATE TABLE IF NOT EXISTS keyv (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires INTEGER);
      CREATE INDEX IF NOT EXISTS keyv_expires ON keyv (expires) WHERE expires IS NOT NULL;
    `);
    this.#get = this.#db.prepare("SELECT value, expires FROM keyv WHERE key = ?");
    this.#set = this.#db.prepare(
      "INSERT INTO keyv (key, value, expires) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, expires = excluded.expires",
    );
    this.#insert = this.#db.prepare(
      "INSERT INTO keyv (key, value, expires) VALUES (?, ?, ?) ON CONFLICT(key) DO NOTHING",
    );
    this.#del = this.#db.prepare("DELETE FROM keyv WHERE key = ?");
    this.#purgeKey = this.#db.prepare(
      "DELETE FROM keyv WHERE key = ? AND expires IS NOT NULL AND expires <= ?",
    );
    // Prepared once: leases are renewed and released for every run, every few seconds.
    this.#renew = this.#db.prepare(
      "UPDATE keyv SET expires = ? WHERE key = ? AND value = ? AND (expires IS NULL OR expires > ?)",
    );
    this.#delIfHolds = this.#db.prepare("DELETE FROM keyv WHERE key = ? AND value = ?");
    this.#entries = this.#db.prepare(
      "SELECT key, value FROM keyv WHERE key LIKE ? ESCAPE '\\' AND (expires IS NULL OR expires > ?)",
    );
    this.#replace = this.#db.prepare(
      "UPDATE keyv SET value = ?, expires = ? WHERE key = ? AND (expires IS NULL OR expires > ?)",
    );
    // A range on the primary key (its index), not a LIKE scan of the whole table.
    this.#delRange = this.#db.prepare("DELETE FROM keyv WHERE key >= ? AND key < ?");
    // SQLite gives the -wal and -shm files it creates the database file's mode; older ones too.
    if (path !== ":memory:") keepPrivate(path);
  }

  #read(key: string): string | undefined {
    const row = this.#get.get(key) as { value: string; expires: number | null } | undefined;
    if (!row) return undefined;
    if (row.expires !== null && row.expires <= Date.now()) {
      this.#del.run(key);
      return undefined;
    }
    return row.value;
  }

  async get<Value>(key: string): Promise<StoredData<Value> | undefined> {
    return this.#read(key) as StoredData<Value> | undefined;
  }

  async set(key: string, value: unknown, ttl?: number): Promise<boolean> {
    const expires = typeof ttl === "number" && ttl > 0 ? Date.now() + ttl : null;
    this.#set.run(key, String(value), expires);
    return true;
  }

  /** Stores `value` only if `key` holds nothing live. Atomic: SQLite serialises writers. */
  async setIfAbsent(key: string, value: string, ttlMs?: number): Promise<boolean> {
    const now = Date.now();
    this.#purgeKey.run(key, now);
    const expires = typeof ttlMs === "number" && ttlMs > 0 ? now + ttlMs : null;
    return Number(this.#insert.run(key, value, expires).changes) === 1;
  }

  /**
   * One request counted in every log of `counts`, or in none (rate-window.ts): one synchronous
   * transaction; IMMEDIATE takes the write lock at once, so another process waits for it.
   */
  async consumeRate(
    counts: readonly RateCount[],
    windowMs: number,
    now: number,
  ): Promise<RateRefusal> {
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      const logs = counts.map(({ key }) => parseLog(this.#read(key)));
      const decided = decideRate(counts, logs, windowMs, now);
      if (!decided.refusal) {
        const expires = Date.now() + windowMs;
        counts.forEach(({ key }, i) =>
          this.#set.run(key, JSON.stringify(decided.logs[i]), expires),
        );
      }
      this.#db.exec("COMMIT");
      return decided.refusal;
    } catch (err) {
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      throw err;
    }
  }

  /** Extends `key`'s expiry if it still holds `value` (a lease renewal). */
  async renewIfHolds(key: string, value: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    return Number(this.#renew.run(now + ttlMs, key, value, now).changes) === 1;
  }

  /** Rewrites `key` only while it holds something live; false when it does not. */
  async replaceIfLive(key: string, value: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    return Number(this.#replace.run(value, now + ttlMs, key, now).changes) === 1;
  }

  /** Deletes every row whose key starts with `prefix` (which must not be empty). */
  async deletePrefix(prefix: string): Promise<number> {
    if (prefix === "") throw new Error("refusing to delete every key");
    // Keys compare as UTF-8 bytes: the prefix with its last character raised bounds them all.
    const last = prefix.codePointAt(prefix.length - 1) ?? 0;
    const end = prefix.slice(0, -1) + String.fromCodePoint(last + 1);
    return Number(this.#delRange.run(prefix, end).changes);
  }

  /** Deletes `key` only if it holds `value` (releasing one's own lease). */
  async deleteIfHolds(key: string, value: string): Promise<boolean> {
    return Number(this.#delIfHolds.run(key, value).changes) === 1;
  }

  /** Live entries whose key starts with `prefix`. */
  async entries(prefix: string): Promise<Array<[string, string]>> {
    const like = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const rows = this.#entries.all(like, Date.now()) as Array<{ key: string; value: string }>;
    return rows.map((r) => [r.key, r.value]);
  }

  async delete(key: string): Promise<boolean> {
    return Number(this.#del.run(key).changes) > 0;
  }

  async deleteMany(keys: string[]): Promise<boolean> {
    let any = false;
    for (const k of keys) any = (await this.delete(k)) || any;
    return any;
  }

  async clear(): Promise<void> {
    if (this.namespace) await this.deletePrefix(`${this.namespace}:`);
    else this.#db.exec("DELETE FROM keyv");
  }

  /** Removes expired rows (called now and then; reads also drop expired rows lazily). */
  purgeExpired(): number {
    return Number(
      this.#db
        .prepare("DELETE FROM keyv WHERE expires IS NOT NULL AND expires <= ?")
        .run(Date.now()).changes,
    );
  }

  async disconnect(): Promise<void> {
    if (this.#db.isOpen) this.#db.close();
  }
}
