/**
 * Who may use the app (start and continue tasks, open a task's History and Files): members of
 * the workspace; guests and people from other organisations (Slack Connect) only when the
 * operator allows them. When Slack cannot say who someone is (`users.info` failing, a 429
 * under load), the request is refused (fail closed) and the person is asked to try again in a
 * moment: letting them through would let a guest in whenever Slack is busy, which a guest can
 * help along by sending many requests. Nothing remembers the failure (the Slack writer keeps
 * only answers), so the next try asks Slack again. With both guests and other organisations
 * allowed nobody is looked up.
 */
import type { Logger } from "pino";
import type { Workspaces } from "../ports.ts";

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
