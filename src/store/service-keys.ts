/**
 * Each workspace's own Task service API key, sealed and bound to `t:<team>:service-key`, with its
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

export type ServiceKeyState =
  | {
      readonly state: "set";
      readonly key: string;
      /** `…abcd`: all that may be shown of it. */
      readonly lastFour: string;
      readonly setBy: string;
      readonly setAt: number; // ms since the epoch
    }
  | { readonly state: "none" }
  | {
      /** Never used: it must be set again. `why` is for the log (never the value). */
      readonly state: "unreadable";
      readonly why: string;
      readonly lastFour: string | undefined;
      readonly setBy?: string | undefined;
      readonly setAt?: number | undefined;
    };

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

/** `resealAll` scans the records, not an index of workspaces one more record would keep in step. */
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
      const { box, lastFour: four, setBy, setAt } = parsed.data;
      try {
        const key = open(box, keys, recordKey(teamId));
        return { state: "set", key, lastFour: four, setBy, setAt };
      } catch (err) {
        if (!(err instanceof SecretBoxError)) throw err;
        return { state: "unreadable", why: err.message, lastFour: four, setBy, setAt };
      }
    },

    /** Resolves with its last four characters (`…abcd`). */
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

/** `resealRecord` throws a SecretBoxError when they do not open: counted unreadable, left. */
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

/** None when no encryption key is set. */
export function serviceKeyStoreFor(
  records: RecordStore,
  base64Keys: readonly string[],
): ServiceKeyStore | undefined {
  return base64Keys.length === 0
    ? undefined
    : createServiceKeyStore(records, sealingKeys(base64Keys));
}
