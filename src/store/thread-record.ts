/**
 * Reads a stored thread record whatever version of the app wrote it: before `active`, the
 * previous version kept a thread's activity in two strings, normalised here on read.
 */
import { z } from "zod";
import { IDLE, type ThreadActivity, type ThreadRecord } from "./types.ts";

const Activity = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("idle") }),
  z.object({
    kind: z.literal("starting"),
    since: z.number(),
    replyTs: z.string().optional(),
    messageTs: z.string().optional(),
    stopBy: z.string().optional(),
  }),
  z.object({ kind: z.literal("running"), runId: z.string().min(1), messageTs: z.string() }),
]);

/**
 * A thread record as found in the store: the current shape, or the previous version's. The
 * service's conversation is kept as `projectId` and `threadId`, both "" while there is none
 * (as every version reads it).
 */
export type StoredThread = Omit<ThreadRecord, "active" | "service"> & {
  readonly projectId: string;
  readonly threadId: string;
  readonly active?: unknown;
  /** Previous version: a run id, `starting:<ts>:<ms>` while a run was created, or absent. */
  readonly activeRunId?: string | null;
  /** Previous version: the bot message showing the run. */
  readonly activeMessageTs?: string | null;
};

const LEGACY_STARTING = "starting:";

/** The record in the current shape; the previous version's fields are dropped once read. */
export function fromStored(stored: StoredThread): ThreadRecord {
  const { active, activeRunId, activeMessageTs, projectId, threadId, ...rest } = stored;
  const current = Activity.safeParse(active);
  return {
    ...rest,
    ...(threadId === "" ? {} : { service: { projectId, threadId } }),
    active: current.success
      ? current.data
      : legacyActivity(activeRunId ?? undefined, activeMessageTs ?? undefined),
  };
}

/** The record as it is stored (see StoredThread). */
export function toStored(record: ThreadRecord): StoredThread {
  const { service, ...rest } = record;
  return { ...rest, projectId: service?.projectId ?? "", threadId: service?.threadId ?? "" };
}

/** The activity the previous version's `activeRunId` and `activeMessageTs` stood for. */
export function legacyActivity(
  runId: string | undefined,
  messageTs: string | undefined,
): ThreadActivity {
  if (runId === undefined || runId === "") return IDLE;
  if (!runId.startsWith(LEGACY_STARTING)) {
    // The previous version always stored the two together.
    return { kind: "running", runId, messageTs: messageTs ?? "" };
  }
  // `starting:<ts>:<ms>`: a task's first run named its own bot message, a follow-up its reply.
  const [, ts = "", ms] = runId.split(":");
  const since = Number(ms ?? 0) || 0;
  return messageTs !== undefined && messageTs === ts
    ? { kind: "starting", since, messageTs }
    : { kind: "starting", since, replyTs: ts, ...(messageTs === undefined ? {} : { messageTs }) };
}
