/**
 * The one chain of checks a request to start or continue a task goes through, whatever its
 * surface (command, modal, mention, DM, agent view, a reply, the Continue form): who asks
 * (policy.ts: members only unless guests or other organisations are allowed), the workspace's
 * usage policy (usage-policy.ts), then how often (rate-limits.ts: a slot is taken when the
 * request passes). The prompt's own checks (empty, too long, a bad option) come before it.
 * A task's History and Files views (and "Get it") go through its first two links only: they
 * start nothing, so neither the hourly quota nor the rate limits count them.
 */
import { personRefusal } from "./policy.ts";
import { takeRateSlot } from "./rate-limits.ts";
import type { CoordinatorDeps } from "../coordinator-deps.ts";
import { accessRefusal, usageRefusal } from "./usage-policy.ts";

/** The person asking, where. */
export interface Asker {
  readonly teamId: string;
  readonly channelId: string;
  readonly userId: string;
}

/** Why `asker` may not start or continue a task now (what to tell them), or undefined. */
export async function askerRefusal(
  deps: CoordinatorDeps,
  asker: Asker,
): Promise<string | undefined> {
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
export async function viewerRefusal(
  deps: CoordinatorDeps,
  asker: Asker,
): Promise<string | undefined> {
  const { teamId, channelId, userId } = asker;
  return (
    (await personRefusal(deps, deps.people, teamId, userId)) ??
    (await accessRefusal(deps, { teamId, channelId, userId }))
  );
}
