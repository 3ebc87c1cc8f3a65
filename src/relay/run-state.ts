/**
 * What a relayed run shares with its registry: how it is steered from outside (Stop, shutdown)
 * and how it ended; and how a service result reads as the run's final text and state.
 */
import type { FinalRun } from "../service/follow.ts";
import type { RunRecord } from "../store/types.ts";
import type { RunState } from "../view/render.ts";

/** How a run is steered from outside while it is relayed (Stop, shutdown). */
export interface RunControl {
  readonly abort: AbortController;
  stoppedBy: string | undefined;
  /** Why the app itself stopped the run (e.g. its maximum run time), shown with "Stopped". */
  stopNote?: string | undefined;
  /** Set when the run is handed to another instance instead of finished here. */
  handover: boolean;
  /**
   * Its workspace uninstalled the app: the run is stopped at the service and ends here
   * without a word to Slack (its token is gone) and without its record (forgotten too).
   */
  forgotten?: boolean;
  /** Its record could not be written when it started (the store was down): written later. */
  unrecorded?: boolean;
}

/** How a run ended here, for the coordinator (queue draining, thread state). */
export interface RunEnd {
  readonly record: RunRecord;
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

export function stateOf(status: string): RunState {
  if (status === "completed" || status === "failed" || status === "stopped") return status;
  return "failed";
}

/** The most of an answer a run keeps and shows (a few Slack messages' worth, many times over). */
export const MAX_ANSWER_CHARS = 60_000;

/** What past `MAX_ANSWER_CHARS` becomes: the head, and a line saying where the rest is. */
export function capAnswer(text: string): string {
  if (text.length <= MAX_ANSWER_CHARS) return text;
  const head = text.slice(0, MAX_ANSWER_CHARS).replace(/[\uD800-\uDBFF]$/, ""); // no half emoji
  return `${head}\n\n_The answer is longer than ${MAX_ANSWER_CHARS.toLocaleString("en-US")} characters; the rest is kept by the task service: open History under the answer._`;
}
