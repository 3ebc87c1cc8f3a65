// users.info: a person's (or the bot's) profile, with Slack's defaults for the fields not configured.
import { ApiFailure } from "../errors.ts";
import { nonEmpty } from "../util.ts";
import type { MethodFamily } from "./registry.ts";

export const usersMethods: MethodFamily = {
  "users.info": {
    scopes: ["users:read"],
    handle: (args, { state }) => {
      const id = nonEmpty(args.user);
      const user = id === undefined ? undefined : state.users.get(id);
      if (!user) throw new ApiFailure("user_not_found");
      const realName = user.real_name ?? user.name;
      return {
        user: {
          id: user.id,
          team_id: user.team_id ?? state.teamId,
          name: user.name,
          real_name: realName,
          deleted: user.deleted ?? false,
          is_admin: user.is_admin ?? false,
          is_owner: user.is_owner ?? false,
          is_primary_owner: false,
          is_restricted: user.is_restricted ?? false,
          is_ultra_restricted: user.is_ultra_restricted ?? false,
          is_bot: user.is_bot ?? false,
          is_app_user: false,
          tz: user.tz ?? "Europe/London",
          profile: { display_name: user.name, real_name: realName },
        },
      };
    },
  },
};
