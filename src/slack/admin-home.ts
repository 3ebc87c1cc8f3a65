/**
 * Who administers a workspace (`users.info`: `is_admin` or `is_owner`), and App Home's admin
 * part for them: the service's last refusal of the workspace's account, and its audit trail.
 */
import type { WebClient } from "@slack/web-api";
import type { AuditTrail } from "../store/audit.ts";
import type { RecordStore } from "../store/types.ts";
import { getServiceAlert } from "../store/usage-policy.ts";
import { AUDIT_SHOWN } from "../view/home.ts";
import type { AdminHome } from "../view/usage-policy.ts";

/**
 * Whether `userId` is an active admin or owner of workspace `teamId` (the one the client, or
 * `token`, speaks for): as Stop checks, a person of another workspace (Slack Connect) or a
 * deactivated account is not, whatever their own workspace says of them.
 */
export async function isWorkspaceAdmin(
  client: Pick<WebClient, "users">,
  userId: string,
  where: { readonly teamId: string; readonly token?: string | undefined },
): Promise<boolean> {
  const { token, teamId } = where;
  const { user } = await client.users.info({
    user: userId,
    ...(token === undefined ? {} : { token }),
  });
  if (!user || user.deleted === true) return false;
  if (user.team_id !== undefined && user.team_id !== teamId) return false;
  return user.is_admin === true || user.is_owner === true;
}

export interface AdminHomeOptions {
  readonly client: Pick<WebClient, "users">;
  readonly records: Pick<RecordStore, "getRecord">;
  /** The workspace's bot token for each call; undefined: the client's own. */
  readonly tokenFor?: (teamId: string) => string | undefined | Promise<string | undefined>;
  /** The workspace's audit trail, whose latest events the admins see. */
  readonly audit?: Pick<AuditTrail, "latest"> | undefined;
  readonly now?: () => number;
}

/** How long whether someone administers a workspace is taken as known (Home refreshes often). */
const ADMIN_TTL_MS = 60_000;
const ADMINS_MAX = 10_000;

/** App Home's admin part for a person: undefined unless they administer the workspace. */
export function adminHome(
  options: AdminHomeOptions,
): (teamId: string, userId: string) => Promise<AdminHome | undefined> {
  const now = options.now ?? Date.now;
  const known = new Map<string, { admin: boolean; until: number }>();
  const isAdmin = async (teamId: string, userId: string): Promise<boolean> => {
    const key = `${teamId}:${userId}`;
    const hit = known.get(key);
    if (hit && hit.until > now()) return hit.admin;
    const token = await options.tokenFor?.(teamId);
    const admin = await isWorkspaceAdmin(options.client, userId, { teamId, token });
    known.delete(key);
    if (known.size >= ADMINS_MAX) known.delete(known.keys().next().value ?? "");
    known.set(key, { admin, until: now() + ADMIN_TTL_MS });
    return admin;
  };
  return async (teamId, userId) => {
    if (!(await isAdmin(teamId, userId))) return undefined;
    const [alert, audit] = await Promise.all([
      getServiceAlert(options.records, teamId, now()),
      options.audit?.latest(teamId, AUDIT_SHOWN),
    ]);
    return { alert, audit };
  };
}
