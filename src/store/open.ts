/** The store the configuration names: Redis when REDIS_URL is set, else SQLite under DATA_DIR. */
import type { Config } from "../config/config.ts";
import { runIndexTtlMs } from "./run-index.ts";
import type { ThreadStore } from "./types.ts";

/** People's records and the audit trail (DATA_RETENTION_DAYS). */
export const retentionMs = (config: Config): number => config.retentionDays * 24 * 3600 * 1000;

/** Only the store in use is loaded; a silent Redis fails within REDIS_CONNECT_TIMEOUT_MS. */
export async function openConfiguredStore(
  config: Config,
  report: (err: unknown) => void = () => {},
): Promise<ThreadStore> {
  const options = {
    namespace: config.storeNamespace,
    runTtlMs: runIndexTtlMs(config.service.maxRunS * 1000),
    retentionMs: retentionMs(config),
  };
  if (config.redisUrl !== undefined) {
    const { openRedisStore } = await import("./redis.ts");
    const connectTimeoutMs = config.redisConnectTimeoutMs;
    return openRedisStore(config.redisUrl, report, { ...options, connectTimeoutMs });
  }
  const { createSqliteStore, defaultSqlitePath } = await import("./sqlite.ts");
  return createSqliteStore(defaultSqlitePath(config.dataDir), report, options);
}
