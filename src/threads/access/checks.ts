/**
 * The check chain for starting or continuing a task: who asks, the usage policy, then how often (a
 * slot is taken when it passes). A task's views ("Get it" too) take the first two only.
 */
import type { ThreadStore, Workspaces } from "../ports.ts";
import { type UsageDeps, type UsageRequest, usageRefusal } from "./usage-policy.ts";

type CheckDeps = UsageDeps & {
  readonly workspaces: Pick<Workspaces, "writer">;
  readonly people: PeoplePolicy;
  readonly limits: RateLimits;
};

/** Why `asker` may not start or continue a task now (what to tell them), or undefined. */
export async function askerRefusal(deps: CheckDeps, asker: UsageRequest) {
  return (
    (await personRefusal(deps, asker)) ??
    (await usageRefusal(deps, asker)) ??
    (await takeRateSlot(deps.store, deps.limits, asker, deps.now()))
  );
}

/** Why `asker` may not see a task's History or Files, or get one of its files, in its channel. */
export async function viewerRefusal(deps: CheckDeps, asker: UsageRequest) {
  return (await personRefusal(deps, asker)) ?? (await usageRefusal(deps, asker, false));
}

/**
 * Who may use the app: members; guests and other organisations' people (Slack Connect) only when
 * allowed. Someone Slack cannot identify just now is refused, else a guest gets in whenever Slack
 * is busy (docs/operations.md, "Who"). With both allowed, nobody is looked up.
 */
export interface PeoplePolicy {
  readonly allowGuests: boolean;
  readonly allowExternal: boolean;
}

export const GUEST_REFUSAL =
  "Guest accounts can't start or continue tasks in this workspace. A workspace admin can allow it (the app's TASK_ALLOW_GUESTS setting).";
export const PERSON_UNKNOWN =
  "Slack could not confirm who you are just now, so nothing was done. Please try again in a moment.";
const EXTERNAL_REFUSAL =
  "People from other organisations can't start or continue tasks in this workspace. A workspace admin can allow it (the app's TASK_ALLOW_EXTERNAL setting).";

async function personRefusal(deps: CheckDeps, { teamId, userId }: UsageRequest) {
  const policy = deps.people;
  if (policy.allowGuests && policy.allowExternal) return undefined;
  const writer = deps.workspaces.writer(teamId);
  const person = await writer.person(userId).catch(() => undefined);
  if (!person) {
    deps.logger.warn({ user: userId }, "could not tell who sent a request; refused it");
    return PERSON_UNKNOWN;
  }
  if (person.deleted) return "This account is deactivated.";
  if (!policy.allowExternal && person.teamId !== undefined && person.teamId !== teamId) {
    return EXTERNAL_REFUSAL;
  }
  if (!policy.allowGuests && person.guest) return GUEST_REFUSAL;
  return undefined;
}

/**
 * Tasks and follow-ups per person and per channel in any sliding minute (0: no limit), for every
 * instance: one atomic `consumeRate` counts both, so a request refused by either counts in neither.
 */
export interface RateLimits {
  readonly perUserPerMinute: number;
  readonly perChannelPerMinute: number;
}

/** Counts a request against both limits; returns what to tell the person when one is reached. */
export async function takeRateSlot(
  store: Pick<ThreadStore, "consumeRate">,
  limits: RateLimits,
  req: UsageRequest,
  now: number,
): Promise<string | undefined> {
  const user = { name: `user:${req.userId}`, limit: limits.perUserPerMinute };
  const channel = { name: `channel:${req.channelId}`, limit: limits.perChannelPerMinute };
  const counted = [user, channel].filter((l) => l.limit > 0);
  if (counted.length === 0) return undefined;
  const decision = await store.consumeRate(req.teamId, counted, 60_000, now);
  if (decision.allowed) return undefined;
  const wait = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  if (decision.refusedBy === user.name) {
    return `You have started ${user.limit} tasks or follow-ups in the last minute, the most one person may. Please try again in ${wait} s.`;
  }
  return `${channel.limit} tasks or follow-ups were started in this channel in the last minute, the most it takes. Please try again in ${wait} s.`;
}
