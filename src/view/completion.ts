/**
 * What a run hands on when it ends. The completion record its final message carries as Slack
 * message `metadata`, so that Workflow Builder and other apps can react to a task ending
 * (Slack's "Using message metadata" page: an `event_type` and a flat `event_payload`;
 * subscribers list the event types in their manifest's `metadata_subscriptions`); the shape is
 * documented in the README. And, for a task a Workflow Builder step ("Run a task") asked for,
 * the step's outputs (`functions.completeSuccess`) or its error (`functions.completeError`),
 * worded as the task's thread says it. Pure.
 */
import type { MessageMetadata } from "@slack/types";
import type { RunRecord, RunState } from "../store/types.ts";
import type { RunView } from "./render.ts";

export type CompletionEvent = "task_completed" | "task_failed" | "task_stopped";

export interface CompletionFacts {
  readonly state: "completed" | "failed" | "stopped" | "error";
  readonly projectId: string;
  readonly threadId: string;
  readonly runId: string;
  /** Who asked (a Slack user id), when known. */
  readonly requester: string | undefined;
  readonly durationMs: number;
  readonly fileCount: number;
  readonly channelId: string;
  readonly threadTs: string;
}

const EVENT: Readonly<Record<CompletionFacts["state"], CompletionEvent>> = {
  completed: "task_completed",
  failed: "task_failed",
  error: "task_failed",
  stopped: "task_stopped",
};

export function completionMetadata(f: CompletionFacts): MessageMetadata {
  return {
    event_type: EVENT[f.state],
    event_payload: {
      status: f.state,
      service_project_id: f.projectId,
      service_thread_id: f.threadId,
      service_run_id: f.runId,
      duration_ms: Math.max(0, Math.round(f.durationMs)),
      file_count: f.fileCount,
      requester_user_id: f.requester ?? "",
      channel_id: f.channelId,
      thread_ts: f.threadTs,
    },
  };
}

/**
 * The final view of a run that ended: with its run id (the feedback buttons name it) and its
 * completion record. A running view is returned as it is.
 */
export function ended(record: RunRecord, view: RunView): RunView {
  // A start that never reached the service has no run to record.
  if (view.state === "running" || record.kind !== "relaying") return view;
  const completion = completionMetadata({
    state: view.state,
    projectId: record.ref.projectId,
    threadId: record.ref.threadId,
    runId: record.runId,
    requester: record.owner,
    durationMs: view.elapsedMs,
    fileCount: view.files?.length ?? 0,
    channelId: record.key.channelId,
    threadTs: record.key.threadTs,
  });
  return { ...view, runId: record.runId, completion };
}

/**
 * The most a step's string output carries: Slack's `string` type is "UTF-8 encoded string, up
 * to 4000 bytes" (Slack's "Slack types" reference). A longer answer is cut to fit, with a marker.
 */
export const STEP_OUTPUT_MAX_BYTES = 4000;

/** How a step's task ended, as the step shows it. */
export interface StepEnding {
  readonly state: RunState;
  readonly answer: string;
  readonly reason?: string | undefined;
  readonly stoppedBy?: string | undefined;
  readonly files: readonly string[];
  /** A link to the task's thread, when it has one. */
  readonly link?: string | undefined;
}

/** The outputs the manifest declares for `run_task` (manifest.yml), as strings. */
export interface StepOutputs {
  readonly status: string;
  readonly thread_link: string;
  readonly answer?: string;
  readonly files?: string;
}

const utf8 = (text: string): number => Buffer.byteLength(text, "utf8");

/**
 * `text` within `maxBytes` of UTF-8: as it is when it fits, else its head (never half a
 * character) followed by `marker`.
 */
export function fitBytes(text: string, maxBytes: number, marker: string): string {
  if (utf8(text) <= maxBytes) return text;
  const room = Math.max(0, maxBytes - utf8(marker));
  // Cut by bytes, then drop a character the cut split (a lone surrogate or a partial sequence).
  const head = Buffer.from(text, "utf8").subarray(0, room).toString("utf8");
  const whole = head.replace(/\uFFFD$/, "").replace(/[\uD800-\uDBFF]$/, "");
  return `${whole}${marker}`;
}

/** The marker after a cut answer: where the rest is. */
function answerMarker(link: string | undefined): string {
  const where = link ? `its thread: ${link}` : "its thread in Slack";
  return `\n\n[…] The answer was cut here: a workflow step passes on at most ${STEP_OUTPUT_MAX_BYTES.toLocaleString("en-US")} bytes. The whole answer is in ${where}`;
}

/** The outputs of a completed task (empty ones left out). */
export function stepOutputs(ending: StepEnding): StepOutputs {
  const answer = fitBytes(ending.answer.trim(), STEP_OUTPUT_MAX_BYTES, answerMarker(ending.link));
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
