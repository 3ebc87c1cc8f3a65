/**
 * Who administers a workspace (`users.info`: `is_admin` or `is_owner`), and App Home's admin
 * part for them: the service's last refusal of the workspace's account.
 */
import type { WebClient } from "@slack/web-api";
import type { RecordStore } from "../store/types.ts";
import { getServiceAlert } from "../store/usage-policy.ts";
import type { AdminHome } from "../view/usage-policy.ts";

/** Whether `userId` is an admin or owner of the workspace the client (or `token`) speaks for. */
export async function isWorkspaceAdmin(
  client: Pick<WebClient, "users">,
  userId: string,
  token?: string,
): Promise<boolean> {
  const res = await client.users.info({ user: userId, ...(token === undefined ? {} : { token }) });
  return res.user?.is_admin === true || res.user?.is_owner === true;
}

export interface AdminHomeOptions {
  readonly client: Pick<WebClient, "users">;
  readonly records: Pick<RecordStore, "getRecord">;
  /** The workspace's bot token for each call; undefined: the client's own. */
  readonly tokenFor?: (teamId: string) => string | undefined | Promise<string | undefined>;
  readonly now?: () => number;
}

/** App Home's admin part for a person: undefined unless they administer the workspace. */
export function adminHome(
  options: AdminHomeOptions,
): (teamId: string, userId: string) => Promise<AdminHome | undefined> {
  const now = options.now ?? Date.now;
  return async (teamId, userId) => {
    const token = await options.tokenFor?.(teamId);
    if (!(await isWorkspaceAdmin(options.client, userId, token))) return undefined;
    const alert = await getServiceAlert(options.records, teamId, now());
    return { alert };
  };
}
