/**
 * Entries of the index of unfinished runs: a run record and the time the entry lapses unless
 * the run writes it again, stamped with the store's format version (record-format.ts).
 */
import { z } from "zod";
import { stamp, unstamp } from "./record-format.ts";
import { RunRecord, StopRequest } from "./types.ts";

/** The lease an instance holds while it relays a run (the store deletes it with the run's team). */
export const runLease = (runId: string) => `run:${runId}`;

/** How long an entry lives in a store opened without a run time (tests). */
export const DEFAULT_RUN_TTL_MS = 7 * 24 * 3600 * 1000;

/** An entry's life: the maximum run time plus a day for the instances to come back and finish it. */
export const runIndexTtlMs = (maxRunMs: number): number => maxRunMs + 24 * 3600 * 1000;

/** `expiresAt`: ms since the epoch after which the entry is no longer listed (and is removed). */
const RunEntry = z.object({ record: RunRecord, expiresAt: z.number() });
type RunEntry = z.infer<typeof RunEntry>;

export function encodeRunEntry(record: RunRecord, now: number, ttlMs: number): string {
  const entry: RunEntry = { record, expiresAt: now + ttlMs };
  return JSON.stringify(stamp(entry));
}

/** The entry `raw` holds, or undefined when not of this release's format (a later one's, or damaged). */
export function decodeRunEntry(raw: string): RunEntry | undefined {
  const read = RunEntry.safeParse(unstamp(parseJson(raw)));
  return read.success ? read.data : undefined;
}

/** The Stop request `raw` holds, or undefined when it does not read (damaged). */
export function decodeStopRequest(raw: string): StopRequest | undefined {
  const read = StopRequest.safeParse(parseJson(raw));
  return read.success ? read.data : undefined;
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
