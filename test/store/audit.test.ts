/**
 * The audit trail's log line: one JSON line per admin action, of a stable shape (`audit`: what,
 * who, when in ISO 8601, workspace, and what else the event names), written whatever LOG_LEVEL
 * keeps of the rest unless it is `silent`; a store that fails loses only the stored copy.
 */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.ts";
import { AuditTrail } from "../../src/store/audit.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import { StoreUnavailableError } from "../../src/store/types.ts";

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger({ level, destination }) };
}

const WHEN = Date.UTC(2026, 0, 15, 9, 30);

describe("the audit trail's log line", () => {
  it("names what, who, when and the workspace, even when the log keeps warnings only", async () => {
    const { lines, logger } = capture("warn");
    const records = createMemoryStore();
    const audit = new AuditTrail({ records, logger, retentionMs: 1e9, now: () => WHEN });
    logger.info("an ordinary line the level leaves out");
    await audit.record({
      what: "service_key.set",
      who: "U0ADMIN",
      workspace: "T1",
      detail: "key ending in …1234",
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: "audit: service_key.set",
      audit: {
        what: "service_key.set",
        who: "U0ADMIN",
        when: "2026-01-15T09:30:00.000Z",
        workspace: "T1",
        detail: "key ending in …1234",
      },
    });
    expect(await audit.latest("T1", 10)).toEqual([
      {
        what: "service_key.set",
        who: "U0ADMIN",
        when: WHEN,
        workspace: "T1",
        detail: "key ending in …1234",
      },
    ]);
  });

  it("writes nothing when the log is silent", async () => {
    const { lines, logger } = capture("silent");
    const audit = new AuditTrail({ records: createMemoryStore(), logger, retentionMs: 1e9 });
    await audit.record({ what: "records.erased", who: "U0ADMIN", workspace: "T1" });
    expect(lines).toEqual([]);
  });

  it("keeps its line when the store fails, and says the stored copy is missing", async () => {
    const { lines, logger } = capture("info");
    const records = {
      getRecord: async () => undefined,
      updateRecord: async () => {
        throw new StoreUnavailableError(new Error("Redis is not reachable"));
      },
    };
    const audit = new AuditTrail({ records, logger, retentionMs: 1e9 });
    await audit.record({ what: "usage_policy.changed", who: "U0ADMIN", workspace: "T1" });
    expect(lines.map((l) => l.msg)).toEqual([
      "audit: usage_policy.changed",
      "could not keep an audit event in the store (its log line has it)",
    ]);
  });
});
