/**
 * With OAuth, which workspaces may install and use the app (TASK_ALLOWED_TEAMS) and which may
 * spend TASK_API_KEY while they have no key of their own (TASK_API_KEY_FOR). Pure.
 */
import type { SlackOAuthConfig } from "../../config/workspaces.ts";

export type TeamPolicy = ReturnType<typeof teamPolicy>;

const listed = (ids: ReadonlySet<string>, teamId?: string, enterpriseId?: string): boolean =>
  (teamId !== undefined && ids.has(teamId)) ||
  (enterpriseId !== undefined && ids.has(enterpriseId));

export function teamPolicy(oauth: SlackOAuthConfig | undefined) {
  return {
    allows: (teamId: string | undefined, enterpriseId: string | undefined): boolean =>
      oauth?.allowedTeams === undefined || listed(oauth.allowedTeams, teamId, enterpriseId),
    lendsAppKey: (teamId: string, enterpriseId: string | undefined): boolean =>
      oauth === undefined ||
      oauth.apiKeyFor === "all" ||
      listed(oauth.apiKeyFor, teamId, enterpriseId),
  };
}

/** What a person of a workspace the operator does not allow is told. */
export const notAllowedText = (teamId: string | undefined): string =>
  `Task Agent is not enabled for this workspace${teamId ? ` (${teamId})` : ""}. Ask the people who run Task Agent to add it to TASK_ALLOWED_TEAMS.`;
