// api.test and auth.test: the connectivity check and the bot's identity, per token (Bolt calls
// auth.test at start, and during an OAuth install with the new token).
import type { Caller } from "../tenancy.ts";
import type { MethodContext, MethodFamily } from "./registry.ts";

function identity(ctx: MethodContext, caller: Caller | undefined): Record<string, unknown> {
  const { state, tenancy } = ctx;
  const team = tenancy.teams.get(caller?.teamId ?? state.teamId);
  const bot = caller?.bot ?? { userId: state.botUserId, id: state.botId, name: state.botName };
  if (caller?.isEnterpriseInstall) {
    // An org-wide token speaks for the whole organisation: no single workspace.
    const grid = tenancy.enterprises.get(caller.enterpriseId ?? "");
    return {
      url: grid?.url,
      team: grid?.name,
      user: bot.name,
      user_id: bot.userId,
      bot_id: bot.id,
      app_id: state.appId,
      enterprise_id: caller.enterpriseId,
      is_enterprise_install: true,
    };
  }
  return {
    url: team?.url ?? state.teamUrl,
    team: team?.name ?? state.teamName,
    user: bot.name,
    team_id: team?.id ?? state.teamId,
    user_id: bot.userId,
    bot_id: bot.id,
    app_id: state.appId,
    ...(team?.enterpriseId === undefined ? {} : { enterprise_id: team.enterpriseId }),
    is_enterprise_install: false,
  };
}

export const authMethods: MethodFamily = {
  "api.test": { handle: (args) => ({ args }) },
  "auth.test": { handle: (_args, ctx, _team, caller) => identity(ctx, caller) },
};
