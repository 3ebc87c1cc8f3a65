/** Who administers a workspace, and App Home's part for them: the service's alert, the audits. */
import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import type { AuditTrail } from "../store/audit.ts";
import type { RecordStore } from "../store/types.ts";
import { getServiceAlert } from "../store/usage-policy.ts";
import { AUDIT_SHOWN } from "../view/home.ts";
import type { AdminHome } from "../view/usage-policy.ts";
import { remembered } from "./remembered.ts";

/** An active admin or owner of teamId: not deactivated nor of another workspace (Slack Connect). */
export async function isWorkspaceAdmin(
  client: Pick<WebClient, "users">,
  userId: string,
  teamId: string,
  token?: string,
): Promise<boolean> {
  const { user } = await client.users.info({ user: userId, token });
  if (!user || user.deleted === true) return false;
  if (user.team_id !== undefined && user.team_id !== teamId) return false;
  return user.is_admin === true || user.is_owner === true;
}

/** `isWorkspaceAdmin` asked with a listener's client: no (logged) when Slack cannot say. */
export function isAdminOrNo(
  client: Pick<WebClient, "users">,
  logger: Logger,
  req: { readonly teamId: string; readonly userId: string },
): Promise<boolean> {
  return isWorkspaceAdmin(client, req.userId, req.teamId).catch((err: unknown) => {
    logger.warn({ err }, "could not ask Slack whether someone is a workspace admin");
    return false;
  });
}

export function adminHome(options: {
  readonly client: Pick<WebClient, "users">;
  readonly records: Pick<RecordStore, "getRecord">;
  readonly tokenFor?: (teamId: string) => string | undefined | Promise<string | undefined>;
  readonly audit?: Pick<AuditTrail, "latest"> | undefined;
  readonly now?: () => number;
}): (teamId: string, userId: string) => Promise<AdminHome | undefined> {
  const now = options.now ?? Date.now;
  // A minute: Home is refreshed often, and admins rarely change.
  const admins = remembered<boolean>({ ttlMs: 60_000, max: 10_000, now });
  const isAdmin = (teamId: string, userId: string) =>
    admins(`${teamId}:${userId}`, async () => {
      const token = await options.tokenFor?.(teamId);
      return isWorkspaceAdmin(options.client, userId, teamId, token);
    });
  return async (teamId, userId) => {
    if (!(await isAdmin(teamId, userId))) return undefined;
    const [alert, audit] = await Promise.all([
      getServiceAlert(options.records, teamId, now()),
      options.audit?.latest(teamId, AUDIT_SHOWN),
    ]);
    return { alert, audit };
  };
}
