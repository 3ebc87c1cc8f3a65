/**
 * The status line Slack's agent view shows under a DM thread while a run works ("is working
 * on your task…" with rotating loading messages), cleared when the run ends. Best effort:
 * a status that cannot be set never stops the task.
 */
import type { SlackThreadKey } from "../store/types.ts";
import type { CoordinatorDeps } from "./task-context.ts";

const WORKING = "is working on your task…";
/** At most 10, each at most 50 characters (assistant.threads.setStatus). */
const LOADING = [
  "Reading your request…",
  "Planning the work…",
  "Building it…",
  "Checking the result…",
] as const;

export async function showWorking(deps: CoordinatorDeps, key: SlackThreadKey): Promise<void> {
  await deps.writer
    .setStatus(key.channelId, key.threadTs, WORKING, LOADING)
    .catch((err: unknown) => deps.logger.debug({ err }, "could not set the thread's status"));
}

export async function clearWorking(deps: CoordinatorDeps, key: SlackThreadKey): Promise<void> {
  await deps.writer
    .setStatus(key.channelId, key.threadTs, "")
    .catch((err: unknown) => deps.logger.debug({ err }, "could not clear the thread's status"));
}
