// oauth.v2.access: the OAuth install's code exchange and the token rotation refresh (oauth.ts).
import type { MethodFamily } from "./registry.ts";

export const oauthMethods: MethodFamily = {
  // Called with the app's client id and secret, not a token.
  "oauth.v2.access": { token: "none", handle: (args, { oauth }) => oauth.access(args) },
};
