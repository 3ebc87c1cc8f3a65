/**
 * Who may start and continue tasks: members of the workspace; guests and people from other
 * organisations (Slack Connect) only when the operator allows them. When Slack cannot say
 * who someone is (users.info failing), they are let through and it is logged: an attacker
 * cannot make Slack forget them, and a Slack hiccup should not stop everyone's work.
 */
import type { Logger } from "pino";
import type { Workspaces } from "./ports.ts";

export interface PeoplePolicy {
  readonly allowGuests: boolean;
  readonly allowExternal: boolean;
}

export const MEMBERS_ONLY: PeoplePolicy = { allowGuests: false, allowExternal: false };

export const GUEST_REFUSAL =
  "Guest accounts can't start or continue tasks in this workspace. A workspace admin can allow it (the app's TASK_ALLOW_GUESTS setting).";
export const EXTERNAL_REFUSAL =
  "People from other organisations can't start or continue tasks in this workspace. A workspace admin can allow it (the app's TASK_ALLOW_EXTERNAL setting).";

/** Why `userId` may not start or continue a task in `teamId`, or undefined when they may. */
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
    deps.logger.warn({ user: userId }, "could not tell who sent a request; letting it through");
    return undefined;
  }
  if (person.deleted) return "This account is deactivated.";
  if (!policy.allowExternal && person.teamId !== undefined && person.teamId !== teamId) {
    return EXTERNAL_REFUSAL;
  }
  if (!policy.allowGuests && person.guest) return GUEST_REFUSAL;
  return undefined;
}
