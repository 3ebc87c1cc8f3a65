/**
 * How a relayed run ends: what its listeners hear of it, and how a service result reads as
 * the run's final text and state.
 */
import type { FinalRun } from "../service/follow.ts";
import type { RunState } from "../store/types.ts";
import type { ThreadRef } from "../service/client.ts";
import { describeServiceError } from "../view/errors.ts";
import type { RunTarget, ShownRun } from "./record.ts";

/** Why a run ended here without its result, in words shown to the people in its thread as they are. */
export class EndedHere extends Error {
  override readonly name = "EndedHere";
}

/** What a run whose creator died before the service answered shows. */
export const INTERRUPTED =
  "This was interrupted before the task service answered (the app restarted). Please try again: run `/task`, or send your message again.";

/**
 * How many instances may die relaying one run before it is quarantined instead: fewer when
 * they died while it was ending (its heaviest steps), more while it was only followed (the
 * instance may have died of another run relayed at the time).
 */
export const MAX_RELAY_DEATHS = 3;
export const MAX_RELAY_DEATHS_FOLLOWING = 10;

/** What a quarantined run shows: why it ends, and where its result is. */
export const quarantined = (deaths: number): string =>
  `This answer could not be shown here: the app stopped ${deaths} times while showing it, so it stopped trying (other tasks are not affected). The task service still has the whole result: open History under this message.`;

/** What an ended run answered; a start that never reached the service has no service thread. */
export type EndedTarget = Omit<RunTarget, "ref" | "messageTs"> & {
  readonly ref?: ThreadRef;
  /** The run's first message, if it has one. */
  readonly messageTs?: string;
};

export interface RunOutcome {
  readonly target: EndedTarget;
  readonly state: RunState;
  readonly text: string;
  readonly messageTs: readonly string[];
}

/** What the listeners of runs' ends hear of `end`. */
export function outcomeOf(end: RunEnd): RunOutcome {
  const { record } = end;
  const first = end.messageTs[0] ?? record.messageTs[0];
  return {
    target: {
      key: record.key,
      ...(record.kind === "relaying" ? { ref: record.ref } : {}),
      runId: record.runId,
      ...(first === undefined ? {} : { messageTs: first }),
      startedAt: record.startedAt,
      ...(record.remark ? { remark: record.remark } : {}),
      ...(record.owner ? { owner: record.owner } : {}),
    },
    state: end.state,
    text: end.text,
    messageTs: end.messageTs,
  };
}

/** How a run ended here, for the coordinator (queue draining, thread state). */
export interface RunEnd {
  readonly record: ShownRun;
  readonly state: RunState;
  readonly text: string;
  readonly messageTs: readonly string[];
}

export function finalText(final: FinalRun): string {
  if (final.text.trim() !== "") return final.text;
  if (final.codeBlocks.length === 0) return "";
  return final.codeBlocks
    .map((b) => `\`\`\`${b.language}\n${b.code.replace(/\n$/, "")}\n\`\`\``)
    .join("\n\n");
}

/** Why a failed run failed, as the service says (or its unexpected final status). */
export function failedReason(final: FinalRun): string | undefined {
  if (final.errorMessage !== undefined) return final.errorMessage;
  return final.status === "failed" ? undefined : `the run ended with status "${final.status}"`;
}

/** Why a run could not be followed to its end, for the person who asked. */
export function failureReason(failure: unknown, runId: string): string {
  return failure instanceof EndedHere ? failure.message : describeServiceError(failure, runId);
}

export function stateOf(status: string): RunState {
  if (status === "completed" || status === "failed" || status === "stopped") return status;
  return "failed";
}
