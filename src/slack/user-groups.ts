/**
 * Slack user groups (`@handle`) for the usage policy: a group's members (`usergroups.users.list`),
 * remembered briefly per workspace and group, and a workspace's groups for the admin's form.
 */
import type { WebClient } from "@slack/web-api";
import { z } from "zod";
import type { GroupMembers } from "../threads/access/usage-policy.ts";

/** How long a group's members are remembered: a change in Slack applies within a minute. */
export const GROUP_MEMBERS_TTL_MS = 60_000;
/** Groups remembered at most (the oldest are dropped first). */
const REMEMBERED_MAX = 5_000;

export interface UserGroupsOptions {
  readonly client: Pick<WebClient, "usergroups">;
  /** The workspace's bot token for each call; undefined: the client's own. */
  readonly tokenFor?: (teamId: string) => string | undefined | Promise<string | undefined>;
  readonly ttlMs?: number;
  readonly now?: () => number;
}

const Members = z.object({ users: z.array(z.string()) });

/** `groupMembers(teamId, groupId)` on Slack; throws when Slack cannot answer (not remembered). */
export function slackGroupMembers(options: UserGroupsOptions): GroupMembers {
  const ttl = options.ttlMs ?? GROUP_MEMBERS_TTL_MS;
  const now = options.now ?? Date.now;
  const known = new Map<string, { members: ReadonlySet<string>; until: number }>();
  const asking = new Map<string, Promise<ReadonlySet<string>>>();

  const ask = async (teamId: string, groupId: string): Promise<ReadonlySet<string>> => {
    const token = await options.tokenFor?.(teamId);
    const res = await options.client.usergroups.users.list({
      usergroup: groupId,
      ...(token === undefined ? {} : { token }),
    });
    return new Set(Members.parse(res).users);
  };

  return (teamId, groupId) => {
    const key = `${teamId}/${groupId}`;
    const hit = known.get(key);
    if (hit && hit.until > now()) return Promise.resolve(hit.members);
    // Requests that arrive together (a burst) share one call.
    let pending = asking.get(key);
    if (!pending) {
      pending = ask(teamId, groupId)
        .then((members) => {
          known.delete(key);
          if (known.size >= REMEMBERED_MAX) known.delete(known.keys().next().value ?? "");
          known.set(key, { members, until: now() + ttl });
          return members;
        })
        .finally(() => asking.delete(key));
      asking.set(key, pending);
    }
    return pending;
  };
}

/** A user group as the admin's form offers it. */
export interface UserGroupChoice {
  readonly id: string;
  readonly handle: string;
  readonly name: string;
}

const Listed = z.object({
  usergroups: z
    .array(z.looseObject({ id: z.string(), handle: z.string(), name: z.string().optional() }))
    .default([]),
});

/** The workspace's enabled user groups (`usergroups.list`), by handle. */
export async function listUserGroups(
  client: Pick<WebClient, "usergroups">,
): Promise<UserGroupChoice[]> {
  const res = Listed.parse(await client.usergroups.list({}));
  return res.usergroups
    .map((g) => ({ id: g.id, handle: g.handle, name: g.name ?? g.handle }))
    .sort((a, b) => a.handle.localeCompare(b.handle));
}
