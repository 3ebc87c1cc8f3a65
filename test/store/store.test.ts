import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { testRedisUrl } from "../support/needs.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import { createRedisStore } from "../../src/store/redis.ts";
import { createSqliteStore } from "../../src/store/sqlite.ts";
import {
  RECENT_TASKS_KEPT,
  type RecentTask,
  serviceRunId,
  type ThreadRecord,
  type ThreadStore,
} from "../../src/store/types.ts";

const dir = mkdtempSync(join(tmpdir(), "taskbot-store-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const redisUrl = testRedisUrl();
let n = 0;
const unique = () => `T${process.pid}x${Date.now()}x${n++}`;

function record(teamId: string, overrides: Partial<ThreadRecord> = {}): ThreadRecord {
  return {
    teamId,
    channelId: "C1",
    threadTs: "1700000000.000100",
    service: { projectId: "proj_1", threadId: "thr_1" },
    surface: "channel",
    ownerUserId: "U1",
    active: { kind: "running", runId: "run_1", messageTs: "1700000000.000200" },
    lastRunId: undefined,
    queue: [],
    createdAt: 1,
    updatedAt: 1,
    ...overrides,
  };
}

const backends: Array<[string, () => ThreadStore]> = [
  [
    "memory",
    (() => {
      // One memory store stands for state shared by two handles (its close() is a no-op).
      const shared = createMemoryStore();
      return () => shared;
    })(),
  ],
  ["embedded SQLite", () => createSqliteStore(join(dir, "shared.sqlite"))],
];
if (redisUrl) backends.push(["Redis", () => createRedisStore(redisUrl)]);

describe.each(backends)("thread store on %s", (_name, make) => {
  it("stores a thread mapping and reads it back", async () => {
    const store = make();
    const teamId = unique();
    const rec = record(teamId);
    await store.putThread(rec);
    expect(await store.getThread(rec)).toMatchObject({
      service: { projectId: "proj_1" },
      active: { kind: "running", runId: "run_1" },
    });
    await store.close();
  });

  it("keeps workspaces apart: the same channel and ts in another team is another thread", async () => {
    const store = make();
    const a = record(unique());
    await store.putThread(a);
    expect(await store.getThread({ ...a, teamId: unique() })).toBeUndefined();
    await store.close();
  });

  it("serialises concurrent updates of one thread so no queued reply is lost", async () => {
    const store = make();
    const rec = record(unique());
    await store.putThread(rec);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.updateThread(rec, (r) => ({
          ...r,
          queue: [...r.queue, { userId: "U2", text: `reply ${i}`, ts: String(i) }],
        })),
      ),
    );
    const after = await store.getThread(rec);
    expect(after?.queue.map((q) => q.text)).toEqual(
      Array.from({ length: 20 }, (_, i) => `reply ${i}`),
    );
    await store.close();
  });

  it("claims a name once, for everyone, until it expires", async () => {
    const store = make();
    const teamId = unique();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => store.claimOnce(teamId, "event:Ev1", 60_000)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.claimOnce(teamId, "event:Ev2", 60_000)).toBe(true);
    expect(await store.claimOnce(unique(), "event:Ev1", 60_000)).toBe(true);
    await store.close();
  });

  it("lets a released claim be claimed again (a Stop that failed)", async () => {
    const store = make();
    const teamId = unique();
    expect(await store.claimOnce(teamId, "stop:run_1", 60_000)).toBe(true);
    expect(await store.claimOnce(teamId, "stop:run_1", 60_000)).toBe(false);
    await store.releaseClaim(teamId, "stop:run_1");
    expect(await store.claimOnce(teamId, "stop:run_1", 60_000)).toBe(true);
    await store.close();
  });

  it("grants a lease to one instance at a time, renews it only for its holder, and frees it on release", async () => {
    const a = make();
    const b = make();
    const name = `run:${unique()}`;
    const results = await Promise.all([
      a.acquireLease(name, "A", 60_000),
      b.acquireLease(name, "B", 60_000),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    const [holder, other] = results[0] ? ["A", "B"] : ["B", "A"];
    expect(await a.renewLease(name, holder, 60_000)).toBe(true);
    expect(await a.renewLease(name, other, 60_000)).toBe(false);
    await b.releaseLease(name, other); // not theirs: nothing happens
    expect(await a.acquireLease(name, other, 60_000)).toBe(false);
    await b.releaseLease(name, holder);
    expect(await a.acquireLease(name, other, 60_000)).toBe(true);
    await a.close();
    await b.close();
  });

  it("lets an expired lease be taken over, and the old holder learns it lost it", async () => {
    const store = make();
    const name = `run:${unique()}`;
    expect(await store.acquireLease(name, "A", 30)).toBe(true);
    await new Promise((r) => setTimeout(r, 60)); // the lease's expiry is wall-clock time
    expect(await store.acquireLease(name, "B", 60_000)).toBe(true);
    expect(await store.renewLease(name, "A", 60_000)).toBe(false);
    await store.close();
  });

  it("keeps an index of unfinished runs that any instance can read", async () => {
    const a = make();
    const b = make();
    const runId = `run_${unique()}`;
    const rec = {
      kind: "relaying" as const,
      runId: serviceRunId(runId),
      key: { teamId: "T1", channelId: "C1", threadTs: "1.1" },
      ref: { projectId: "p", threadId: "t" },
      messageTs: ["1.2"],
      shownText: "Hello",
      startedAt: 1,
      uploads: "pending" as const,
    };
    await a.putRun(rec);
    expect(await b.getRun(runId)).toEqual(rec);
    expect((await b.listRuns()).map((r) => r.runId)).toContain(runId);
    await b.deleteRun(runId);
    expect(await a.getRun(runId)).toBeUndefined();
    expect((await a.listRuns()).map((r) => r.runId)).not.toContain(runId);
    await a.close();
    await b.close();
  });

  it("keeps a person's recent tasks newest first, bounded, updated in place, per workspace", async () => {
    const store = make();
    const teamId = unique();
    // Within the retention (older entries are not kept: see the retention's own test).
    const since = Date.now() - 3_600_000;
    const task = (i: number): RecentTask => ({
      channelId: "C1",
      threadTs: `17000000${String(i).padStart(2, "0")}.000100`,
      prompt: `task ${i}`,
      status: "running",
      startedAt: since + i,
      updatedAt: since + i,
    });
    // Concurrent starts (as two instances would) all land: the list is rewritten under a lock.
    await Promise.all(
      Array.from({ length: RECENT_TASKS_KEPT + 5 }, (_, i) =>
        store.putRecentTask(teamId, "U1", task(i)),
      ),
    );
    const all = await store.recentTasks(teamId, "U1", 100);
    expect(all).toHaveLength(RECENT_TASKS_KEPT);
    expect(all[0]?.prompt).toBe(`task ${RECENT_TASKS_KEPT + 4}`);
    expect(all.at(-1)?.prompt).toBe("task 5");
    expect((await store.recentTasks(teamId, "U1", 20)).map((t) => t.prompt)).toEqual(
      all.slice(0, 20).map((t) => t.prompt),
    );
    await store.updateRecentTask(teamId, "U1", task(50), (t) => ({ ...t, status: "completed" }));
    // A task no longer listed is not brought back.
    await store.updateRecentTask(teamId, "U1", task(0), (t) => ({ ...t, status: "failed" }));
    const after = await store.recentTasks(teamId, "U1", 100);
    expect(after.find((t) => t.prompt === "task 50")?.status).toBe("completed");
    expect(after.some((t) => t.prompt === "task 0")).toBe(false);
    // The same thread again replaces its entry.
    await store.putRecentTask(teamId, "U1", { ...task(50), prompt: "task 50 again" });
    expect(
      (await store.recentTasks(teamId, "U1", 100)).filter((t) => t.threadTs === task(50).threadTs),
    ).toHaveLength(1);
    expect(await store.recentTasks(unique(), "U1", 20)).toEqual([]);
    expect(await store.recentTasks(teamId, "U2", 20)).toEqual([]);
    await store.close();
  });

  it("keeps personal and channel defaults apart, per workspace; empty defaults are removed", async () => {
    const store = make();
    const teamId = unique();
    await store.putDefaults(
      teamId,
      { kind: "user", userId: "U1" },
      { model: "m1", thinking: false },
    );
    await store.putDefaults(teamId, { kind: "channel", channelId: "C1" }, { effort: "high" });
    expect(await store.getDefaults(teamId, { kind: "user", userId: "U1" })).toEqual({
      model: "m1",
      thinking: false,
    });
    expect(await store.getDefaults(teamId, { kind: "channel", channelId: "C1" })).toEqual({
      effort: "high",
    });
    expect(await store.getDefaults(teamId, { kind: "user", userId: "C1" })).toBeUndefined();
    expect(await store.getDefaults(unique(), { kind: "user", userId: "U1" })).toBeUndefined();
    await store.putDefaults(teamId, { kind: "user", userId: "U1" }, {});
    expect(await store.getDefaults(teamId, { kind: "user", userId: "U1" })).toBeUndefined();
    await store.close();
  });

  it("answers a health check", async () => {
    const store = make();
    expect(await store.ping()).toBe(true);
    await store.close();
  });
});

describe("embedded store", () => {
  it("survives a restart: a thread written before is read after reopening the file", async () => {
    const path = join(dir, "restart.sqlite");
    const first = createSqliteStore(path);
    const rec = record(unique(), { active: { kind: "idle" }, lastRunId: "run_9" });
    await first.putThread(rec);
    expect(await first.claimOnce(rec.teamId, "event:E", 60_000)).toBe(true);
    await first.close();
    const second = createSqliteStore(path);
    expect(await second.getThread(rec)).toMatchObject({
      lastRunId: "run_9",
      service: { projectId: "proj_1" },
    });
    expect(await second.claimOnce(rec.teamId, "event:E", 60_000)).toBe(false);
    await second.close();
  });

  it("creates its data directory 0700 and its files 0600, and makes older files 0600", async () => {
    const dataDir = join(dir, "private", "data");
    const path = join(dataDir, "taskbot.sqlite");
    const mode = (p: string) => statSync(p).mode & 0o777;
    const store = createSqliteStore(path);
    await store.putThread(record(unique(), { active: { kind: "idle" } }));
    expect(mode(dataDir)).toBe(0o700);
    for (const file of [path, `${path}-wal`, `${path}-shm`]) expect(mode(file)).toBe(0o600);
    await store.close();

    // A file an older version created readable by everyone is made private when it opens.
    const older = join(dir, "older.sqlite");
    writeFileSync(older, "");
    chmodSync(older, 0o644);
    const reopened = createSqliteStore(older);
    await reopened.putThread(record(unique(), { active: { kind: "idle" } }));
    expect(mode(older)).toBe(0o600);
    await reopened.close();
  });

  it("lets a claim lapse after its time to live", async () => {
    const store = createSqliteStore(join(dir, "ttl.sqlite"));
    const teamId = unique();
    expect(await store.claimOnce(teamId, "x", 1)).toBe(true);
    const until = Date.now() + 5;
    while (Date.now() < until) {
      // busy-wait 5 ms: the claim's expiry is a wall-clock fact, not a timer
    }
    expect(await store.claimOnce(teamId, "x", 60_000)).toBe(true);
    await store.close();
  });
});
