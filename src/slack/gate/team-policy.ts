/**
 * The operator's say over workspaces, with many of them (OAuth): which may install and use the
 * app (TASK_ALLOWED_TEAMS), and which may spend TASK_API_KEY while they have no key of their own
 * (TASK_API_KEY_FOR). With one workspace the app serves that one, on TASK_API_KEY. Pure.
 */
import type { SlackOAuthConfig } from "../../config/workspaces.ts";

export interface TeamPolicy {
  /** Whether the workspace (or its organisation) may install and use the app. */
  allows(teamId: string | undefined, enterpriseId: string | undefined): boolean;
  /** Whether the workspace's tasks may use TASK_API_KEY while it has no key of its own. */
  lendsAppKey(teamId: string, enterpriseId: string | undefined): boolean;
}

const listed = (ids: ReadonlySet<string>, teamId?: string, enterpriseId?: string): boolean =>
  (teamId !== undefined && ids.has(teamId)) ||
  (enterpriseId !== undefined && ids.has(enterpriseId));

export function teamPolicy(oauth: SlackOAuthConfig | undefined): TeamPolicy {
  if (!oauth) return { allows: () => true, lendsAppKey: () => true };
  const { allowedTeams, apiKeyFor } = oauth;
  return {
    allows: (teamId, enterpriseId) =>
      allowedTeams === undefined || listed(allowedTeams, teamId, enterpriseId),
    lendsAppKey: (teamId, enterpriseId) =>
      apiKeyFor === "all" || listed(apiKeyFor, teamId, enterpriseId),
  };
}

/** What a person of a workspace the operator does not allow is told. */
export const notAllowedText = (teamId: string | undefined): string =>
  `Task Agent is not enabled for this workspace${teamId ? ` (${teamId})` : ""}. Ask the people who run Task Agent to add it to TASK_ALLOWED_TEAMS.`;
