/** What the coordinator's parts share: their dependencies, and how a failed start is shown. */
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
import type { GroupMembers, storedServiceAlerts } from "./access/usage-policy.ts";

export interface CoordinatorDeps {
  /** Each workspace's Slack writer and service client: a request uses its own workspace's. */
  readonly workspaces: Workspaces;
  readonly store: ThreadStore;
  readonly relay: Pick<
    Relay,
    "start" | "reserve" | "progress" | "release" | "stop" | "isActive" | "onEnded" | "stopQuietly"
  >;
  /** Where a start reports that its run runs (running.ts). */
  readonly threads: RunningThreads;
  readonly files: SlackFileSource;
  readonly limits: RateLimits;
  readonly people: PeoplePolicy;
  readonly logger: Logger;
  readonly now: () => number;
  readonly preferences: Preferences;
  readonly home: HomeRefresher;
  readonly groupMembers?: GroupMembers | undefined;
  /** Asked before a new task in a channel asks the service. */
  readonly botMembership?: BotMembership | undefined;
  readonly serviceAlerts: ReturnType<typeof storedServiceAlerts>;
  readonly threadHistory?: ThreadHistory | undefined;
  readonly threadContext?: ThreadContextConfig | undefined;
  /** What the process may hold of the service's data (shared with the relay), for "Get it". */
  readonly memory?: MemoryLimits | undefined;
  readonly audit?: Pick<AuditTrail, "record"> | undefined;
  /** Ends the Workflow Builder steps whose task is refused (the relay ends the others). */
  readonly workflowSteps?: WorkflowSteps | undefined;
  readonly directMessages?: DirectMessages | undefined;
}

/** Turns a run's message into the reason its start failed. */
export async function showStartError(
  deps: CoordinatorDeps,
  key: SlackThreadKey,
  messageTs: string,
  err: unknown,
  startedAt: number,
  why = describeServiceError(err),
): Promise<void> {
  const elapsedMs = deps.now() - startedAt;
  const payload = renderRun({ text: "", state: "error", reason: why, elapsedMs })[0];
  if (!payload) return;
  try {
    await deps.workspaces.writer(key.teamId).update(key.channelId, messageTs, payload);
  } catch (e) {
    deps.logger.error({ err: e }, "could not show an error in the thread");
  }
}
