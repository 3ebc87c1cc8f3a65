/**
 * The one chain of checks a request to start or continue a task goes through, whatever its
 * surface (command, modal, mention, DM, agent view, a reply, the Continue form): who asks
 * (policy.ts: members only unless guests or other organisations are allowed), the workspace's
 * usage policy (usage-policy.ts), then how often (rate-limits.ts: a slot is taken when the
 * request passes). The prompt's own checks (empty, too long, a bad option) come before it.
 */
import { personRefusal } from "./policy.ts";
import { takeRateSlot } from "./rate-limits.ts";
import type { CoordinatorDeps } from "./task-context.ts";
import { usageRefusal } from "./usage-policy.ts";

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
