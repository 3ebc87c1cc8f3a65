// apps.connections.open: Socket Mode asks, with the app-level token, where to connect (local-socket-mode.ts).
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
};
