/**
 * The secrets in a stored Slack installation (tokens, refresh tokens, a webhook's URL), sealed
 * at rest (util/secret-box.ts), each bound to its record and field
 * (`t:<team>:installation#bot.token`): a copy elsewhere, or plain text, does not open.
 */
import { open, reseal, type SealingKey, seal } from "../util/secret-box.ts";

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

/** The installation (as Bolt gives it) as stored at `at`: every secret sealed with the first key. */
export const sealInstallation = (
  installation: Fields,
  at: string,
  keys: readonly SealingKey[],
): Record<string, unknown> =>
  eachSecret(installation, at, (value, binding) => seal(value, keys, binding));

/** Every secret sealed again with the first key (a current box is checked, kept); may throw SecretBoxError. */
export const resealInstallation = (
  stored: Fields,
  at: string,
  keys: readonly SealingKey[],
): Record<string, unknown> =>
  eachSecret(stored, at, (value, binding) => reseal(value, keys, binding));

/** The installation stored at `at` with its secrets opened; throws SecretBoxError when one does not. */
export const openInstallation = (
  stored: Fields,
  at: string,
  keys: readonly SealingKey[],
): Record<string, unknown> =>
  eachSecret(stored, at, (value, binding) => open(value, keys, binding));
