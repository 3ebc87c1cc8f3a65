/**
 * The bot scopes the app asks for when it is installed through OAuth: the same list as
 * manifest.yml's `oauth_config.scopes.bot` (test/manifest.test.ts keeps them equal).
 */
export const BOT_SCOPES: readonly string[] = [
  "app_mentions:read",
  "assistant:write",
  "chat:write",
  "commands",
  "channels:history",
  "channels:join",
  "channels:read",
  "groups:read",
  "groups:history",
  "im:history",
  "mpim:history",
  "files:read",
  "files:write",
  "im:write",
  "reactions:write",
  "users:read",
  "usergroups:read",
];
