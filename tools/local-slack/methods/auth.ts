// api.test and auth.test: the connectivity check and the bot's identity, per token (Bolt calls
// auth.test at start, and during an OAuth install with the new token).
import { ApiFailure } from "../errors.ts";
import type { Caller } from "../tenancy.ts";
import type { SlackArgs } from "../types.ts";
import { cursorPage } from "./paging.ts";
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

/**
 * auth.teams.list: the workspaces an org-wide token's app is approved for (every workspace of its
 * organisation here); a workspace's token lists its own workspace. Pages with `limit` (1 to
 * 1000, default 100) and `cursor` (Slack's auth.teams.list method page).
 */
function teamsList(args: SlackArgs, ctx: MethodContext, caller: Caller | undefined) {
  const { tenancy } = ctx;
  const limit = args.limit === undefined ? 100 : Number(args.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new ApiFailure("invalid_limit");
  const teams = caller?.isEnterpriseInstall
    ? [...tenancy.teams.values()].filter((t) => t.enterpriseId === caller.enterpriseId)
    : [...tenancy.teams.values()].filter((t) => t.id === (caller?.teamId ?? ctx.state.teamId));
  const { page, next } = cursorPage(teams, args.cursor, limit);
  return {
    teams: page.map((t) => ({ id: t.id, name: t.name })),
    response_metadata: { next_cursor: next },
  };
}

export const authMethods: MethodFamily = {
  "api.test": { handle: (args) => ({ args }) },
  "auth.test": { handle: (_args, ctx, _team, caller) => identity(ctx, caller) },
  // auth.revoke: the calling token stops working (Slack's auth.revoke method page).
  "auth.revoke": {
    handle: (args, ctx, _team, caller) => {
      if (args.test === true || args.test === "true") return { revoked: false };
      return { revoked: caller ? ctx.tenancy.revokeToken(caller.token) : false };
    },
  },
  "auth.teams.list": { handle: (args, ctx, _team, caller) => teamsList(args, ctx, caller) },
};
