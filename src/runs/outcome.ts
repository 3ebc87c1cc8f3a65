/** How a relayed run ends: what its listeners hear, and its final text, state and reason. */
import type { FinalRun } from "../service/follow.ts";
import type { RunState } from "../store/types.ts";
import type { ThreadRef } from "../service/client.ts";
import { describeServiceError } from "../view/errors.ts";
import type { RunTarget, ShownRun } from "./record.ts";

/** Why a run ended here without its result, in words shown in its thread as they are. */
export class EndedHere extends Error {
  override readonly name = "EndedHere";
}

/** What a run whose creator died before the service answered shows. */
export const INTERRUPTED =
  "This was interrupted before the task service answered (the app restarted). Please try again: run `/task`, or send your message again.";

/**
 * How many instances may die relaying one run before it is quarantined: fewer while it was ending
 * (its heaviest steps), more while it was only followed (they may have died of another run).
 */
export const MAX_RELAY_DEATHS = 3;
export const MAX_RELAY_DEATHS_FOLLOWING = 10;

/** What a quarantined run shows: why it ends, and where its result is. */
export const quarantined = (deaths: number): string =>
  `This answer could not be shown here: the app stopped ${deaths} times while showing it, so it stopped trying (other tasks are not affected). The task service still has the whole result: open History under this message.`;

export interface RunOutcome extends Omit<RunEnd, "record"> {
  /** A start that never reached the service has no `ref`; `messageTs`: its first message. */
  readonly target: Omit<RunTarget, "ref" | "messageTs"> & {
    readonly ref?: ThreadRef;
    readonly messageTs?: string;
  };
}

/** What the listeners of runs' ends hear of `end`. */
export function outcomeOf({ record, ...end }: RunEnd): RunOutcome {
  const first = end.messageTs[0] ?? record.messageTs[0];
  return {
    ...end,
    target: {
      key: record.key,
      ...(record.kind === "relaying" ? { ref: record.ref } : {}),
      runId: record.runId,
      ...(first === undefined ? {} : { messageTs: first }),
      startedAt: record.startedAt,
      ...(record.remark ? { remark: record.remark } : {}),
      ...(record.owner ? { owner: record.owner } : {}),
    },
  };
}

export interface RunEnd {
  readonly record: ShownRun;
  readonly state: RunState;
  readonly text: string;
  readonly messageTs: readonly string[];
}

export function finalText(final: FinalRun): string {
  if (final.text.trim() !== "") return final.text;
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

export const stateOf = (status: string): RunState =>
  status === "completed" || status === "stopped" ? status : "failed";
