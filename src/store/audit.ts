/** Every admin action as a log line of a stable shape, and in a bounded list App Home shows. */
import type { Logger } from "pino";
import { z } from "zod";
import type { RecordStore } from "./types.ts";

/** Stable names (operators filter the log on them). */
const AUDIT_ACTIONS = [
  "service_key.set",
  "service_key.removed",
  "usage_policy.changed",
  "channel_defaults.changed",
  "run.stopped",
  "records.erased",
  "app.uninstalled",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who did it when Slack reported the action without saying who (an uninstall). */
export const BY_SLACK = "slack";

const AuditEvent = z.object({
  what: z.enum(AUDIT_ACTIONS),
  /** A Slack user id, or BY_SLACK. */
  who: z.string(),
  /** Milliseconds since the epoch (ISO 8601 in the log line). */
  when: z.number(),
  workspace: z.string(),
  channel: z.string().optional(),
  /** The other person it concerned (whose run was stopped). */
  whom: z.string().optional(),
  /** A few words of what changed; never a secret (a key's last four characters at most). */
  detail: z.string().optional(),
});
export type AuditEvent = z.infer<typeof AuditEvent>;

/** Per workspace (the log has every one). */
export const AUDIT_KEPT = 100;

const auditKey = (teamId: string) => `t:${teamId}:audit`;

export interface AuditTrailOptions {
  readonly records: Pick<RecordStore, "getRecord" | "updateRecord">;
  readonly logger: Logger;
  /** DATA_RETENTION_DAYS. */
  readonly retentionMs: number;
  readonly now?: () => number;
}

export class AuditTrail {
  readonly #o: AuditTrailOptions;
  readonly #log: Logger;
  readonly #now: () => number;

  constructor(options: AuditTrailOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    // Audit lines are `info`, written whatever LOG_LEVEL keeps of the rest (unless `silent`).
    const { logger } = options;
    const level =
      logger.level === "silent" || logger.isLevelEnabled("info") ? logger.level : "info";
    this.#log = logger.child({}, { level });
  }

  /** The log line (the trail of record), then the list; a failing store is logged, not thrown. */
  async record(event: Omit<AuditEvent, "when">): Promise<void> {
    const entry = AuditEvent.parse({ ...event, when: this.#now() });
    this.#log.info(
      { audit: { ...entry, when: new Date(entry.when).toISOString() } },
      `audit: ${entry.what}`,
    );
    try {
      await this.#o.records.updateRecord(
        auditKey(entry.workspace),
        (current) => [entry, ...this.#kept(current)].slice(0, AUDIT_KEPT),
        { retained: true },
      );
    } catch (err) {
      this.#log.warn(
        { err, workspace: entry.workspace },
        "could not keep an audit event in the store (its log line has it)",
      );
    }
  }

  /** Newest first. */
  async latest(teamId: string, limit: number): Promise<AuditEvent[]> {
    return this.#kept(await this.#o.records.getRecord(auditKey(teamId))).slice(0, limit);
  }

  #kept(stored: unknown): AuditEvent[] {
    const since = this.#now() - this.#o.retentionMs;
    const list = Array.isArray(stored) ? stored : [];
    return list.flatMap((raw) => {
      const parsed = AuditEvent.safeParse(raw);
      return parsed.success && parsed.data.when > since ? [parsed.data] : [];
    });
  }
}
