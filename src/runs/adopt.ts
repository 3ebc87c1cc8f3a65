/**
 * Finishing the start of a run whose instance died between asking the service and showing
 * the run in Slack: the messages still missing are posted, and the run the service made is
 * followed; or, when the service never answered, the message says the start was interrupted.
 */
import type { Logger } from "pino";
import type { RelayedRun, ReservedRun } from "../store/types.ts";
import { openRun, PromptNotPosted, recordRunning } from "./opening.ts";
import { runLease } from "./lease-keeper.ts";
import type { RunStore, ThreadStore, Workspaces } from "./ports.ts";
import { isShown, type ShownRun } from "./run-state.ts";

export interface AdoptDeps {
  /** The run's workspace's writer and service (its token, its key). */
  readonly workspaces: Workspaces;
  readonly store: ThreadStore;
  readonly logger: Logger;
  readonly now: () => number;
}

/** What to relay, and who asked to stop it while it was starting. */
export interface Adopted {
  readonly record: ShownRun;
  readonly stopBy?: string | undefined;
}

/** A reservation left with messages to post, or with a service run nobody follows. */
export function needsAdopting(record: ReservedRun): boolean {
  return record.created !== undefined || record.messageTs.length === 0;
}

/**
 * Posts what the run's start left unposted (each step recorded in the reservation) and
 * returns what to relay: the service's run (and who pressed Stop meanwhile), or the
 * reservation itself to end its message as interrupted. Undefined when nothing can be shown (the person was told privately, and the
 * service's run, invisible to anyone, was stopped).
 */
export async function adoptOpening(
  deps: AdoptDeps,
  record: ReservedRun,
): Promise<Adopted | undefined> {
  const { store, logger } = deps;
  const plan = record.opening;
  let current: ReservedRun = record;
  let opened;
  try {
    opened = await openRun(
      deps,
      {
        teamId: record.key.teamId,
        channelId: record.key.channelId,
        threadTs: record.key.threadTs,
        messageTs: record.messageTs[0],
      },
      plan,
      async (p) => {
        current = {
          ...current,
          key: { ...current.key, threadTs: p.threadTs },
          messageTs: p.messageTs === undefined ? current.messageTs : [p.messageTs],
        };
        await store.putRun(current);
      },
    );
  } catch (err) {
    await giveUp(deps, record, err);
    return undefined;
  }
  const key = { ...record.key, threadTs: opened.threadTs };
  const created = record.created;
  if (!created) return { record: { ...current, key, messageTs: [opened.messageTs] } };
  const stopBy = await recordRunning(store, key, plan, created, opened.messageTs, deps.now()).catch(
    (err: unknown) => {
      logger.warn({ err }, "could not record the thread's run");
      return undefined;
    },
  );
  const relayed: RelayedRun = {
    kind: "relaying",
    runId: created.runId,
    key,
    ref: created.ref,
    messageTs: [opened.messageTs],
    shownText: "",
    startedAt: record.startedAt,
    uploads: "pending",
    openRelays: 1,
    owner: plan.userId,
    ...(plan.remark ? { remark: plan.remark } : {}),
    ...(plan.step ? { step: plan.step } : {}),
    ...(record.traceparent === undefined ? {} : { traceparent: record.traceparent }),
  };
  return { record: relayed, stopBy };
}

/**
 * Takes the lease of an adopted start's service run. Another instance may have recorded the
 * run already: its record (and text) wins. Undefined when another instance relays it.
 */
export async function claimAdopted(
  deps: { readonly store: RunStore; readonly instanceId: string; readonly leaseTtlMs: number },
  next: RelayedRun,
): Promise<ShownRun | undefined> {
  const { store, instanceId, leaseTtlMs } = deps;
  if (!(await store.acquireLease(runLease(next.runId), instanceId, leaseTtlMs))) return undefined;
  const known = await store.getRun(next.runId);
  if (known && isShown(known)) return known;
  await store.putRun(next);
  return next;
}

/** Nothing shows the run: tell whoever asked, and stop the run nobody can see. */
async function giveUp(deps: AdoptDeps, record: ReservedRun, err: unknown): Promise<void> {
  const { logger } = deps;
  const writer = deps.workspaces.writer(record.key.teamId);
  const service = deps.workspaces.service(record.key.teamId);
  logger.warn({ err, id: record.runId }, "could not post the messages of a run's start");
  const plan = record.opening;
  if (err instanceof PromptNotPosted) {
    await writer
      .ephemeral(record.key.channelId, plan.userId, err.advice)
      .catch((e: unknown) => logger.debug({ err: e }, "could not tell why"));
  }
  if (record.created) {
    await service
      .stopAgent(record.created.ref)
      .catch((e: unknown) => logger.warn({ err: e }, "could not stop a run nobody sees"));
  }
}
