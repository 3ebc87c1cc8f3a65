/**
 * How a relayed run ends: what its listeners hear of it, and how a service result reads as
 * the run's final text and state (capped to what a run shows).
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

/** The most of an answer a run keeps and shows (a few Slack messages' worth, many times over). */
export const MAX_ANSWER_CHARS = 60_000;

/**
 * What past `MAX_ANSWER_CHARS` becomes: the head, and a line saying where the rest is: the
 * file `attached` in the thread (the whole answer), or else the task service's History.
 */
export function capAnswer(text: string, attached?: string): string {
  if (text.length <= MAX_ANSWER_CHARS) return text;
  const head = text.slice(0, MAX_ANSWER_CHARS).replace(/[\uD800-\uDBFF]$/, ""); // no half emoji
  const longer = `The answer is longer than ${MAX_ANSWER_CHARS.toLocaleString("en-US")} characters`;
  return attached === undefined
    ? `${head}\n\n_${longer}; the rest is kept by the task service: open History under the answer._`
    : `${head}\n\n_${longer}; all of it is in \`${attached}\`, attached below._`;
}

/**
 * The running answer with one more delta, never past `MAX_ANSWER_CHARS` (what is cut off is
 * in the final result, and attached then): rendering a running answer costs its length at
 * every edit, so it may not grow by whatever one event carries.
 */
export function appendCapped(text: string, delta: string): string {
  const room = MAX_ANSWER_CHARS - text.length;
  if (room <= 0) return text;
  if (delta.length <= room) return text + delta;
  const code = delta.charCodeAt(room - 1);
  return text + delta.slice(0, code >= 0xd800 && code <= 0xdbff ? room - 1 : room); // no half emoji
}
