/**
 * Runs whose records are forgotten (a workspace uninstalled the app or erased its records, a
 * channel or task message was deleted): each is stopped at the service and ends without a word
 * to Slack, wherever it is relayed.
 */
import type { Logger } from "pino";
import type { RunRecord, StartPlace } from "../store/types.ts";
import type { RunStore, TaskService } from "./ports.ts";
import type { RunFate } from "./fate.ts";
import { serviceRef } from "./record.ts";

/** Why a run stops when its record is gone while it is relayed. */
export const RECORD_GONE =
  "the run's record is gone: its workspace, channel or thread was forgotten; stopping it quietly";

/** The runs to forget: a workspace's, or those of one of its channels, or of one thread. */
export interface RunScope {
  readonly teamId: string;
  readonly channelId?: string;
  readonly threadTs?: string;
}

export function inScope(place: StartPlace, scope: RunScope): boolean {
  if (place.teamId !== scope.teamId) return false;
  if (scope.channelId !== undefined && place.channelId !== scope.channelId) return false;
  return scope.threadTs === undefined || place.threadTs === scope.threadTs;
}

interface LocalRun {
  readonly fate: RunFate;
  readonly done: Promise<void>;
}

/**
 * Stops every run in `scope`: those relayed here (`local`) end at once without a word; the others
 * are stopped at the service, with a Stop request that tells their relay to say nothing. Their
 * records go next; a relay that finds its record gone stops quietly too.
 */
export async function stopRunsQuietly(
  deps: {
    readonly store: Pick<RunStore, "listRuns" | "requestStop">;
    readonly service: Pick<TaskService, "stopAgent">;
    readonly logger: Logger;
  },
  forgotten: { readonly scope: RunScope; readonly why: string },
  local: ReadonlyMap<string, LocalRun>,
): Promise<void> {
  const { store, service, logger } = deps;
  const { scope, why } = forgotten;
  let elsewhere: RunRecord[] = [];
  try {
    elsewhere = (await store.listRuns()).filter(
      (r) => inScope(r.key, scope) && !local.has(r.runId),
    );
  } catch (err) {
    logger.warn({ err, team: scope.teamId }, "could not list the runs to stop them quietly");
  }
  for (const run of local.values()) run.fate.forget(why);
  await Promise.all(
    elsewhere.map(async (record) => {
      const { runId } = record;
      await store.requestStop(runId, { kind: "forgotten" }).catch(() => undefined);
      const ref = serviceRef(record);
      if (!ref) return;
      await service.stopAgent(ref).catch((err: unknown) => {
        logger.warn({ err, runId }, "could not stop a run whose records are forgotten");
      });
    }),
  );
  await Promise.allSettled([...local.values()].map((run) => run.done));
  logger.info(
    { team: scope.teamId, here: local.size, elsewhere: elsewhere.length, why },
    "stopped runs quietly: their records are forgotten",
  );
}
