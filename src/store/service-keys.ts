/**
 * Each workspace's own Task service API key, sealed at rest (util/secret-box.ts) in its record
 * `t:<team>:service-key` and bound to it (a copy in another record does not open), with its
 * last four characters, who set it and when. Nothing here logs a key or puts one in an error.
 */
import { z } from "zod";
import {
  lastFour,
  open,
  reseal,
  type SealingKey,
  SecretBoxError,
  seal,
  sealingKeys,
} from "../util/secret-box.ts";
import type { RecordStore } from "./types.ts";

/** What a workspace's key is: set (and readable), not set, or sealed with a key no longer listed. */
export type ServiceKeyState =
  | {
      readonly state: "set";
      readonly key: string;
      /** `…abcd`: all that may be shown of it. */
      readonly lastFour: string;
      readonly setBy: string;
      /** Milliseconds since the epoch. */
      readonly setAt: number;
    }
  | { readonly state: "none" }
  | {
      /** Not a box this app opens, or not a key's record: never used, it must be set again. */
      readonly state: "unreadable";
      /** Why, for the log (never the value). */
      readonly why: string;
      readonly lastFour: string | undefined;
      readonly setBy?: string | undefined;
      readonly setAt?: number | undefined;
    };

/** What re-sealing every stored key with the first encryption key did; unreadable ones are left. */
export interface ResealReport {
  readonly resealed: number;
  readonly current: number;
  readonly unreadable: number;
}

export type ServiceKeyStore = ReturnType<typeof createServiceKeyStore>;

const SUFFIX = ":service-key";
const recordKey = (teamId: string) => `t:${teamId}${SUFFIX}`;

const StoredKey = z.object({
  box: z.string().min(1),
  lastFour: z.string(),
  setBy: z.string(),
  setAt: z.number(),
});

/**
 * The keys on the store's records. `resealAll` scans the record keys rather than keep an index
 * of workspaces: one more record to keep in step, and a key it missed would stay on an old key.
 */
export function createServiceKeyStore(
  records: RecordStore,
  keys: readonly SealingKey[],
  now: () => number = Date.now,
) {
  return {
    async get(teamId: string): Promise<ServiceKeyState> {
      const raw = await records.getRecord(recordKey(teamId));
      if (raw === undefined || raw === null) return { state: "none" };
      const parsed = StoredKey.safeParse(raw);
      if (!parsed.success) {
        return { state: "unreadable", why: "not a key's record", lastFour: undefined };
      }
      const stored = parsed.data;
      const { lastFour: four, setBy, setAt } = stored;
      try {
        const key = open(stored.box, keys, recordKey(teamId));
        return { state: "set", key, lastFour: four, setBy, setAt };
      } catch (err) {
        if (!(err instanceof SecretBoxError)) throw err;
        return { state: "unreadable", why: err.message, lastFour: four, setBy, setAt };
      }
    },

    /** Seals and stores the key; resolves with its last four characters (`…abcd`). */
    async set(teamId: string, key: string, by: string): Promise<string> {
      const four = lastFour(key);
      const at = recordKey(teamId);
      await records.putRecord(at, {
        box: seal(key, keys, at),
        lastFour: four,
        setBy: by,
        setAt: now(),
      });
      return four;
    },

    async delete(teamId: string): Promise<void> {
      await records.deleteRecord(recordKey(teamId));
    },

    /** Seals every stored key with the first encryption key. */
    async resealAll(): Promise<ResealReport> {
      const found = (await records.recordKeys("t:")).filter((k) => k.endsWith(SUFFIX));
      return resealRecords(records, found, (raw, at) => {
        const stored = StoredKey.safeParse(raw);
        if (!stored.success) throw new SecretBoxError("not a key's record");
        const box = reseal(stored.data.box, keys, at);
        return box === stored.data.box ? raw : { ...stored.data, box };
      });
    },
  };
}

/**
 * Each record at `found` with its secrets sealed again by `resealRecord` (which throws a
 * SecretBoxError when they do not open: counted unreadable, left as they are).
 */
export async function resealRecords(
  records: RecordStore,
  found: readonly string[],
  resealRecord: (raw: unknown, at: string) => unknown,
): Promise<ResealReport> {
  const counts = { resealed: 0, current: 0, unreadable: 0 };
  for (const at of found) {
    const raw = await records.getRecord(at);
    if (raw === undefined || raw === null) continue; // deleted meanwhile
    let sealed: unknown;
    try {
      sealed = resealRecord(raw, at);
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
      counts.unreadable++;
      continue;
    }
    const before = JSON.stringify(raw);
    if (JSON.stringify(sealed) === before) {
      counts.current++;
      continue;
    }
    // Written meanwhile (a new key, a reinstall, a token refresh): sealed with the first key, kept.
    if (JSON.stringify(await records.getRecord(at)) !== before) continue;
    await records.putRecord(at, sealed);
    counts.resealed++;
  }
  return counts;
}

/** The store sealing with these keys (base64, the first seals), or none when none is set. */
export function serviceKeyStoreFor(
  records: RecordStore,
  base64Keys: readonly string[],
): ServiceKeyStore | undefined {
  return base64Keys.length === 0
    ? undefined
    : createServiceKeyStore(records, sealingKeys(base64Keys));
}
