/**
 * The one chain of checks a request to start or continue a task goes through, whatever its
 * surface (command, modal, mention, DM, agent view, a reply, the Continue form): who asks, the
 * workspace's usage policy (usage-policy.ts), then how often (a slot is taken when the request
 * passes). The prompt's own checks come before it. A task's History and Files views (and "Get
 * it") go through the first two only: they start nothing, so no quota or rate limit counts them.
 */
import type { Logger } from "pino";
import type { ThreadStore, Workspaces } from "../ports.ts";
import { accessRefusal, type UsageDeps, usageRefusal } from "./usage-policy.ts";

/** What the checks read: the people policy, the workspace's usage policy, the rate limits. */
type CheckDeps = UsageDeps & {
  readonly workspaces: Pick<Workspaces, "writer">;
  readonly people: PeoplePolicy;
  readonly limits: RateLimits;
};

/** The person asking, where. */
export interface Asker {
  readonly teamId: string;
  readonly channelId: string;
  readonly userId: string;
}

/** Why `asker` may not start or continue a task now (what to tell them), or undefined. */
export async function askerRefusal(deps: CheckDeps, asker: Asker): Promise<string | undefined> {
  const { teamId, channelId, userId } = asker;
  return (
    (await personRefusal(deps, deps.people, teamId, userId)) ??
    (await usageRefusal(deps, { teamId, channelId, userId })) ??
    (await takeRateSlot(deps.store, deps.limits, { teamId, channelId, userId }, deps.now()))
  );
}

/**
 * Why `asker` may not see a task's History or Files, or get one of its files, in that task's
 * channel (what to tell them), or undefined: the same people and usage checks as a start.
 */
export async function viewerRefusal(deps: CheckDeps, asker: Asker): Promise<string | undefined> {
  const { teamId, channelId, userId } = asker;
  return (
    (await personRefusal(deps, deps.people, teamId, userId)) ??
    (await accessRefusal(deps, { teamId, channelId, userId }))
  );
}

/**
 * Who may use the app: members of the workspace; guests and people from other organisations
 * (Slack Connect) only when the operator allows them. When Slack cannot say who someone is
 * (`users.info` failing, a 429 under load), the request is refused (fail closed) and the person
 * asked to try again: letting them through would let a guest in whenever Slack is busy, which a
 * guest can help along by sending many requests. Nothing remembers the failure, so the next try
 * asks Slack again. With both allowed, nobody is looked up.
 */
export interface PeoplePolicy {
  readonly allowGuests: boolean;
  readonly allowExternal: boolean;
}

export const MEMBERS_ONLY: PeoplePolicy = { allowGuests: false, allowExternal: false };

export const GUEST_REFUSAL =
  "Guest accounts can't start or continue tasks in this workspace. A workspace admin can allow it (the app's TASK_ALLOW_GUESTS setting).";
export const PERSON_UNKNOWN =
  "Slack could not confirm who you are just now, so nothing was done. Please try again in a moment.";
export const EXTERNAL_REFUSAL =
  "People from other organisations can't start or continue tasks in this workspace. A workspace admin can allow it (the app's TASK_ALLOW_EXTERNAL setting).";

/** Why `userId` may not use the app in `teamId`, or undefined when they may. */
export async function personRefusal(
  deps: { readonly workspaces: Pick<Workspaces, "writer">; readonly logger: Logger },
  policy: PeoplePolicy,
  teamId: string,
  userId: string,
): Promise<string | undefined> {
  if (policy.allowGuests && policy.allowExternal) return undefined;
  const person = await deps.workspaces
    .writer(teamId)
    .person(userId)
    .catch(() => undefined);
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
 * Fairness limits on starting and continuing tasks: per person and per channel, in any sliding
 * minute, shared by every instance. Both are checked and counted by one atomic store operation
 * per request (`consumeRate`): a request refused by either counts in neither.
 */
export interface RateLimits {
  /** Tasks and follow-ups one person may start per minute (0: no limit). */
  readonly perUserPerMinute: number;
  /** Tasks and follow-ups all people together may start per minute in one channel. */
  readonly perChannelPerMinute: number;
}

export const NO_RATE_LIMITS: RateLimits = { perUserPerMinute: 0, perChannelPerMinute: 0 };

const WINDOW_MS = 60_000;

/**
 * Counts a request by `userId` in `channelId` against both limits; returns what to tell the
 * person when one is reached (then nothing is counted in either).
 */
export async function takeRateSlot(
  store: Pick<ThreadStore, "consumeRate">,
  limits: RateLimits,
  req: { readonly teamId: string; readonly channelId: string; readonly userId: string },
  now: number,
): Promise<string | undefined> {
  const user = { name: `user:${req.userId}`, limit: limits.perUserPerMinute };
  const channel = { name: `channel:${req.channelId}`, limit: limits.perChannelPerMinute };
  const counted = [user, channel].filter((l) => l.limit > 0);
  if (counted.length === 0) return undefined;
  const decision = await store.consumeRate(req.teamId, counted, WINDOW_MS, now);
  if (decision.allowed) return undefined;
  const wait = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  if (decision.refusedBy === user.name) {
    return `You have started ${user.limit} tasks or follow-ups in the last minute, the most one person may. Please try again in ${wait} s.`;
  }
  return `${channel.limit} tasks or follow-ups were started in this channel in the last minute, the most it takes. Please try again in ${wait} s.`;
}
