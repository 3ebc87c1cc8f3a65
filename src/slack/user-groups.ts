/**
 * Slack user groups (`@handle`) for the usage policy: a group's members (`usergroups.users.list`),
 * remembered a minute per workspace and group (a change in Slack applies within it), and a
 * workspace's groups for the admin's form.
 */
import type { WebClient } from "@slack/web-api";
import { z } from "zod";
import type { GroupMembers } from "../threads/access/usage-policy.ts";
import type { UserGroupOption } from "../view/usage-policy.ts";
import { remembered } from "./remembered.ts";

const Members = z.object({ users: z.array(z.string()) });

/** `groupMembers(teamId, groupId)` on Slack; throws when Slack cannot answer (not remembered). */
export function slackGroupMembers(options: {
  readonly client: Pick<WebClient, "usergroups">;
  /** The workspace's bot token for each call; undefined: the client's own. */
  readonly tokenFor?: (teamId: string) => string | undefined | Promise<string | undefined>;
  readonly now?: () => number;
}): GroupMembers {
  const known = remembered<ReadonlySet<string>>({ ttlMs: 60_000, max: 5000, now: options.now });
  return (teamId, groupId) =>
    known(`${teamId}/${groupId}`, async () => {
      const token = await options.tokenFor?.(teamId);
      const res = await options.client.usergroups.users.list({
        usergroup: groupId,
        ...(token === undefined ? {} : { token }),
      });
      return new Set(Members.parse(res).users);
    });
}

const Listed = z.object({
  usergroups: z
    .array(z.looseObject({ id: z.string(), handle: z.string(), name: z.string().optional() }))
    .default([]),
});

/** The workspace's enabled user groups (`usergroups.list`), by handle. */
export async function listUserGroups(
  client: Pick<WebClient, "usergroups">,
): Promise<UserGroupOption[]> {
  const res = Listed.parse(await client.usergroups.list({}));
  return res.usergroups
    .map((g) => ({ id: g.id, handle: g.handle, name: g.name ?? g.handle }))
    .sort((a, b) => a.handle.localeCompare(b.handle));
}
