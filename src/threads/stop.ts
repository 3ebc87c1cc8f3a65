/**
 * Stop: only the task's owner or a workspace admin may stop a run (an admin's stop of another's run
 * is audited), once; a run nobody relays here is stopped on the service directly.
 */
import { personStop, type ThreadRecord } from "../store/types.ts";
import type { StopPress, TellUser } from "./requests.ts";
import type { CoordinatorDeps } from "./coordinator-deps.ts";
import { stopFailed } from "../view/errors.ts";

/** How long a Stop is remembered, so a double click stops once. */
const STOP_CLAIM_TTL_MS = 10 * 60_000;
const FINISHED = "This run has already finished.";

type Stopper = Pick<StopPress, "key" | "userId">;

export async function stopRun(deps: CoordinatorDeps, req: StopPress, tell: TellUser) {
  const { store, relay, logger } = deps;
  const record = await store.getThread(req.key);
  if (!record) return tell("This task is no longer known to me, so there is nothing to stop.");
  // Only the thread's current run can be stopped (an old button names an old run).
  if (record.active.kind === "running" && record.active.runId !== req.runId) return tell(FINISHED);
  const refusal = await stopRefusal(deps, record, req);
  if (refusal) return tell(refusal);
  // No task on the service (its creation failed or is under way): no run of it to stop.
  const ref = record.service;
  if (!ref) return tell(FINISHED);
  const claim = `stop:${req.runId}`;
  if (!(await store.claimOnce(req.key.teamId, claim, STOP_CLAIM_TTL_MS))) return;
  // A Stop that failed is told, and forgotten so that Stop can be pressed again.
  const failed = async (err: unknown) => {
    logger.warn({ err, runId: req.runId }, "stopping the run failed");
    await store.releaseClaim(req.key.teamId, claim).catch(() => undefined);
    await tell(stopFailed(err, req.runId));
  };
  try {
    if (await relay.stop({ runId: req.runId, ref, key: req.key }, req.userId)) {
      return await audited(deps, record, req, `run ${req.runId}`);
    }
  } catch (err) {
    return failed(err);
  }
  if (record.active.kind !== "running" || record.active.runId !== req.runId) return tell(FINISHED);
  // Not relayed by this process (e.g. after a restart): stop it on the service anyway.
  try {
    await deps.workspaces.service(req.key.teamId).stopAgent(ref);
    await audited(deps, record, req, `run ${req.runId}`);
    await tell("The run was stopped.");
  } catch (err) {
    await failed(err);
  }
}

/** Another person's run stopped (by an admin, as only they may): written to the audit trail. */
async function audited(deps: CoordinatorDeps, record: ThreadRecord, req: Stopper, detail: string) {
  if (req.userId === record.ownerUserId) return;
  await deps.audit?.record({
    what: "run.stopped",
    who: req.userId,
    workspace: req.key.teamId,
    channel: req.key.channelId,
    whom: record.ownerUserId,
    detail,
  });
}

/** Unless `req` comes from the task's owner or an active admin of the same workspace: why not. */
async function stopRefusal(deps: CoordinatorDeps, record: ThreadRecord, req: Stopper) {
  if (req.userId === record.ownerUserId) return undefined;
  try {
    const writer = deps.workspaces.writer(req.key.teamId);
    const person = await writer.person(req.userId);
    const sameTeam = person?.teamId === undefined || person.teamId === req.key.teamId;
    if (sameTeam && person?.deleted !== true && (await writer.isAdmin(req.userId))) {
      return undefined;
    }
  } catch (err) {
    deps.logger.warn({ err }, "could not check whether the user is an admin");
  }
  return `Only <@${record.ownerUserId}>, who started this task, or a workspace admin can stop it.`;
}

/** Slack's own Stop while the run is being started: kept in the thread, done once it is known. */
export async function stopWhenStarted(
  deps: CoordinatorDeps,
  record: ThreadRecord,
  req: Stopper,
  tell: TellUser,
): Promise<void> {
  const refusal = await stopRefusal(deps, record, req);
  if (refusal) return tell(refusal);
  let started: string | undefined;
  let asked = false;
  await deps.store.updateThread(req.key, (rec) => {
    if (rec.active.kind === "starting") {
      asked = true;
      return { ...rec, active: { ...rec.active, stop: personStop(req.userId) } };
    }
    started = rec.active.kind === "running" ? rec.active.runId : undefined;
    return undefined;
  });
  if (asked) await audited(deps, record, req, "a run being started");
  // The run started while this stop was checked, and its start read no stop: stop it now.
  if (started !== undefined) await stopRun(deps, { ...req, runId: started }, tell);
}
