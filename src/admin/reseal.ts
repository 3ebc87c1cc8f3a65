/**
 * Re-encrypting every workspace's stored service key with the first of ENCRYPTION_KEYS, so the
 * older keys can be removed from the list: opens the store the app uses, reports counts only.
 */
import type { Config } from "../config.ts";
import { type ResealReport, serviceKeyStoreFor } from "../store/service-keys.ts";
import type { ThreadStore } from "../store/types.ts";

/** Nothing to re-encrypt with: ENCRYPTION_KEY(S) is not set. */
export class NoEncryptionKeyError extends Error {
  constructor() {
    super("ENCRYPTION_KEY (or ENCRYPTION_KEYS) is not set: there is no key to re-encrypt with.");
    this.name = "NoEncryptionKeyError";
  }
}

/** The store the app would open with this config (SQLite under DATA_DIR, or Redis). */
export async function openConfiguredStore(config: Config): Promise<ThreadStore> {
  const options = { namespace: config.storeNamespace };
  if (config.redisUrl !== undefined) {
    const redis = await import("../store/redis.ts");
    return redis.openRedisStore(config.redisUrl, () => {}, {
      ...options,
      connectTimeoutMs: config.redisConnectTimeoutMs,
    });
  }
  const sqlite = await import("../store/sqlite.ts");
  return sqlite.createSqliteStore(sqlite.defaultSqlitePath(config.dataDir), () => {}, options);
}

/** Seals every stored key with the first encryption key; the store is closed afterwards. */
export async function resealStoredKeys(config: Config): Promise<ResealReport> {
  const store = await openConfiguredStore(config);
  try {
    const keys = serviceKeyStoreFor(store, config.encryptionKeys);
    if (!keys) throw new NoEncryptionKeyError();
    return await keys.resealAll();
  } finally {
    await store.close();
  }
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The report in words (counts only, never a key). */
export function describeReseal(report: ResealReport): string[] {
  const lines = [
    `Re-encrypted ${plural(report.resealed, "workspace key", "workspace keys")} with the first encryption key; ${plural(report.current, "was", "were")} already.`,
  ];
  if (report.unreadable > 0) {
    lines.push(
      `${plural(report.unreadable, "key", "keys")} could not be opened with any listed encryption key (left as they are): those workspaces' admins must set their key again.`,
    );
  } else {
    lines.push("Every stored key now opens with the first encryption key alone.");
  }
  return lines;
}
