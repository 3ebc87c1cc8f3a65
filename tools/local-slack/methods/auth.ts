// api.test and auth.test: the connectivity check and the bot's identity (Bolt calls auth.test at start).
import type { MethodFamily } from "./registry.ts";

export const authMethods: MethodFamily = {
  "api.test": { handle: (args) => ({ args }) },
  "auth.test": {
    handle: (_args, { state }) => ({
      url: state.teamUrl,
      team: state.teamName,
      user: state.botName,
      team_id: state.teamId,
      user_id: state.botUserId,
      bot_id: state.botId,
      app_id: state.appId,
      is_enterprise_install: false,
    }),
  },
};
