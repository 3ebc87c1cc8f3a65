/** What a run hands on when it ends: its final message's `metadata` (Slack's "Using message
 * metadata": an `event_type` and a flat `event_payload`; shape in docs/usage.md), and a Workflow
 * step's outputs (`functions.completeSuccess`) or error (`functions.completeError`). */
import type { MessageMetadata } from "@slack/types";
import type { RunRecord, RunState } from "../store/types.ts";
import type { RunView } from "./render.ts";

const EVENT = {
  completed: "task_completed",
  failed: "task_failed",
  error: "task_failed",
  stopped: "task_stopped",
} as const;

/** The final view of a run that ended, with its run id and its completion record. */
export function ended(record: RunRecord, view: RunView): RunView {
  // A start that never reached the service has no run to record.
  if (view.state === "running" || record.kind !== "relaying") return view;
  const completion: MessageMetadata = {
    event_type: EVENT[view.state],
    event_payload: {
      status: view.state,
      service_project_id: record.ref.projectId,
      service_thread_id: record.ref.threadId,
      service_run_id: record.runId,
      duration_ms: Math.max(0, Math.round(view.elapsedMs)),
      file_count: view.files?.length ?? 0,
      requester_user_id: record.owner ?? "",
      channel_id: record.key.channelId,
      thread_ts: record.key.threadTs,
    },
  };
  return { ...view, runId: record.runId, completion };
}

/** Slack's `string` type is "UTF-8 encoded string, up to 4000 bytes" (Slack's "Slack types"). */
const STEP_OUTPUT_MAX_BYTES = 4000;

export interface StepEnding {
  readonly state: RunState;
  readonly answer: string;
  readonly reason?: string | undefined;
  readonly stoppedBy?: string | undefined;
  readonly files: readonly string[];
  readonly link?: string | undefined;
}

const utf8 = (text: string): number => Buffer.byteLength(text, "utf8");

/** `text` within `maxBytes` of UTF-8: else its head (never half a character) and `marker`. */
function fitBytes(text: string, maxBytes: number, marker: string): string {
  if (utf8(text) <= maxBytes) return text;
  const room = Math.max(0, maxBytes - utf8(marker));
  // Cut by bytes, then drop a character the cut split.
  const head = Buffer.from(text, "utf8").subarray(0, room).toString("utf8");
  const whole = head.replace(/\uFFFD$/, "").replace(/[\uD800-\uDBFF]$/, "");
  return `${whole}${marker}`;
}

/** The outputs `run_task` declares in manifest.yml, of a completed task (empty ones left out). */
export function stepOutputs(ending: StepEnding) {
  const where = ending.link ? `its thread: ${ending.link}` : "its thread in Slack";
  const cut = `\n\n[…] The answer was cut here: a workflow step passes on at most ${STEP_OUTPUT_MAX_BYTES.toLocaleString("en-US")} bytes. The whole answer is in ${where}`;
  const answer = fitBytes(ending.answer.trim(), STEP_OUTPUT_MAX_BYTES, cut);
  const files = fitBytes(
    ending.files.join("\n"),
    STEP_OUTPUT_MAX_BYTES,
    "\n[…] more files: see the thread",
  );
  return {
    status: ending.state,
    thread_link: ending.link ?? "",
    ...(answer === "" ? {} : { answer }),
    ...(files === "" ? {} : { files }),
  };
}

/** Why a task did not complete, as its thread's status line says it (plain text). */
export function stepError(ending: StepEnding): string {
  const reason = ending.reason?.trim() ?? "";
  const because = reason === "" ? "" : `: ${reason}`;
  const text =
    ending.state === "failed"
      ? `The task failed${because || ": the task service gave no reason"}`
      : ending.state === "stopped"
        ? `The task was stopped${ending.stoppedBy ? ` by <@${ending.stoppedBy}>` : ""}${because}`
        : ending.state === "completed" || ending.state === "running"
          ? `The task ended as ${ending.state}`
          : reason || "Something went wrong.";
  const where = ending.link ? ` (thread: ${ending.link})` : "";
  return fitBytes(`${text}${where}`, STEP_OUTPUT_MAX_BYTES, "…");
}
