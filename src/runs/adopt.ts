/**
 * Finishing the start of a run whose instance died between asking the service and showing
 * the run in Slack: which reservations need it, and how the service's run is claimed once
 * its messages exist. The steps themselves are a fresh start's (start.ts `startReserved`,
 * called by the relay): the messages still missing are posted and the run the service made
 * is followed; or, when the service never answered, the message says the start was
 * interrupted.
 */
import type { RelayedRun, ReservedRun } from "../store/types.ts";
import { runLease } from "./lease-keeper.ts";
import type { RunStore } from "./ports.ts";
import { isShown, type ShownRun } from "./run-state.ts";

/** A reservation left with messages to post, or with a service run nobody follows. */
export function needsAdopting(record: ReservedRun): boolean {
  return record.created !== undefined || record.messageTs.length === 0;
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
