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

export interface ServiceKeyStore {
  get(teamId: string): Promise<ServiceKeyState>;
  /** Seals and stores the key; resolves with its last four characters (`…abcd`). */
  set(teamId: string, key: string, by: string): Promise<string>;
  delete(teamId: string): Promise<void>;
  /** Seals every stored key with the first encryption key. */
  resealAll(): Promise<ResealReport>;
}

const SUFFIX = ":service-key";
const recordKey = (teamId: string) => `t:${teamId}${SUFFIX}`;

const StoredKey = z.object({
  box: z.string().min(1),
  lastFour: z.string(),
  setBy: z.string(),
  setAt: z.number(),
});
type StoredKey = z.infer<typeof StoredKey>;

/**
 * The keys on the store's records. `resealAll` scans the record keys rather than keep an index
 * of workspaces: one more record to keep in step, and a key it missed would stay on an old key.
 */
export function createServiceKeyStore(
  records: RecordStore,
  keys: readonly SealingKey[],
  now: () => number = Date.now,
): ServiceKeyStore {
  const read = async (at: string): Promise<StoredKey | "malformed" | undefined> => {
    const raw = await records.getRecord(at);
    if (raw === undefined || raw === null) return undefined;
    const parsed = StoredKey.safeParse(raw);
    return parsed.success ? parsed.data : "malformed";
  };

  return {
    async get(teamId) {
      const stored = await read(recordKey(teamId));
      if (stored === undefined) return { state: "none" };
      if (stored === "malformed") {
        return { state: "unreadable", why: "not a key's record", lastFour: undefined };
      }
      const { lastFour: four, setBy, setAt } = stored;
      try {
        const key = open(stored.box, keys, recordKey(teamId));
        return { state: "set", key, lastFour: four, setBy, setAt };
      } catch (err) {
        if (!(err instanceof SecretBoxError)) throw err;
        return { state: "unreadable", why: err.message, lastFour: four, setBy, setAt };
      }
    },

    async set(teamId, key, by) {
      const four = lastFour(key);
      const at = recordKey(teamId);
      const record: StoredKey = {
        box: seal(key, keys, at),
        lastFour: four,
        setBy: by,
        setAt: now(),
      };
      await records.putRecord(at, record);
      return four;
    },

    async delete(teamId) {
      await records.deleteRecord(recordKey(teamId));
    },

    async resealAll() {
      const counts = { resealed: 0, current: 0, unreadable: 0 };
      const found = (await records.recordKeys("t:")).filter((k) => k.endsWith(SUFFIX));
      for (const at of found) {
        const stored = await read(at);
        if (stored === undefined) continue; // deleted meanwhile
        if (stored === "malformed") {
          counts.unreadable++;
          continue;
        }
        let box: string;
        try {
          box = reseal(stored.box, keys, at);
        } catch (err) {
          if (!(err instanceof SecretBoxError)) throw err;
          counts.unreadable++;
          continue;
        }
        if (box === stored.box) {
          counts.current++;
          continue;
        }
        // An admin who saved a new key meanwhile keeps it (it is sealed with the first key).
        const again = await read(at);
        if (again === undefined || again === "malformed" || again.box !== stored.box) continue;
        await records.putRecord(at, { ...stored, box });
        counts.resealed++;
      }
      return counts;
    },
  };
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
