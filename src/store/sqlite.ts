/**
 * The embedded store: one SQLite file on Node's built-in `node:sqlite`, nothing to install. Its
 * Keyv adapter is written here because @keyv/sqlite needs the native `sqlite3` build.
 */
import { EventEmitter } from "node:events";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname, join } from "node:path";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { Keyv, type KeyvStoreAdapter, type StoredData } from "keyv";
import {
  DEFAULT_NAMESPACE,
  KeyvThreadStore,
  type Primitives,
  type StoreOptions,
} from "./keyv-store.ts";
import { decideRate, parseLog, type RateCount, type RateRefusal } from "./rate-window.ts";
import type { StampedRecord } from "./record-format.ts";
import type { ThreadStore } from "./types.ts";

export function createSqliteStore(
  path: string,
  report: (err: unknown) => void = () => {},
  options: StoreOptions = {},
): ThreadStore {
  const namespace = options.namespace ?? DEFAULT_NAMESPACE;
  const adapter = new SqliteKeyvAdapter(path, namespace);
  const keyv = new Keyv<StampedRecord>({ store: adapter, namespace, throwOnErrors: true });
  keyv.on("error", report);
  return new KeyvThreadStore(keyv, adapter, options);
}

export const defaultSqlitePath = (dataDir: string) => join(dataDir, "taskbot.sqlite");

/** Directory 0700, files 0600 (sealed secrets, what people asked); an existing directory stays. */
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

/** keyv's adapter, and the store's atomic operations on the same table. */
export class SqliteKeyvAdapter extends EventEmitter implements KeyvStoreAdapter, Primitives {
  opts: { path: string; dialect: "sqlite" };
  namespace?: string | undefined;
  /** keyv's rows are `<namespace>:<key>` (the atomic entries use other prefixes). */
  readonly #records: string;
  readonly #sweep: NodeJS.Timeout;
  readonly #db: DatabaseSync;
  /** Prepared once: leases are renewed and released for every run, every few seconds. */
  readonly #statements = new Map<string, StatementSync>();

  constructor(path: string, namespace = DEFAULT_NAMESPACE) {
    super();
    this.#records = `${namespace}:`;
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
    // SQLite gives the -wal and -shm files it creates the database file's mode; older ones too.
    if (path !== ":memory:") keepPrivate(path);
    // Reads drop expired rows lazily; the others go every 10 minutes.
    this.#sweep = setInterval(() => this.#sql(PURGE).run(Date.now()), 10 * 60_000);
    this.#sweep.unref();
  }

  #sql(sql: string): StatementSync {
    const prepared = this.#statements.get(sql) ?? this.#db.prepare(sql);
    this.#statements.set(sql, prepared);
    return prepared;
  }

  /** Whether a write changed exactly one row. */
  #one(sql: string, ...params: SQLInputValue[]): boolean {
    return Number(this.#sql(sql).run(...params).changes) === 1;
  }

  #read(key: string): string | undefined {
    const row = this.#sql("SELECT value, expires FROM keyv WHERE key = ?").get(key) as
      { value: string; expires: number | null } | undefined;
    if (!row) return undefined;
    if (row.expires !== null && row.expires <= Date.now()) {
      this.#sql(DELETE).run(key);
      return undefined;
    }
    return row.value;
  }

  async get<Value>(key: string): Promise<StoredData<Value> | undefined> {
    return this.#read(key) as StoredData<Value> | undefined;
  }

  async set(key: string, value: unknown, ttl?: number): Promise<boolean> {
    const expires = typeof ttl === "number" && ttl > 0 ? Date.now() + ttl : null;
    this.#sql(UPSERT).run(key, String(value), expires);
    return true;
  }

  /** Atomic: SQLite serialises writers. */
  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    this.#sql(`${DELETE} AND expires IS NOT NULL AND expires <= ?`).run(key, now);
    const insert =
      "INSERT INTO keyv (key, value, expires) VALUES (?, ?, ?) ON CONFLICT(key) DO NOTHING";
    return this.#one(insert, key, value, ttlMs > 0 ? now + ttlMs : null);
  }

  /** IMMEDIATE takes the write lock at once (another process waits). */
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
          this.#sql(UPSERT).run(key, JSON.stringify(decided.logs[i]), expires),
        );
      }
      this.#db.exec("COMMIT");
      return decided.refusal;
    } catch (err) {
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      throw err;
    }
  }

  async renewIfHolds(key: string, value: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    return this.#one(
      `UPDATE keyv SET expires = ? ${WHERE_LIVE} AND value = ?`,
      now + ttlMs,
      key,
      now,
      value,
    );
  }

  async deleteIfHolds(key: string, value: string): Promise<boolean> {
    return this.#one(`${DELETE} AND value = ?`, key, value);
  }

  async putEntry(key: string, value: string, ttlMs: number): Promise<void> {
    await this.set(key, value, ttlMs);
  }

  async replaceEntry(key: string, value: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    return this.#one(
      `UPDATE keyv SET value = ?, expires = ? ${WHERE_LIVE}`,
      value,
      now + ttlMs,
      key,
      now,
    );
  }

  async getEntry(key: string): Promise<string | undefined> {
    return this.#read(key);
  }

  async deleteEntry(key: string): Promise<void> {
    this.#sql(DELETE).run(key);
  }

  async deleteEntryIfSame(key: string, value: string, also: readonly string[]): Promise<boolean> {
    if (!(await this.deleteIfHolds(key, value))) return false;
    await this.deleteKeys(also);
    return true;
  }

  async entries(prefix: string): Promise<Array<[string, string]>> {
    const like = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const rows = this.#sql(
      "SELECT key, value FROM keyv WHERE key LIKE ? ESCAPE '\\' AND (expires IS NULL OR expires > ?)",
    ).all(like, Date.now()) as Array<{ key: string; value: string }>;
    return rows.map((r) => [r.key, r.value]);
  }

  async deleteKeys(keys: readonly string[]): Promise<void> {
    for (const k of keys) this.#sql(DELETE).run(k);
  }

  async deletePrefix(prefix: string): Promise<void> {
    if (prefix === "") throw new Error("refusing to delete every key");
    // Keys compare as UTF-8 bytes: the prefix with its last character raised bounds them all (a
    // range on the primary key's index, not a LIKE scan of the whole table).
    const last = prefix.codePointAt(prefix.length - 1) ?? 0;
    const end = prefix.slice(0, -1) + String.fromCodePoint(last + 1);
    this.#sql("DELETE FROM keyv WHERE key >= ? AND key < ?").run(prefix, end);
  }

  async deleteRecords(prefix: string): Promise<void> {
    await this.deletePrefix(`${this.#records}${prefix}`);
  }

  async recordKeys(prefix: string): Promise<string[]> {
    const rows = await this.entries(`${this.#records}${prefix}`);
    return rows.map(([key]) => key.slice(this.#records.length));
  }

  async ping(): Promise<boolean> {
    this.#read("__ping__");
    return true;
  }

  async delete(key: string): Promise<boolean> {
    return Number(this.#sql(DELETE).run(key).changes) > 0;
  }

  async deleteMany(keys: string[]): Promise<boolean> {
    return keys.map((k) => Number(this.#sql(DELETE).run(k).changes) > 0).includes(true);
  }

  async clear(): Promise<void> {
    if (this.namespace) await this.deletePrefix(`${this.namespace}:`);
    else this.#db.exec("DELETE FROM keyv");
  }

  async disconnect(): Promise<void> {
    clearInterval(this.#sweep);
    if (this.#db.isOpen) this.#db.close();
  }

  close(): Promise<void> {
    return this.disconnect();
  }
}

const DELETE = "DELETE FROM keyv WHERE key = ?";
const UPSERT =
  "INSERT INTO keyv (key, value, expires) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, expires = excluded.expires";
const WHERE_LIVE = "WHERE key = ? AND (expires IS NULL OR expires > ?)";
const PURGE = "DELETE FROM keyv WHERE expires IS NOT NULL AND expires <= ?";
