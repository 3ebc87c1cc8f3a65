/**
 * Entries of the index of unfinished runs: a run record and the time the entry lapses unless
 * the run writes it again, stamped with the store's format version (record-format.ts).
 */
import { z } from "zod";
import { stamp, unstamp } from "./record-format.ts";
import { reservationId, type RunRecord, serviceRunId, type StopRequest } from "./types.ts";

/** The lease an instance holds while it relays a run (the store deletes it with the run's team). */
export const runLease = (runId: string) => `run:${runId}`;

/** How long past the maximum run time an entry nobody rewrote stays listed. */
export const RUN_INDEX_GRACE_MS = 24 * 3600 * 1000;

/** How long an entry lives in a store opened without a run time (tests). */
export const DEFAULT_RUN_TTL_MS = 7 * 24 * 3600 * 1000;

/** An entry's life: the maximum run time plus a day for the instances to come back and finish it. */
export function runIndexTtlMs(maxRunMs: number): number {
  return maxRunMs + RUN_INDEX_GRACE_MS;
}

export interface RunEntry {
  readonly record: RunRecord;
  /** Milliseconds since the epoch after which the entry is no longer listed (and is removed). */
  readonly expiresAt: number;
}

const Key = z.object({ teamId: z.string(), channelId: z.string(), threadTs: z.string() });
const Ref = z.object({ projectId: z.string(), threadId: z.string() });
const Step = z.object({ executionId: z.string(), token: z.string() });

const Opening = z.object({
  userId: z.string(),
  prompt: z.object({ text: z.string(), fileNames: z.array(z.string()) }).optional(),
  remark: z.string().optional(),
  surface: z.enum(["channel", "dm"]),
  title: z.string().optional(),
  since: z.number(),
  replyTs: z.string().optional(),
  step: Step.optional(),
});

const base = {
  messageTs: z.array(z.string()),
  startedAt: z.number(),
  remark: z.string().optional(),
  owner: z.string().optional(),
  openRelays: z.number().int().min(0).optional(),
  finishing: z.boolean().optional(),
  step: Step.optional(),
  traceparent: z.string().max(64).optional(),
};

const Reserved = z.object({
  kind: z.literal("reserved"),
  runId: z.string().transform(reservationId),
  key: z.object({ teamId: z.string(), channelId: z.string(), threadTs: z.string().optional() }),
  opening: Opening,
  created: z.object({ ref: Ref, runId: z.string().transform(serviceRunId) }).optional(),
  ...base,
});

const Relayed = z.object({
  kind: z.literal("relaying"),
  runId: z.string().transform(serviceRunId),
  key: Key,
  ref: Ref,
  shownText: z.string(),
  uploads: z.enum(["pending", "started", "done"]),
  controlTs: z.string().optional(),
  sealed: z
    .object({ messages: z.number().int().min(0), chars: z.number().int().min(0) })
    .optional(),
  ...base,
});

const Entry = z.object({
  record: z.discriminatedUnion("kind", [Reserved, Relayed]),
  expiresAt: z.number(),
});

/** The entry for `record` written at `now`, lasting `ttlMs`. */
export function encodeRunEntry(record: RunRecord, now: number, ttlMs: number): string {
  const entry: RunEntry = { record, expiresAt: now + ttlMs };
  return JSON.stringify(stamp(entry));
}

/**
 * The entry `raw` holds, or undefined when it is not an entry of this release's format (a later
 * release's, or damaged): the store skips such an entry and leaves it as it is.
 */
export function decodeRunEntry(raw: string): RunEntry | undefined {
  let stored: unknown;
  try {
    stored = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const read = Entry.safeParse(unstamp(stored));
  return read.success ? read.data : undefined;
}

const Stop = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("person"), userId: z.string() }),
  z.object({ kind: z.literal("app"), reason: z.string() }),
  z.object({ kind: z.literal("forgotten") }),
]);

/** The Stop request `raw` holds, or undefined when it does not read (damaged). */
export function decodeStopRequest(raw: string): StopRequest | undefined {
  try {
    const read = Stop.safeParse(JSON.parse(raw));
    return read.success ? read.data : undefined;
  } catch {
    return undefined;
  }
}
