/** The index of unfinished runs: each entry a run record and when it lapses unless rewritten. */
import { z } from "zod";
import { parseJson, stamp, unstamp } from "./record-format.ts";
import { RunRecord, StopRequest } from "./types.ts";

/** The lease an instance holds while it relays a run (the store deletes it with the run's team). */
export const runLease = (runId: string) => `run:${runId}`;

/** For a store opened without a run time (tests). */
export const DEFAULT_RUN_TTL_MS = 7 * 24 * 3600 * 1000;

/** The maximum run time plus a day for the instances to come back and finish it. */
export const runIndexTtlMs = (maxRunMs: number): number => maxRunMs + 24 * 3600 * 1000;

/** `expiresAt`: ms since the epoch. */
const RunEntry = z.object({ record: RunRecord, expiresAt: z.number() });
type RunEntry = z.infer<typeof RunEntry>;

export function encodeRunEntry(record: RunRecord, now: number, ttlMs: number): string {
  const entry: RunEntry = { record, expiresAt: now + ttlMs };
  return JSON.stringify(stamp(entry));
}

/** Undefined when not of this release's format (a later one's, or damaged). */
export function decodeRunEntry(raw: string): RunEntry | undefined {
  const read = RunEntry.safeParse(unstamp(parseJson(raw)));
  return read.success ? read.data : undefined;
}

export function decodeStopRequest(raw: string): StopRequest | undefined {
  const read = StopRequest.safeParse(parseJson(raw));
  return read.success ? read.data : undefined;
}
