/**
 * Runs of a workspace that uninstalled the app (or revoked its bot token): stopped at the
 * service and ended without a word to Slack, whose token is gone, wherever they are relayed.
 */
import type { Logger } from "pino";
import type { RunRecord } from "../store/types.ts";
import type { RunStore, TaskService, ThreadRef } from "./ports.ts";
import type { RunFate } from "./fate.ts";

/** The Stop requester recorded for a forgotten workspace's run (no Slack user id has a "!"). */
export const UNINSTALLED = "!uninstalled";

/** Why a run stops when its record is gone while it is relayed. */
export const RECORD_GONE =
  "the run's record is gone: its workspace uninstalled the app; stopping it quietly";

/**
 * Writes a relayed run's record: only while it exists (a forgotten workspace's run is never
 * brought back), or anew when its first write failed. False when it is gone.
 */
export async function keepRecord(
  store: Pick<RunStore, "putRun" | "updateRun">,
  fate: RunFate,
  record: RunRecord,
): Promise<boolean> {
  if (!fate.unrecorded) return store.updateRun(record);
  await store.putRun(record);
  fate.unrecorded = false;
  return true;
}

/** The service's run behind a record, when the service has one. */
export function serviceRef(record: RunRecord): ThreadRef | undefined {
  return record.kind === "relaying" ? record.ref : record.created?.ref;
}

/** A run this instance relays, as the relay's registry holds it. */
export interface LocalRun {
  readonly fate: RunFate;
  readonly done: Promise<void>;
}

/**
 * Stops every run of `teamId`: those relayed here end at once without a word (each stops its
 * service run itself); those in the index that another instance relays (or nobody, its owner
 * dead) are stopped at the service, with a Stop request that tells their relay to say nothing.
 * Their records go with the workspace's (`forgetTeam`); a relay that finds its record gone
 * stops quietly too, so nobody resumes them.
 */
export async function stopTeamRuns(
  deps: {
    readonly store: Pick<RunStore, "listRuns" | "requestStop">;
    readonly service: Pick<TaskService, "stopAgent">;
    readonly logger: Logger;
  },
  teamId: string,
  local: ReadonlyMap<string, LocalRun>,
): Promise<void> {
  const { store, service, logger } = deps;
  let elsewhere: RunRecord[] = [];
  try {
    elsewhere = (await store.listRuns()).filter(
      (r) => r.key.teamId === teamId && !local.has(r.runId),
    );
  } catch (err) {
    logger.warn({ err, team: teamId }, "could not list the runs of a workspace to stop them");
  }
  for (const run of local.values()) {
    run.fate.forget("its workspace uninstalled the app");
  }
  await Promise.all(
    elsewhere.map(async (record) => {
      const { runId } = record;
      await store.requestStop(runId, UNINSTALLED).catch(() => undefined);
      const ref = serviceRef(record);
      if (!ref) return;
      await service.stopAgent(ref).catch((err: unknown) => {
        logger.warn({ err, runId }, "could not stop a run of an uninstalled workspace");
      });
    }),
  );
  await Promise.allSettled([...local.values()].map((run) => run.done));
  logger.info(
    { team: teamId, here: local.size, elsewhere: elsewhere.length },
    "stopped the runs of a workspace that uninstalled the app",
  );
}

/**
 * A run that ended "stopped" by nobody known here: who asked (recorded in its fate), and whether
 * it was stopped because its workspace uninstalled the app (the Stop request says so or, once
 * the workspace is forgotten, its record is gone): then nothing more is shown.
 */
export async function stoppedForgotten(
  store: Pick<RunStore, "getRun" | "stopRequester">,
  fate: RunFate,
  runId: string,
): Promise<boolean> {
  const by = await store.stopRequester(runId).catch(() => undefined);
  if (by === UNINSTALLED) return true;
  if (by !== undefined) fate.stoppedElsewhere(by);
  if (by !== undefined || fate.unrecorded) return false;
  return (await store.getRun(runId).catch(() => "unknown")) === undefined;
}

/** A forgotten workspace's run ends here: stopped at the service (unless it already is). */
export async function stopForgotten(
  service: Pick<TaskService, "stopAgent">,
  record: RunRecord,
  log: Logger,
  stopAtService: boolean,
): Promise<void> {
  const ref = serviceRef(record);
  if (stopAtService && ref) {
    await service.stopAgent(ref).catch((err: unknown) => {
      log.warn({ err }, "could not stop the run of an uninstalled workspace");
    });
  }
  log.info("run stopped: its workspace uninstalled the app (nothing more shown in Slack)");
}
