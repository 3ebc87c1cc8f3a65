import { Keyv } from "keyv";
import {
  DEFAULT_NAMESPACE,
  iteratedKeys,
  KeyvThreadStore,
  type StoreOptions,
} from "../../../src/store/keyv-store.ts";
import { decideRate, parseLog } from "../../../src/store/rate-window.ts";
import type { StampedRecord } from "../../../src/store/record-format.ts";
import type { ThreadStore } from "../../../src/store/types.ts";

/** The maps the memory store keeps everything in (a test may pass its own, to look inside). */
export interface MemoryMaps {
  /** keyv's records, by `<namespace>:<key>`. */
  readonly records: Map<string, unknown>;
  /** The atomic operations' keys: claims, leases, the run index. */
  readonly entries: Map<string, { value: string; until: number }>;
}

/** The store for unit tests: the same store on keyv's in-memory map, nothing persisted. */
export function createMemoryStore(
  options: StoreOptions & { readonly maps?: MemoryMaps } = {},
): ThreadStore {
  const namespace = options.namespace ?? DEFAULT_NAMESPACE;
  const records = options.maps?.records ?? new Map<string, unknown>();
  const keyv = new Keyv<StampedRecord>({ store: records, namespace });
  const entries = options.maps?.entries ?? new Map<string, { value: string; until: number }>();
  const dropPrefix = (map: Map<string, unknown>, prefix: string) => {
    for (const k of [...map.keys()]) if (k.startsWith(prefix)) map.delete(k);
  };
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
      // Read, decided and written with no await between: atomic, as one transaction is.
      consumeRate: async (counts, windowMs, now) => {
        const logs = counts.map(({ key }) => parseLog(live(key)?.value));
        const decided = decideRate(counts, logs, windowMs, now);
        if (!decided.refusal) {
          const until = Date.now() + windowMs;
          counts.forEach(({ key }, i) => {
            entries.set(key, { value: JSON.stringify(decided.logs[i]), until });
          });
        }
        return decided.refusal;
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
      replaceEntry: async (k, v, ttl) => {
        if (!live(k)) return false;
        entries.set(k, { value: v, until: Date.now() + ttl });
        return true;
      },
      getEntry: async (k) => live(k)?.value,
      deleteEntry: async (k) => {
        entries.delete(k);
      },
      deleteEntryIfSame: async (k, v, also) => {
        if (live(k)?.value !== v) return false;
        for (const key of [k, ...also]) entries.delete(key);
        return true;
      },
      entries: async (prefix) =>
        [...entries.keys()].flatMap((k): Array<[string, string]> => {
          const e = k.startsWith(prefix) ? live(k) : undefined;
          return e ? [[k, e.value]] : [];
        }),
      deleteKeys: async (keys) => {
        for (const k of keys) entries.delete(k);
      },
      deletePrefix: async (prefix) => dropPrefix(entries, prefix),
      deleteRecords: async (prefix) => dropPrefix(records, `${namespace}:${prefix}`),
      recordKeys: (prefix) => iteratedKeys(keyv, prefix),
      ping: async () => true,
      close: async () => {},
    },
    options,
  );
}
