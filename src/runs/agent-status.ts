/**
 * The status line Slack's agent view shows under a DM thread while a run works, and the agent
 * session's status. Best effort: a status that cannot be set never stops the task.
 */
import type { Logger } from "pino";
import type { SlackThreadKey } from "../store/types.ts";
import type { Workspaces } from "./ports.ts";

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
  const { channelId, threadTs } = key;
  const writer = deps.workspaces.writer(key.teamId);
  await bestEffort(deps.logger, [
    [writer.setStatus(channelId, threadTs, WORKING, LOADING), "set the thread's status"],
    [writer.setSessionStatus(channelId, threadTs, "processing", title), "set the session's status"],
    [title ? writer.setTitle(channelId, threadTs, title) : undefined, "title the thread"],
  ]);
}

export async function clearWorking(deps: StatusDeps, key: SlackThreadKey): Promise<void> {
  const { channelId, threadTs } = key;
  const writer = deps.workspaces.writer(key.teamId);
  await bestEffort(deps.logger, [
    [writer.setStatus(channelId, threadTs, ""), "clear the thread's status"],
    [writer.setSessionStatus(channelId, threadTs, "active"), "set the session's status"],
  ]);
}

/** Waits for calls made at once; one that fails is logged and forgotten. */
function bestEffort(
  logger: Logger,
  calls: readonly (readonly [Promise<void> | undefined, string])[],
): Promise<unknown> {
  return Promise.all(
    calls.map(([call, what]) =>
      call?.catch((err: unknown) => logger.debug({ err }, `could not ${what}`)),
    ),
  );
}
