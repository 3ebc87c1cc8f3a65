// apps.connections.open: Socket Mode asks, with the app-level token, where to connect (local-socket-mode.ts).
// apps.uninstall: the app uninstalls itself from the token's workspace (with its client id and secret).
import { ApiFailure } from "../errors.ts";
import type { MethodFamily } from "./registry.ts";

export const appsMethods: MethodFamily = {
  "apps.connections.open": {
    token: "app",
    handle: (_args, { state }) => {
      if (state.socketModeUrl === undefined) throw new ApiFailure("internal_error");
      return { url: state.socketModeUrl };
    },
  },
  "apps.uninstall": {
    handle: (args, { oauth, uninstall }, _team, caller) => {
      if (args.client_id !== oauth.clientId || args.client_secret !== oauth.clientSecret) {
        throw new ApiFailure("invalid_client_id");
      }
      const id = caller?.isEnterpriseInstall ? caller.enterpriseId : caller?.teamId;
      if (id === undefined) throw new ApiFailure("invalid_auth");
      uninstall(id);
      return {};
    },
  },
};
