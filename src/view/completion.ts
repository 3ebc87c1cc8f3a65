/**
 * The completion record a run's final message carries as Slack message `metadata`, so that
 * Workflow Builder and other apps can react to a task ending (Slack's "Using message metadata"
 * page: an `event_type` and a flat `event_payload`; subscribers list the event types in their
 * manifest's `metadata_subscriptions`). Pure. The shape is documented in the README.
 */
import type { MessageMetadata } from "@slack/types";
import type { RunRecord } from "../store/types.ts";
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
