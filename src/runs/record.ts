/**
 * A run's record in the store's index of unfinished runs: `reserved` for a start, `relaying` once
 * the service's run is shown. Every record and every change of one is made here.
 */
import type { ThreadRef } from "../service/client.ts";
import {
  type RelayedRun,
  type RelayedRunProgress,
  type ReservationId,
  type ReservedRun,
  type RunOpening,
  type RunRecord,
  type ServiceRunId,
  serviceRunId,
  type SlackThreadKey,
  type StartPlace,
  type ThreadActivity,
  type WorkflowStep,
} from "../store/types.ts";
import type { AnswerPlace } from "./answer/sink.ts";
import type { Fate } from "./fate.ts";

export interface RunTarget {
  readonly key: SlackThreadKey;
  readonly ref: ThreadRef;
  readonly runId: string;
  /** The run's message already posted in the thread. */
  readonly messageTs: string;
  readonly startedAt: number;
  /** Shown under the answer (e.g. attachments that were not sent). */
  readonly remark?: string;
  /** Who asked: native streams are addressed to them. */
  readonly owner?: string;
  readonly step?: WorkflowStep;
  /** The asking request's W3C `traceparent`, when tracing is on. */
  readonly traceparent?: string;
}

export interface StartProgress {
  readonly threadTs?: string;
  readonly messageTs?: string;
  readonly created?: { readonly ref: ThreadRef; readonly runId: ServiceRunId };
}

/** A run as a relay shows it: a service run, or a start whose service never answered. */
export type ShownRun = RelayedRun | (ReservedRun & { readonly key: SlackThreadKey });

export function reservedRecord(
  runId: ReservationId,
  key: StartPlace,
  startedAt: number,
  opening: RunOpening,
  traceparent: string | undefined,
): ReservedRun {
  return {
    kind: "reserved",
    runId,
    key,
    messageTs: [],
    startedAt,
    owner: opening.userId,
    opening,
    ...(traceparent === undefined ? {} : { traceparent }),
  };
}

export function learnt(record: ReservedRun, change: StartProgress): ReservedRun {
  const { threadTs, messageTs, created } = change;
  return {
    ...record,
    key: threadTs === undefined ? record.key : { ...record.key, threadTs },
    messageTs: messageTs === undefined ? record.messageTs : [messageTs],
    ...(created ? { created } : {}),
  };
}

/** The record of a run about to be relayed: nothing shown yet, nothing uploaded. */
export function relayedRecord(target: RunTarget): RelayedRun {
  return {
    kind: "relaying",
    runId: serviceRunId(target.runId),
    key: target.key,
    ref: target.ref,
    messageTs: [target.messageTs],
    shownText: "",
    startedAt: target.startedAt,
    ...(target.remark ? { remark: target.remark } : {}),
    ...(target.owner ? { owner: target.owner } : {}),
    ...(target.step ? { step: target.step } : {}),
    ...(target.traceparent ? { traceparent: target.traceparent } : {}),
    uploads: "pending",
    openRelays: 1,
  };
}

/** A service run one more instance begins relaying (its relays are counted: relay.ts). */
export const reopened = (record: RelayedRun): RelayedRun => ({
  ...record,
  openRelays: (record.openRelays ?? 0) + 1,
});

/**
 * What a run relayed here stores as it goes: nothing once its records are forgotten; a start
 * whose service never answered only its messages; a service run what it has shown and done.
 */
export function recordOf(
  fate: Fate,
  record: ShownRun,
  change: RelayedRunProgress,
  place: AnswerPlace,
): ShownRun | undefined {
  if (fate.kind === "forgotten") return undefined;
  const messageTs = [...place.messageTs];
  return record.kind === "reserved"
    ? { ...record, messageTs }
    : { ...record, ...change, ...place, messageTs };
}

/** The thread's activity while `record` is its run. */
export const activityOf = (record: RelayedRun): ThreadActivity => ({
  kind: "running",
  runId: record.runId,
  messageTs: record.messageTs[0] ?? "",
});

/** Whether a record has messages in a thread to show it in. */
export const isShown = (record: RunRecord): record is ShownRun =>
  record.kind === "relaying" || record.key.threadTs !== undefined;

/** A reservation left with messages to post, or with a service run nobody follows. */
export const needsAdopting = (record: ReservedRun): boolean =>
  record.created !== undefined || record.messageTs.length === 0;

export const serviceRef = (record: RunRecord): ThreadRef | undefined =>
  record.kind === "relaying" ? record.ref : record.created?.ref;

/** The Workflow Builder step a run's record waits with. */
export const stepOf = (record: RunRecord): WorkflowStep | undefined =>
  record.kind === "relaying" ? record.step : record.opening.step;
