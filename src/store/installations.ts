/**
 * Bolt's InstallationStore on the store: a record per workspace (or per organisation, org-wide on
 * Enterprise Grid), its secrets sealed and bound to record and field (`…#bot.token`) so a copy
 * elsewhere, or plain text, does not open. Nothing here logs a record or puts one in an error.
 */
import type { Installation, InstallationQuery, InstallationStore } from "@slack/bolt";
import { z } from "zod";
import {
  KEY_NOT_LISTED,
  NOT_SEALED,
  open,
  reseal,
  type SealingKey,
  SecretBoxError,
  seal,
} from "../util/secret-box.ts";
import { type ResealReport, resealRecords } from "./service-keys.ts";
import type { RecordStore } from "./types.ts";

/** Where the secrets are in an installation (Bolt's `Installation` shape). */
const SECRET_FIELDS = [
  ["bot", "token"],
  ["bot", "refreshToken"],
  ["user", "token"],
  ["user", "refreshToken"],
  ["incomingWebhook", "url"],
] as const;

type Fields = Readonly<Record<string, unknown>>;

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

const sealInstallation = (installation: Fields, at: string, keys: readonly SealingKey[]) =>
  eachSecret(installation, at, (value, binding) => seal(value, keys, binding));

export interface InstallationKey {
  readonly teamId: string | undefined;
  readonly enterpriseId: string | undefined;
  readonly isEnterpriseInstall: boolean;
}

export class InstallationNotFoundError extends Error {
  readonly key: InstallationKey;
  constructor(key: InstallationKey) {
    super(`the app is not installed in ${describeKey(key)}`);
    this.name = "InstallationNotFoundError";
    this.key = key;
  }
}

/** Never used; the message says what to do and names no secret. */
export class InstallationUnreadableError extends Error {
  readonly key: InstallationKey;
  constructor(key: InstallationKey, why: string, options?: ErrorOptions) {
    super(`the stored installation of ${describeKey(key)} is unreadable: ${why}`, options);
    this.name = "InstallationUnreadableError";
    this.key = key;
  }
}

const Named = z.looseObject({ id: z.string().min(1), name: z.string().optional() });

/** What Bolt reads back; the rest of the record is kept as it is. */
const StoredInstallation = z.looseObject({
  team: Named.optional(),
  enterprise: Named.optional(),
  user: z.looseObject({ id: z.string(), token: z.string().optional() }),
  bot: z
    .looseObject({
      token: z.string().min(1),
      id: z.string(),
      userId: z.string(),
      scopes: z.array(z.string()),
      refreshToken: z.string().optional(),
      expiresAt: z.number().optional(),
    })
    .optional(),
  isEnterpriseInstall: z.boolean().optional(),
  authVersion: z.enum(["v1", "v2"]).optional(),
});

/** `t:<team>:installation`, or an org-wide one's `e:<enterprise>:installation`. */
function recordKey(key: InstallationKey): string | undefined {
  if (key.isEnterpriseInstall) {
    return key.enterpriseId ? `e:${key.enterpriseId}:installation` : undefined;
  }
  return key.teamId ? `t:${key.teamId}:installation` : undefined;
}

function describeKey(key: InstallationKey): string {
  if (key.isEnterpriseInstall) return `organisation ${key.enterpriseId ?? "(none)"} (org-wide)`;
  const grid = key.enterpriseId ? ` of organisation ${key.enterpriseId}` : "";
  return `workspace ${key.teamId ?? "(none)"}${grid}`;
}

const keyOfQuery = (q: InstallationQuery<boolean>): InstallationKey => ({
  teamId: q.teamId,
  enterpriseId: q.enterpriseId,
  isEnterpriseInstall: q.isEnterpriseInstall,
});

const keyOfInstallation = (i: Installation): InstallationKey => ({
  teamId: i.team?.id,
  enterpriseId: i.enterprise?.id,
  isEnterpriseInstall: i.isEnterpriseInstall === true,
});

function opened(raw: unknown, at: string, key: InstallationKey, keys: readonly SealingKey[]) {
  const parsed = StoredInstallation.safeParse(raw);
  // zod's messages name fields, never values: no token reaches the error.
  if (!parsed.success) {
    throw new InstallationUnreadableError(key, "not an installation; install the app there again");
  }
  try {
    return StoredInstallation.parse(
      eachSecret(parsed.data, at, (value, binding) => open(value, keys, binding)),
    );
  } catch (err) {
    if (!(err instanceof SecretBoxError)) throw err;
    // SecretBoxError's message says why (a plain value, an unlisted key…), never the value.
    const advice =
      err.message === KEY_NOT_LISTED
        ? "list that key in ENCRYPTION_KEYS again, or install the app there again"
        : "install the app there again";
    const why = `a token in it does not open (${err.message}); ${advice}`;
    throw new InstallationUnreadableError(key, why, { cause: err });
  }
}

export function createInstallationStore(
  records: RecordStore,
  keys: readonly SealingKey[],
): InstallationStore {
  const read = async (key: InstallationKey) => {
    const at = recordKey(key);
    const raw = at === undefined ? undefined : await records.getRecord(at);
    if (at === undefined || raw === undefined || raw === null) return undefined;
    const stored = opened(raw, at, key, keys);
    // A workspace of one organisation is never answered with another's installation.
    const enterprise = stored.enterprise?.id;
    if (key.enterpriseId && enterprise && key.enterpriseId !== enterprise) return undefined;
    return { at, installation: stored as unknown as Installation };
  };

  return {
    async storeInstallation(installation) {
      const key = keyOfInstallation(installation);
      const at = recordKey(key);
      if (at === undefined) {
        throw new Error("an installation that names neither its workspace nor its organisation");
      }
      await records.putRecord(at, sealInstallation({ ...installation }, at, keys));
    },

    async fetchInstallation(query) {
      const key = keyOfQuery(query);
      const found = await read(key);
      if (!found) throw new InstallationNotFoundError(key);
      return found.installation;
    },

    async deleteInstallation(query) {
      const key = keyOfQuery(query);
      const found = await read(key);
      if (!found) return;
      const { installation, at } = found;
      if (query.userId === undefined) {
        await records.deleteRecord(at);
        return;
      }
      // One person's token revoked: the workspace's installation (the bot) stays.
      if (installation.user.id === query.userId) {
        const { id } = installation.user;
        await records.putRecord(at, sealInstallation({ ...installation, user: { id } }, at, keys));
      }
    },
  };
}

/** One whose tokens do not open is left as it is. */
export async function resealInstallations(
  records: RecordStore,
  keys: readonly SealingKey[],
): Promise<ResealReport> {
  const found = [...(await records.recordKeys("t:")), ...(await records.recordKeys("e:"))].filter(
    (k) => /^[te]:[^:]+:installation$/.test(k),
  );
  return resealRecords(records, found, (raw, at) => {
    if (!StoredInstallation.safeParse(raw).success) throw new SecretBoxError(NOT_SEALED);
    // A box sealed with the first key already is verified and kept as it is.
    return eachSecret(raw as Fields, at, (value, binding) => reseal(value, keys, binding));
  });
}
