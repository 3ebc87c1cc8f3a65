// usergroups.list and usergroups.users.list: a workspace's user groups (`@handle`) and their
// members, answering only the calling workspace's groups, like Slack.
import { ApiFailure } from "../errors.ts";
import type { UserGroup } from "../state.ts";
import { nonEmpty } from "../util.ts";
import type { MethodFamily } from "./registry.ts";

const truthy = (value: unknown) => value === true || value === "true" || value === "1";

function groupObject(group: UserGroup, withUsers: boolean): Record<string, unknown> {
  return {
    id: group.id,
    team_id: group.teamId,
    is_usergroup: true,
    name: group.name,
    description: "",
    handle: group.handle,
    is_external: false,
    date_create: 1_700_000_000,
    date_update: 1_700_000_000,
    date_delete: group.disabled ? 1_700_000_100 : 0,
    user_count: group.users.length,
    ...(withUsers ? { users: [...group.users] } : {}),
  };
}

export const userGroupsMethods: MethodFamily = {
  "usergroups.list": {
    scopes: ["usergroups:read"],
    handle: (args, { state }, team) => {
      const all = truthy(args.include_disabled);
      const groups = [...state.userGroups.values()].filter(
        (g) => g.teamId === team && (all || !g.disabled),
      );
      return { usergroups: groups.map((g) => groupObject(g, truthy(args.include_users))) };
    },
  },
  "usergroups.users.list": {
    scopes: ["usergroups:read"],
    handle: (args, { state }, team) => {
      const id = nonEmpty(args.usergroup);
      if (id === undefined) throw new ApiFailure("invalid_arguments");
      const group = state.userGroups.get(id);
      // Another workspace's group is as unknown as a made-up id.
      if (!group || group.teamId !== team) throw new ApiFailure("no_such_subteam");
      if (group.disabled && !truthy(args.include_disabled)) {
        throw new ApiFailure("no_such_subteam");
      }
      return { users: [...group.users] };
    },
  },
};
