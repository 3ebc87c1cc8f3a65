/**
 * Entries of the index of unfinished runs: a run record plus the team it belongs to and the
 * time the entry lapses unless the run writes it again. Old entries are read by their shape.
 */
import { z } from "zod";
import { reservationId, type RunRecord, serviceRunId } from "./types.ts";

/** The lease an instance holds while it relays a run (the store deletes it with the run's team). */
export const runLease = (runId: string) => `run:${runId}`;

/** How long past the maximum run time an entry nobody rewrote stays listed. */
export const RUN_INDEX_GRACE_MS = 24 * 3600 * 1000;

/** What every entry lived for before it followed TASK_MAX_RUN_S (stores opened without one). */
export const DEFAULT_RUN_TTL_MS = 7 * 24 * 3600 * 1000;

/** An entry's life: the maximum run time plus a day for the instances to come back and finish it. */
export function runIndexTtlMs(maxRunMs: number): number {
  return maxRunMs + RUN_INDEX_GRACE_MS;
}

export interface RunEntry {
  readonly record: RunRecord;
  /** The Slack workspace the run answers in. */
  readonly teamId: string;
  /** Milliseconds since the epoch after which the entry is no longer listed (and is removed). */
  readonly expiresAt: number;
}

/** The fields an entry adds to its record (top level, so a reader that ignores them still works). */
interface EntryFields {
  readonly teamId?: unknown;
  readonly expiresAt?: unknown;
}

const Key = z.object({ teamId: z.string(), channelId: z.string(), threadTs: z.string() });
const Ref = z.object({ projectId: z.string(), threadId: z.string() });
const Step = z.object({ executionId: z.string(), token: z.string() });

/** Older versions wrote the remark under the answer as `note` (in a record and its opening). */
const withRemark = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null) return value;
  const { note, ...rest } = value as { note?: unknown; remark?: unknown };
  return note === undefined || rest.remark !== undefined ? rest : { ...rest, remark: note };
};

const Opening = z.preprocess(
  withRemark,
  z.object({
    userId: z.string(),
    prompt: z.object({ text: z.string(), fileNames: z.array(z.string()) }).optional(),
    remark: z.string().optional(),
    surface: z.enum(["channel", "dm"]),
    title: z.string().optional(),
    since: z.number(),
    replyTs: z.string().optional(),
    step: Step.optional(),
  }),
);

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

/** A start's place: older versions wrote its thread as "" until it existed. */
const Place = z
  .object({ teamId: z.string(), channelId: z.string(), threadTs: z.string().optional() })
  .transform(({ threadTs, ...place }) =>
    threadTs === undefined || threadTs === "" ? place : { ...place, threadTs },
  );

const Reserved = z.object({
  kind: z.literal("creating"),
  runId: z.string().transform(reservationId),
  key: Place,
  opening: Opening.optional(),
  created: z.object({ ref: Ref, runId: z.string().transform(serviceRunId) }).optional(),
  ...base,
});

const Relayed = z.object({
  kind: z.literal("relaying"),
  runId: z.string().transform(serviceRunId),
  key: Key,
  ref: Ref,
  // A record without them never showed text nor began uploading (as read before).
  shownText: z.string().default(""),
  uploads: z.enum(["pending", "started", "done"]).default("pending"),
  stoppedBy: z.string().optional(),
  controlTs: z.string().optional(),
  sealed: z
    .object({ messages: z.number().int().min(0), chars: z.number().int().min(0) })
    .optional(),
  ...base,
});

/**
 * A stored record by its state. The version before `kind` marked a task being created by a
 * `pending:` prefix on its id; older versions wrote the remark as `note`.
 */
const StoredRun = z.preprocess(
  (value) => {
    const read = withRemark(value) as { kind?: unknown; runId?: unknown };
    if (read.kind !== undefined || typeof read.runId !== "string") return read;
    return { ...read, kind: read.runId.startsWith("pending:") ? "creating" : "relaying" };
  },
  z.discriminatedUnion("kind", [Reserved, Relayed]),
);

/**
 * What a reservation's entry also carries for versions before the record became a union of
 * its states: they read every record's `ref`, `shownText` and `uploads`, and a thread not yet
 * posted as "" (all ignored on read).
 */
const FOR_OLDER_READERS = {
  ref: { projectId: "", threadId: "" },
  shownText: "",
  uploads: "pending",
} as const;

/** The entry for `record` written at `now`, lasting `ttlMs`. */
export function encodeRunEntry(record: RunRecord, now: number, ttlMs: number): string {
  const compatible =
    record.kind === "creating"
      ? {
          ...FOR_OLDER_READERS,
          ...record,
          key: { ...record.key, threadTs: record.key.threadTs ?? "" },
        }
      : record;
  return JSON.stringify({ ...compatible, teamId: record.key.teamId, expiresAt: now + ttlMs });
}

/**
 * An entry whatever version wrote it. The previous ones carried neither team (it is the
 * record's) nor expiry (they lapse `ttlMs` after the run started: a run still going by then
 * has long been stopped at its maximum run time). Throws when it is not a run record.
 */
export function decodeRunEntry(raw: string, ttlMs: number): RunEntry {
  const { teamId, expiresAt, ...read } = JSON.parse(raw) as EntryFields & object;
  const record: RunRecord = StoredRun.parse(read);
  return {
    record,
    teamId: typeof teamId === "string" ? teamId : record.key.teamId,
    expiresAt: typeof expiresAt === "number" ? expiresAt : record.startedAt + ttlMs,
  };
}
