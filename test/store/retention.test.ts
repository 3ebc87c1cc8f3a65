/**
 * The data retention (DATA_RETENTION_DAYS) on every backend: a thread record (with its queued
 * replies), a person's recent tasks and a retained record (votes, the audit trail) are gone
 * once the retention has passed since they were last written, while settings stay; a task
 * in an active person's list is dropped once it is older than the retention; and the backend
 * itself is told when each record lapses, so nothing waits for a read to be removed. Time is
 * moved with a fake clock (Date only), which keyv's and the store's expiry both read.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { createClient } from "@redis/client";
import { pino } from "pino";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { testRedisUrl } from "../support/needs.ts";
import { AUDIT_KEPT, AuditTrail } from "../../src/store/audit.ts";
import type { StoreOptions } from "../../src/store/keyv-store.ts";
import { createMemoryStore, type MemoryMaps } from "../support/fakes/memory-store.ts";
import { createRedisStore } from "../../src/store/redis.ts";
import { createSqliteStore } from "../../src/store/sqlite.ts";
import type { RecentTask, ThreadRecord, ThreadStore } from "../../src/store/types.ts";

const dir = mkdtempSync(join(tmpdir(), "taskbot-retention-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  vi.useRealTimers();
});
const redisUrl = testRedisUrl();

const DAY = 24 * 3600 * 1000;
const RETENTION = 2 * DAY;
let n = 0;
const unique = () => `${process.pid}x${Date.now().toString(36)}x${n++}`;

/** One backend: a store on it, and when the backend itself lets a record lapse (ms from now). */
interface Backend {
  open(options: StoreOptions): ThreadStore;
  lapsesIn?(namespace: string, key: string): Promise<number | undefined>;
}

function memoryBackend(): Backend {
  const maps: MemoryMaps = { records: new Map(), entries: new Map() };
  return { open: (options) => createMemoryStore({ ...options, maps }) };
}

function sqliteBackend(): Backend {
  const path = join(dir, "retention.sqlite");
  return {
    open: (options) => createSqliteStore(path, () => {}, options),
    lapsesIn: async (ns, key) => {
      const db = new DatabaseSync(path, { readOnly: true });
      try {
        const row = db.prepare("SELECT expires FROM keyv WHERE key = ?").get(`${ns}:${key}`) as
          { expires: number | null } | undefined;
        const expires = row?.expires ?? undefined;
        return expires === undefined ? undefined : expires - Date.now();
      } finally {
        db.close();
      }
    },
  };
}

function redisBackend(url: string): Backend {
  return {
    open: (options) => createRedisStore(url, () => {}, options),
    lapsesIn: async (ns, key) => {
      const client = createClient({ url });
      await client.connect();
      try {
        // keyv's records are `<namespace>::<namespace>:<key>` (see src/store/redis.ts).
        const ttl = await client.pTTL(`${ns}::${ns}:${key}`);
        return ttl < 0 ? undefined : ttl;
      } finally {
        await client.close();
      }
    },
  };
}

const backends: Array<[string, () => Backend]> = [
  ["memory", memoryBackend],
  ["embedded SQLite", sqliteBackend],
];
if (redisUrl) backends.push(["Redis", () => redisBackend(redisUrl)]);

const thread = (teamId: string, now: number): ThreadRecord => ({
  teamId,
  channelId: "C1",
  threadTs: "1700000000.000100",
  service: { projectId: "proj_1", threadId: "thr_1" },
  surface: "channel",
  ownerUserId: "U1",
  active: { kind: "idle" },
  lastRunId: "run_1",
  queue: [{ userId: "U2", text: "and then?", ts: "1700000000.000300" }],
  createdAt: now,
  updatedAt: now,
});

const task = (threadTs: string, at: number): RecentTask => ({
  channelId: "C1",
  threadTs,
  prompt: `the task of ${threadTs}`,
  status: "completed",
  startedAt: at,
  updatedAt: at,
});

/** Moves the fake clock (Date only: the store's and keyv's time) to `at`. */
const at = (ms: number) => vi.setSystemTime(ms);

describe.each(backends)("the data retention on %s", (_name, makeBackend) => {
  it("forgets threads, recent tasks and retained records a retention after their last write; keeps settings", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const start = Date.now();
    const backend = makeBackend();
    const store = backend.open({ namespace: `ret${unique()}`, retentionMs: RETENTION });
    const teamId = `T${unique()}`;
    const key = { teamId, channelId: "C1", threadTs: "1700000000.000100" };
    await store.putThread(thread(teamId, start));
    await store.putRecentTask(teamId, "U1", task(key.threadTs, start));
    await store.putRecord(`t:${teamId}:feedback:run_1`, { votes: [] }, { retained: true });
    await store.putRecord(`t:${teamId}:usage-policy`, { who: "everyone" });
    await store.putDefaults(teamId, { kind: "user", userId: "U1" }, { model: "m1" });

    // A day later a reply is queued: the thread's retention starts again from there.
    at(start + DAY);
    await store.updateThread(key, (r) => ({
      ...r,
      queue: [...r.queue, { userId: "U3", text: "also", ts: "1700000000.000400" }],
    }));

    at(start + RETENTION - 1);
    expect(await store.recentTasks(teamId, "U1", 5)).toHaveLength(1);
    expect(await store.getRecord(`t:${teamId}:feedback:run_1`)).toEqual({ votes: [] });

    at(start + RETENTION + 1);
    expect(await store.recentTasks(teamId, "U1", 5)).toEqual([]);
    expect(await store.getRecord(`t:${teamId}:feedback:run_1`)).toBeUndefined();
    expect((await store.getThread(key))?.queue).toHaveLength(2);

    at(start + DAY + RETENTION + 1);
    expect(await store.getThread(key)).toBeUndefined();
    // Settings are not people's records: kept until changed.
    expect(await store.getRecord(`t:${teamId}:usage-policy`)).toEqual({ who: "everyone" });
    expect(await store.getDefaults(teamId, { kind: "user", userId: "U1" })).toEqual({
      model: "m1",
    });
    await store.close();
  });

  it("drops a task older than the retention from the list of a person who keeps starting tasks", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const start = Date.now();
    const store = makeBackend().open({ namespace: `ret${unique()}`, retentionMs: RETENTION });
    const teamId = `T${unique()}`;
    await store.putRecentTask(teamId, "U1", task("1700000000.000100", start));
    at(start + DAY);
    await store.putRecentTask(teamId, "U1", task("1700000000.000200", start + DAY));
    at(start + RETENTION + 1);
    const listed = await store.recentTasks(teamId, "U1", 50);
    expect(listed.map((t) => t.threadTs)).toEqual(["1700000000.000200"]);
    // The next write keeps only what is within the retention.
    await store.putRecentTask(teamId, "U1", task("1700000000.000300", Date.now()));
    at(start + DAY + RETENTION + 1);
    expect((await store.recentTasks(teamId, "U1", 50)).map((t) => t.threadTs)).toEqual([
      "1700000000.000300",
    ]);
    await store.close();
  });

  it("keeps a workspace's audit events for the retention, the latest hundred at most", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const start = Date.now();
    const store = makeBackend().open({ namespace: `ret${unique()}`, retentionMs: RETENTION });
    const audit = new AuditTrail({
      records: store,
      logger: pino({ level: "silent" }),
      retentionMs: RETENTION,
    });
    const workspace = `T${unique()}`;
    const event = (i: number) =>
      ({ what: "usage_policy.changed", who: "U0ADMIN", workspace, detail: `${i}` }) as const;
    // Written at once, as several instances may: none is lost (the list is changed under a lock).
    await Promise.all(Array.from({ length: 10 }, (_, i) => audit.record(event(i))));
    expect(await audit.latest(workspace, AUDIT_KEPT)).toHaveLength(10);
    at(start + DAY);
    for (let i = 10; i < AUDIT_KEPT + 5; i++) await audit.record(event(i));
    const kept = await audit.latest(workspace, 1000);
    expect(kept).toHaveLength(AUDIT_KEPT);
    expect(kept[0]?.detail).toBe(`${AUDIT_KEPT + 4}`);
    // The first ten were written a day before the others: they lapse first.
    at(start + RETENTION + 1);
    const later = await audit.latest(workspace, 1000);
    expect(later.map((e) => e.when).every((when) => when === start + DAY)).toBe(true);
    expect(later).toHaveLength(AUDIT_KEPT - 5);
    at(start + DAY + RETENTION + 1);
    expect(await audit.latest(workspace, 1000)).toEqual([]);
    await store.close();
  });

  it("tells the backend when each record lapses, so none waits for a read to be removed", async () => {
    const backend = makeBackend();
    if (!backend.lapsesIn) return; // the in-memory map lapses only as keyv reads it
    const namespace = `ret${unique()}`;
    const store = backend.open({ namespace, retentionMs: RETENTION });
    const teamId = `T${unique()}`;
    await store.putThread(thread(teamId, Date.now()));
    await store.putRecentTask(teamId, "U1", task("1700000000.000100", Date.now()));
    await store.putRecord(`t:${teamId}:feedback:run_1`, { votes: [] }, { retained: true });
    await store.putRecord(`t:${teamId}:usage-policy`, { who: "everyone" });
    for (const key of [
      `t:${teamId}:thread:C1:1700000000.000100`,
      `t:${teamId}:recent:U1`,
      `t:${teamId}:feedback:run_1`,
    ]) {
      const lapses = await backend.lapsesIn(namespace, key);
      expect(lapses, key).toBeGreaterThan(RETENTION - 60_000);
      expect(lapses, key).toBeLessThanOrEqual(RETENTION);
    }
    expect(await backend.lapsesIn(namespace, `t:${teamId}:usage-policy`)).toBeUndefined();
    await store.close();
  });
});
