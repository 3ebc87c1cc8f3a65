/**
 * The status line Slack's agent view shows under a DM thread while a run works ("is working
 * on your task…" with rotating loading messages), cleared when the run ends; and, where Slack's
 * agent sessions API exists, the session's status (processing while a run works, which gives
 * people Slack's own Stop; active between runs). Best effort: a status that cannot be set
 * never stops the task.
 */
import type { Logger } from "pino";
import type { SlackThreadKey } from "../store/types.ts";
import type { Workspaces } from "./ports.ts";

/** What setting a thread's status needs. */
interface StatusDeps {
  readonly workspaces: Pick<Workspaces, "writer">;
  readonly logger: Logger;
}

const WORKING = "is working on your task…";
/** At most 10, each at most 50 characters (assistant.threads.setStatus). */
const LOADING = [
  "Reading your request…",
  "Planning the work…",
  "Building it…",
  "Checking the result…",
] as const;

/** `title` names a new session (the task's prompt); a session that exists keeps its own. */
export async function showWorking(
  deps: StatusDeps,
  key: SlackThreadKey,
  title?: string,
): Promise<void> {
  const { logger } = deps;
  const writer = deps.workspaces.writer(key.teamId);
  await Promise.all([
    writer
      .setStatus(key.channelId, key.threadTs, WORKING, LOADING)
      .catch((err: unknown) => logger.debug({ err }, "could not set the thread's status")),
    writer
      .setSessionStatus(key.channelId, key.threadTs, "processing", title)
      .catch((err: unknown) => logger.debug({ err }, "could not set the session's status")),
    title
      ? writer
          .setTitle(key.channelId, key.threadTs, title)
          .catch((err: unknown) => logger.debug({ err }, "could not title the thread"))
      : undefined,
  ]);
}

export async function clearWorking(deps: StatusDeps, key: SlackThreadKey): Promise<void> {
  const { logger } = deps;
  const writer = deps.workspaces.writer(key.teamId);
  await Promise.all([
    writer
      .setStatus(key.channelId, key.threadTs, "")
      .catch((err: unknown) => logger.debug({ err }, "could not clear the thread's status")),
    writer
      .setSessionStatus(key.channelId, key.threadTs, "active")
      .catch((err: unknown) => logger.debug({ err }, "could not set the session's status")),
  ]);
}
