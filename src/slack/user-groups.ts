/** Slack user groups (`@handle`) for the usage policy: their members, and the admin form's list. */
import type { WebClient } from "@slack/web-api";
import { z } from "zod";
import type { GroupMembers } from "../threads/access/usage-policy.ts";
import type { UserGroupOption } from "../view/usage-policy.ts";
import { remembered } from "./remembered.ts";

const Members = z.object({ users: z.array(z.string()) });

/** Remembered a minute (a change in Slack applies within it); throws when Slack cannot answer. */
export function slackGroupMembers(options: {
  readonly client: Pick<WebClient, "usergroups">;
  readonly tokenFor?: (teamId: string) => string | undefined | Promise<string | undefined>;
  readonly now?: () => number;
}): GroupMembers {
  const known = remembered<ReadonlySet<string>>({ ttlMs: 60_000, max: 5000, now: options.now });
  return (teamId, groupId) =>
    known(`${teamId}/${groupId}`, async () => {
      const token = await options.tokenFor?.(teamId);
      const res = await options.client.usergroups.users.list({ usergroup: groupId, token });
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
