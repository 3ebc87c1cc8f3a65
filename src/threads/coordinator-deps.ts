/**
 * What the coordinator's parts share: their dependencies, and the bot message that shows a run
 * being started ("working", or the reason when the start failed).
 */
import type { Logger } from "pino";
import type { SlackThreadKey } from "../store/types.ts";
import { describeServiceError } from "../view/errors.ts";
import { renderRun } from "../view/render.ts";
import type { ThreadContextConfig } from "../config/features.ts";
import type {
  BotMembership,
  DirectMessages,
  HomeRefresher,
  RunningThreads,
  SlackFileSource,
  ThreadHistory,
  ThreadStore,
  WorkflowSteps,
  Workspaces,
} from "./ports.ts";
import type { PeoplePolicy, RateLimits } from "./access/checks.ts";
import type { Preferences } from "./preferences.ts";
import type { MemoryLimits } from "../runs/memory.ts";
import type { Relay } from "../runs/relay.ts";
import type { AuditTrail } from "../store/audit.ts";
import type { GroupMembers, ServiceAlerts } from "./access/usage-policy.ts";

export interface CoordinatorDeps {
  /** Each workspace's Slack writer and service client: a request uses its own workspace's. */
  readonly workspaces: Workspaces;
  readonly store: ThreadStore;
  /** The part of the relay the coordinator uses. */
  readonly relay: Pick<
    Relay,
    "start" | "reserve" | "progress" | "release" | "stop" | "isActive" | "onEnded" | "stopQuietly"
  >;
  /** Where a start reports that its run runs: this thread layer's record of it (running.ts). */
  readonly threads: RunningThreads;
  /** Where the files people attach are read from. */
  readonly files: SlackFileSource;
  /** How many tasks and follow-ups a person, and a channel, may start per minute. */
  readonly limits: RateLimits;
  /** Who may start and continue tasks. */
  readonly people: PeoplePolicy;
  readonly logger: Logger;
  readonly now: () => number;
  /** Recent tasks and default options. */
  readonly preferences: Preferences;
  /** Shows a person's App Home again when one of their tasks changed. */
  readonly home: HomeRefresher;
  /** Members of a workspace's user group, for its usage policy. */
  readonly groupMembers?: GroupMembers | undefined;
  /** Whether the app is in a channel, before a new task there asks the service. */
  readonly botMembership?: BotMembership | undefined;
  /** Keeps the service's refusals of the workspace's account (402, 429) for its admins. */
  readonly serviceAlerts: ServiceAlerts;
  /** Reads the thread a mention was posted in, within its budget (thread-context/). */
  readonly threadHistory?: ThreadHistory | undefined;
  readonly threadContext?: ThreadContextConfig | undefined;
  /** What the process may hold of the service's data (shared with the relay): files read for "Get it". */
  readonly memory?: MemoryLimits | undefined;
  /** Where admin actions are written (another person's run stopped, records erased). */
  readonly audit?: Pick<AuditTrail, "record"> | undefined;
  /** Ends the Workflow Builder steps whose task is refused (the relay ends the others). */
  readonly workflowSteps?: WorkflowSteps | undefined;
  /** Opens a person's DM with the app (a step without a channel answers there). */
  readonly directMessages?: DirectMessages | undefined;
}

/** Turns a run's message into the reason its start failed. */
export async function showStartError(
  deps: CoordinatorDeps,
  key: SlackThreadKey,
  messageTs: string,
  err: unknown,
  startedAt: number,
  why?: string,
): Promise<void> {
  const reason = why ?? describeServiceError(err);
  const payload = renderRun({
    text: "",
    state: "error",
    reason,
    elapsedMs: deps.now() - startedAt,
  })[0];
  if (!payload) return;
  try {
    await deps.workspaces.writer(key.teamId).update(key.channelId, messageTs, payload);
  } catch (e) {
    deps.logger.error({ err: e }, "could not show an error in the thread");
  }
}
