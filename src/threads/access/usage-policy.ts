/**
 * A workspace's usage policy applied to a request (who may, where, a quota per person per hour),
 * and the service's refusals of the workspace's account (402, 429) kept for its admins.
 */
import type { Logger } from "pino";
import { TaskServiceError } from "../../service/errors.ts";
import {
  clearServiceAlert,
  getUsagePolicy,
  putServiceAlert,
  type ServiceAlert,
  type UsagePolicy,
} from "../../store/usage-policy.ts";
import type { ThreadStore } from "../ports.ts";
import type { NewTask } from "../requests.ts";

/** The members (user ids) of one of a workspace's user groups; throws when Slack cannot say. */
export type GroupMembers = (teamId: string, groupId: string) => Promise<ReadonlySet<string>>;

export interface UsageDeps {
  readonly store: Pick<ThreadStore, "getRecord" | "consumeRate">;
  /** Slack's `usergroups.users.list` for the workspace; without it groups cannot be checked. */
  readonly groupMembers?: GroupMembers | undefined;
  readonly logger: Logger;
  readonly now: () => number;
}

/** Who asks, where. */
export type UsageRequest = Pick<NewTask, "teamId" | "channelId" | "userId">;

export const POLICY_UNREADABLE =
  "This workspace's usage policy could not be read, so no task can start right now. A workspace admin can save it again from my Home tab.";

/** Names in a sentence: "a", "a or b", "a, b or c". */
function either(names: readonly string[]): string {
  return names.length <= 1
    ? (names[0] ?? "")
    : `${names.slice(0, -1).join(", ")} or ${names.at(-1) ?? ""}`;
}

/**
 * Why the policy refuses `req`, or undefined; an unreadable policy refuses (fail closed). The quota
 * is counted last (a request refused otherwise uses none), and only with `quota`.
 */
export async function usageRefusal(deps: UsageDeps, req: UsageRequest, quota = true) {
  let policy: UsagePolicy;
  try {
    policy = await getUsagePolicy(deps.store, req.teamId);
  } catch (err) {
    deps.logger.error({ err, team: req.teamId }, "could not read the usage policy");
    return POLICY_UNREADABLE;
  }
  return (
    channelRefusal(policy, req.channelId) ??
    (await groupRefusal(deps, policy, req)) ??
    (quota ? await quotaRefusal(deps, policy, req) : undefined)
  );
}

function channelRefusal(policy: UsagePolicy, channelId: string): string | undefined {
  const { where } = policy;
  if (where.kind === "all" || where.channelIds.includes(channelId)) return undefined;
  const list = either(where.channelIds.map((c) => `<#${c}>`));
  const here = channelId.startsWith("D") ? "in direct messages" : "in this channel";
  return `Tasks can't be started ${here}: this workspace allows them only in ${list} (set by its admins).`;
}

/** Members of the allowed groups only; when Slack cannot say who is, refused (fail closed). */
async function groupRefusal(deps: UsageDeps, policy: UsagePolicy, req: UsageRequest) {
  if (policy.who.kind === "everyone") return undefined;
  const groups = policy.who.groupIds;
  let unchecked = 0;
  for (const groupId of groups) {
    try {
      if (!deps.groupMembers) throw new Error("no way to ask Slack for user groups");
      const members = await deps.groupMembers(req.teamId, groupId);
      if (members.has(req.userId)) return undefined;
    } catch (err) {
      unchecked++;
      deps.logger.warn({ err, team: req.teamId, group: groupId }, "could not list a user group");
    }
  }
  const who = either(groups.map((groupId) => `<!subteam^${groupId}>`));
  if (unchecked > 0) {
    return `Only members of ${who} may start tasks in this workspace, and Slack could not tell me whether you are one right now. Please try again in a minute.`;
  }
  return `Only members of ${who} may start tasks in this workspace (set by its admins).`;
}

/** N tasks per person in any sliding hour, for every instance: one `consumeRate` per request. */
async function quotaRefusal(deps: UsageDeps, policy: UsagePolicy, req: UsageRequest) {
  const limit = policy.perUserPerHour;
  if (limit <= 0) return undefined;
  const quota = [{ name: `quota:${req.userId}`, limit }];
  const decision = await deps.store.consumeRate(req.teamId, quota, 3_600_000, deps.now());
  if (decision.allowed) return undefined;
  const minutes = Math.max(1, Math.ceil(decision.retryAfterMs / 60_000));
  const tasks = limit === 1 ? "1 task" : `${limit} tasks`;
  return `You have started ${tasks} in the last hour (follow-ups included), the most this workspace allows per person. You can start another in ${minutes} min.`;
}

/**
 * Told when the service answers a create or follow-up: keeps its last 402 or 429 for the
 * workspace's admins (App Home), cleared when a task starts again. Never waits for the store.
 */
export function storedServiceAlerts(deps: {
  readonly store: Pick<ThreadStore, "getRecord" | "putRecord" | "deleteRecord">;
  readonly logger: Logger;
  readonly now: () => number;
}) {
  const failed = (err: unknown) =>
    deps.logger.warn({ err }, "could not record the service's answer for the admins");
  return {
    refused(teamId: string, err: unknown): void {
      if (!(err instanceof TaskServiceError)) return;
      if (err.kind !== "credits" && err.kind !== "rate_limited") return;
      const at = deps.now();
      const reset = err.retryAfterMs === undefined ? {} : { resetAt: at + err.retryAfterMs };
      const alert: ServiceAlert =
        err.kind === "credits" ? { status: 402, at } : { status: 429, at, ...reset };
      putServiceAlert(deps.store, teamId, alert).catch(failed);
    },
    accepted(teamId: string): void {
      clearServiceAlert(deps.store, teamId).catch(failed);
    },
  };
}
