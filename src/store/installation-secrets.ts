/**
 * The secrets in a stored Slack installation (the bot's and the installer's tokens, their
 * refresh tokens, an incoming webhook's URL), sealed at rest with the box that seals
 * workspaces' service keys (util/secret-box.ts). Each is bound to its record and field
 * (`t:<team>:installation#bot.token`): a token copied into another workspace's installation, or
 * from one field to another, does not open. An installation stored before tokens were sealed
 * (plain text) still loads; it is sealed on its next save, or by `npm run keys:reseal`.
 */
import { isSealed, open, reseal, type SealingKey, seal } from "../util/secret-box.ts";

/** Where the secrets are in an installation (Bolt's `Installation` shape). */
const SECRET_FIELDS = [
  ["bot", "token"],
  ["bot", "refreshToken"],
  ["user", "token"],
  ["user", "refreshToken"],
  ["incomingWebhook", "url"],
] as const;

/** An installation as JSON: its parts by name. */
type Fields = Readonly<Record<string, unknown>>;

/** The record with `change` applied to each secret it holds (given the secret and its binding). */
function eachSecret(
  record: Fields,
  at: string,
  change: (value: string, binding: string) => string,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...record };
  for (const [part, field] of SECRET_FIELDS) {
    const holder = out[part];
    if (typeof holder !== "object" || holder === null) continue;
    const value = (holder as Fields)[field];
    if (typeof value !== "string" || value === "") continue;
    out[part] = { ...holder, [field]: change(value, `${at}#${part}.${field}`) };
  }
  return out;
}

/** The installation as stored at `at`: every secret sealed with the first key, bound to it. */
export const sealInstallation = (
  installation: Fields,
  at: string,
  keys: readonly SealingKey[],
): Record<string, unknown> =>
  eachSecret(installation, at, (value, binding) =>
    isSealed(value) ? reseal(value, keys, binding) : seal(value, keys, binding),
  );

/**
 * The installation stored at `at` with its secrets opened (a plain-text one from before they
 * were sealed is taken as it is). Throws SecretBoxError when one does not open.
 */
export const openInstallation = (
  stored: Fields,
  at: string,
  keys: readonly SealingKey[],
): Record<string, unknown> =>
  eachSecret(stored, at, (value, binding) =>
    isSealed(value) ? open(value, keys, binding) : value,
  );
