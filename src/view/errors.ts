/** What a person in Slack is told when the task service or Slack says no. Pure. */
import {
  ServiceKeyMissingError,
  ServiceKeyUnreadableError,
  TaskServiceError,
} from "../service/errors.ts";
import { mrkdwnText, truncate } from "./sanitize.ts";

/** Where a workspace admin sets the workspace's service key. */
const KEY_SETTING = "in the app's Home tab (Workspace settings) or with `/task settings`";

function seconds(ms: number | undefined): string {
  if (ms === undefined) return "a minute";
  const s = Math.max(1, Math.ceil(ms / 1000));
  return s < 90 ? `${s} second${s === 1 ? "" : "s"}` : `${Math.ceil(s / 60)} minutes`;
}

/** What the person who pressed Stop reads when the service would not stop the run. */
export function stopFailed(err: unknown, runId: string): string {
  return `Stopping the run failed: ${describeServiceError(err, runId)} The run goes on; press Stop to try again.`;
}

/** A specific, actionable sentence for a service failure. Never contains secrets. */
export function describeServiceError(err: unknown, runId?: string): string {
  const run = runId ? ` (run \`${runId}\`)` : "";
  if (!(err instanceof TaskServiceError)) {
    return `Something went wrong on our side${run}. Please try again; if it keeps happening, tell the person who runs this app.`;
  }
  if (err instanceof ServiceKeyMissingError) {
    return `This workspace has no Task service API key yet. A workspace admin can set it ${KEY_SETTING}.`;
  }
  if (err instanceof ServiceKeyUnreadableError) {
    return `This workspace's Task service API key can no longer be read (the app's encryption keys changed, or it is not stored in the app's sealed format). A workspace admin needs to set it again ${KEY_SETTING}.`;
  }
  // The service's words are its own: escaped like answers (no link, mention or markup of theirs).
  const detail = err.detail ? ` (${mrkdwnText(truncate(err.detail, 500))})` : "";
  switch (err.kind) {
    case "input":
      return `${mrkdwnText(err.message)} Please shorten or adjust your request and try again.`;
    case "auth":
      return "The task service rejected this app's API key. Please ask a workspace admin to check the app's TASK_API_KEY setting.";
    case "credits":
      return "The task service account is out of credits. Please ask a workspace admin to add credits, then try again.";
    case "rate_limited":
      return `The task service is receiving too many requests right now. Please try again in ${seconds(err.retryAfterMs)}.`;
    case "validation":
    case "bad_request":
      return `The task service refused the request${detail}. Please adjust it and try again.`;
    case "not_found":
      return "The task service no longer knows this conversation. Please start a new task with `/task`.";
    case "forbidden":
      return "This conversation belongs to another account on the task service. Please start a new task with `/task`.";
    case "server":
      return `The task service failed (HTTP ${err.status ?? "5xx"})${runId ? ` while running \`${runId}\`` : ""}. Please try again in a moment.`;
    case "network":
    case "timeout":
      return `The task service could not be reached${runId ? ` while following \`${runId}\`` : ""}. Please try again in a moment.`;
    case "too_large":
      return `The task service sent more than this app holds at once${run}: ${mrkdwnText(err.message)} What it sent before is kept; open History under the answer for the service's own copy.`;
    case "protocol":
      return `The task service sent an answer this app does not understand${run}. Please try again; if it keeps happening, tell the person who runs this app.`;
  }
}

/** Slack error codes that mean the bot cannot post where it was asked to. */
export function describeSlackPostError(code: string, channelId: string): string | undefined {
  if (code === "not_in_channel") {
    return "I'm not a member of this channel, so I can't post the answer here. Invite me with `/invite @Task Agent` and run the command again, or ask a workspace admin to let me join public channels by myself (Workspace settings, on my Home tab).";
  }
  if (code === "channel_not_found") {
    return channelId.startsWith("D")
      ? "I can't post in this conversation. Open a direct message with me (Task Agent in the Apps section) and run `/task` there."
      : "I can't see this channel (it is probably private). Add me with `/invite @Task Agent` and run the command again.";
  }
  if (code === "is_archived") return "This channel is archived, so I can't post here.";
  if (code === "restricted_action" || code === "ekm_access_denied") {
    return "This workspace does not allow me to post in this channel. Please ask an admin, or try another channel.";
  }
  return undefined;
}

export function slackErrorCode(err: unknown): string | undefined {
  const data = (err as { data?: { error?: unknown } } | null)?.data;
  return typeof data?.error === "string" ? data.error : undefined;
}
