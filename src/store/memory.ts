/** The in-memory store for unit tests: the same store on keyv's map, nothing persisted. */
import { Keyv } from "keyv";
import {
  DEFAULT_NAMESPACE,
  iteratedKeys,
  KeyvThreadStore,
  type StoreOptions,
} from "./keyv-store.ts";
import type { ThreadRecord, ThreadStore } from "./types.ts";

/** The fake: the same store on keyv's in-memory map (no persistence). */
export function createMemoryStore(options: StoreOptions = {}): ThreadStore {
  const keyv = new Keyv<ThreadRecord>({ namespace: options.namespace ?? DEFAULT_NAMESPACE });
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
      recordKeys: (prefix) => iteratedKeys(keyv, prefix),
      ping: async () => true,
      close: async () => {},
    },
    options,
  );
}
