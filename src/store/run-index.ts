/**
 * Entries of the index of unfinished runs: a run record plus the team it belongs to and the
 * time the entry lapses unless the run writes it again. Old entries are read by their shape.
 */
import type { RunOpening, RunRecord } from "./types.ts";

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

type StoredRecord = Omit<RunRecord, "kind"> & {
  kind?: RunRecord["kind"];
  /** Older versions: the remark under the answer (now `remark`), here and in `opening`. */
  note?: string;
};

/** A record whose remark (the record's, and its opening's) was written as `note` by older versions. */
function withRemark(stored: StoredRecord): StoredRecord {
  const { note, ...rest } = stored;
  const opening = rest.opening as (RunOpening & { note?: string }) | undefined;
  const { note: openingNote, ...plan } = opening ?? { note: undefined };
  return {
    ...rest,
    ...(note !== undefined && rest.remark === undefined ? { remark: note } : {}),
    ...(opening
      ? {
          opening: {
            ...(plan as RunOpening),
            ...(openingNote !== undefined && opening.remark === undefined
              ? { remark: openingNote }
              : {}),
          },
        }
      : {}),
  };
}

/** The entry for `record` written at `now`, lasting `ttlMs`. */
export function encodeRunEntry(record: RunRecord, now: number, ttlMs: number): string {
  const entry: RunRecord & EntryFields = {
    ...record,
    teamId: record.key.teamId,
    expiresAt: now + ttlMs,
  };
  return JSON.stringify(entry);
}

/**
 * An entry whatever version wrote it. The previous ones carried neither team (it is the
 * record's) nor expiry (they lapse `ttlMs` after the run started: a run still going by then
 * has long been stopped at its maximum run time); the one before had no `kind` either and
 * marked a task being created by a `pending:` prefix on its id.
 */
export function decodeRunEntry(raw: string, ttlMs: number): RunEntry {
  const { teamId, expiresAt, ...read } = JSON.parse(raw) as StoredRecord & EntryFields;
  const stored = withRemark(read);
  const record: RunRecord =
    stored.kind === "creating" || stored.kind === "relaying"
      ? (stored as RunRecord)
      : { ...stored, kind: stored.runId.startsWith("pending:") ? "creating" : "relaying" };
  return {
    record,
    teamId: typeof teamId === "string" ? teamId : record.key.teamId,
    expiresAt: typeof expiresAt === "number" ? expiresAt : record.startedAt + ttlMs,
  };
}
