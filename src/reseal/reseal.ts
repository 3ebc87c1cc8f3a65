/**
 * Re-encrypting every stored service key and Slack token with the first of ENCRYPTION_KEYS, so
 * older keys can be removed from the list; one that does not open is counted and left.
 */
import type { Config } from "../config/config.ts";
import { resealInstallations } from "../store/installations.ts";
import { openConfiguredStore } from "../store/open.ts";
import { serviceKeyStoreFor } from "../store/service-keys.ts";
import { sealingKeys } from "../util/secret-box.ts";

export class NoEncryptionKeyError extends Error {
  constructor() {
    super("ENCRYPTION_KEY (or ENCRYPTION_KEYS) is not set: there is no key to re-encrypt with.");
    this.name = "NoEncryptionKeyError";
  }
}

/** The store is closed afterwards. */
export async function resealStoredKeys(config: Config) {
  const store = await openConfiguredStore(config);
  try {
    const keys = serviceKeyStoreFor(store, config.encryptionKeys);
    if (!keys) throw new NoEncryptionKeyError();
    const serviceKeys = await keys.resealAll();
    const installations = await resealInstallations(store, sealingKeys(config.encryptionKeys));
    return { serviceKeys, installations };
  } finally {
    await store.close();
  }
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** Counts only, never a key. */
export function describeReseal(reports: Awaited<ReturnType<typeof resealStoredKeys>>): string[] {
  const { serviceKeys: report, installations } = reports;
  const lines = [
    `Re-encrypted ${plural(report.resealed, "workspace key", "workspace keys")} with the first encryption key; ${plural(report.current, "was", "were")} already.`,
    `Sealed the Slack tokens of ${plural(installations.resealed, "installation", "installations")} with the first encryption key; ${plural(installations.current, "was", "were")} already.`,
  ];
  if (report.unreadable > 0) {
    lines.push(
      `${plural(report.unreadable, "key", "keys")} could not be opened (sealed with an encryption key no longer listed, or not sealed in the app's format; left as they are, never used): those workspaces' admins must set their key again.`,
    );
  }
  if (installations.unreadable > 0) {
    lines.push(
      `${plural(installations.unreadable, "installation's tokens", "installations' tokens")} could not be opened (sealed with an encryption key no longer listed, or not sealed in the app's format; left as they are, never used): install the app in those workspaces again, or list the key that sealed them.`,
    );
  }
  if (report.unreadable === 0 && installations.unreadable === 0) {
    lines.push("Every stored secret now opens with the first encryption key alone.");
  }
  return lines;
}
