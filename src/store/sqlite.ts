import { join } from "node:path";
import { Keyv } from "keyv";
import { DEFAULT_NAMESPACE, KeyvThreadStore, type StoreOptions } from "./keyv-store.ts";
import { SqliteKeyvAdapter } from "./sqlite-adapter.ts";
import type { StampedRecord } from "./record-format.ts";
import type { ThreadStore } from "./types.ts";

/** The embedded store: one SQLite file (Node's built-in node:sqlite), nothing to install. */
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
