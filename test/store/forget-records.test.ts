/**
 * Forgetting part of a workspace on every backend, read back key by key: one task thread (its
 * message was deleted), one channel (deleted), one person's records (they erased them), and
 * what a workspace's people left (an admin erased it). Each takes exactly its records, and
 * another workspace's stay exactly as they were.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { testRedisUrl } from "../support/needs.ts";
import type { StoreOptions } from "../../src/store/keyv-store.ts";
import { createMemoryStore, type MemoryMaps } from "../support/fakes/memory-store.ts";
import { createRedisStore } from "../../src/store/redis.ts";
import { runLease } from "../../src/store/run-index.ts";
import { createSqliteStore } from "../../src/store/sqlite.ts";
import {
  personStop,
  type RelayedRun,
  type ReservedRun,
  reservationId,
  serviceRunId,
  type SlackThreadKey,
  type ThreadRecord,
  type ThreadStore,
} from "../../src/store/types.ts";
import { rawRedisKeys, rawSqliteKeys } from "../support/raw-keys.ts";

const dir = mkdtempSync(join(tmpdir(), "taskbot-forget-records-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const redisUrl = testRedisUrl();

let n = 0;
const unique = () => `${process.pid}x${Date.now().toString(36)}x${n++}`;

interface Backend {
  open(options: StoreOptions): ThreadStore;
  rawKeys(namespace: string): Promise<Map<string, string>>;
}

function memoryBackend(): Backend {
  const maps: MemoryMaps = { records: new Map(), entries: new Map() };
  return {
    open: (options) => createMemoryStore({ ...options, maps }),
    rawKeys: async (ns) => {
      const raw = new Map<string, string>();
      for (const [k, v] of maps.records) if (k.startsWith(`${ns}:`)) raw.set(k, JSON.stringify(v));
      for (const [k, v] of maps.entries) if (k.startsWith(`${ns}:`)) raw.set(k, v.value);
      return raw;
    },
  };
}

const backends: Array<[string, () => Backend]> = [
  ["memory", memoryBackend],
  [
    "embedded SQLite",
    () => {
      const path = join(dir, "forget.sqlite");
      return {
        open: (options) => createSqliteStore(path, () => {}, options),
        rawKeys: async (ns) => rawSqliteKeys(path, ns),
      };
    },
  ],
];
if (redisUrl) {
  backends.push([
    "Redis",
    () => ({
      open: (options) => createRedisStore(redisUrl, () => {}, options),
      rawKeys: (ns) => rawRedisKeys(redisUrl, ns),
    }),
  ]);
}

const T1 = "1700000000.000100";
const T2 = "1700000000.000200";
const T3 = "1700000000.000300";

const place = (teamId: string, channelId: string, threadTs: string): SlackThreadKey => ({
  teamId,
  channelId,
  threadTs,
});

function thread(key: SlackThreadKey, owner: string, queuedBy: string[]): ThreadRecord {
  return {
    ...key,
    service: { projectId: "proj_1", threadId: `thr_${key.channelId}_${key.threadTs}` },
    surface: "channel",
    ownerUserId: owner,
    active: { kind: "idle" },
    lastRunId: undefined,
    queue: queuedBy.map((userId, i) => ({
      userId,
      text: `reply ${i} of ${userId}`,
      ts: `1700000001.00000${i}`,
    })),
    createdAt: Date.now(),
    updatedAt: Date.now(),
  };
}

/**
 * A workspace: in C1 the task T1 of U1 (a reply of U2 waiting) and T2 of U2, each with a run;
 * in C2 the task T3 of U1 (a reply of U2 waiting) with a run being started. Recent tasks,
 * defaults of U1, U2, C1 and C2, a claim, and the workspace's settings.
 */
async function fill(store: ThreadStore, teamId: string): Promise<Record<string, string>> {
  const runs = { t1: `run_t1_${teamId}`, t2: `run_t2_${teamId}`, t3: `res_t3_${teamId}` };
  await store.putThread(thread(place(teamId, "C1", T1), "U1", ["U2"]));
  await store.putThread(thread(place(teamId, "C1", T2), "U2", []));
  await store.putThread(thread(place(teamId, "C2", T3), "U1", ["U2", "U1"]));
  const relayed = (runId: string, key: SlackThreadKey): RelayedRun => ({
    kind: "relaying",
    runId: serviceRunId(runId),
    key,
    ref: { projectId: "proj_1", threadId: `thr_${runId}` },
    messageTs: ["1700000002.000100"],
    shownText: "Hello",
    startedAt: Date.now(),
    uploads: "pending",
  });
  const reserved: ReservedRun = {
    kind: "reserved",
    runId: reservationId(runs.t3),
    key: place(teamId, "C2", T3),
    messageTs: [],
    startedAt: Date.now(),
    opening: { userId: "U1", surface: "channel", since: Date.now() },
  };
  await store.putRun(relayed(runs.t1, place(teamId, "C1", T1)));
  await store.putRun(relayed(runs.t2, place(teamId, "C1", T2)));
  await store.putRun(reserved);
  for (const runId of Object.values(runs)) {
    await store.acquireLease(runLease(runId), "instance-1", 60_000);
    await store.requestStop(runId, personStop("U9"));
  }
  const recent = (channelId: string, threadTs: string) => ({
    channelId,
    threadTs,
    prompt: `task ${threadTs}`,
    status: "running" as const,
    startedAt: Date.now(),
    updatedAt: Date.now(),
  });
  await store.putRecentTask(teamId, "U1", recent("C1", T1));
  await store.putRecentTask(teamId, "U1", recent("C2", T3));
  await store.putRecentTask(teamId, "U2", recent("C1", T2));
  await store.putDefaults(teamId, { kind: "user", userId: "U1" }, { model: "m1" });
  await store.putDefaults(teamId, { kind: "user", userId: "U2" }, { model: "m2" });
  await store.putDefaults(teamId, { kind: "channel", channelId: "C1" }, { effort: "high" });
  await store.putDefaults(teamId, { kind: "channel", channelId: "C2" }, { effort: "low" });
  await store.claimOnce(teamId, "event:Ev1", 60_000);
  await store.putRecord(`t:${teamId}:usage-policy`, { who: "everyone" });
  await store.putRecord(`t:${teamId}:installation`, { bot: { token: `xoxb-${teamId}` } });
  await store.putRecord(`t:${teamId}:audit`, [{ what: "records.erased" }], { retained: true });
  return runs;
}

/** Two workspaces filled alike; the raw keys before; the other workspace's raw keys after. */
async function scene(makeBackend: () => Backend) {
  const backend = makeBackend();
  const namespace = `fr${unique()}`;
  const store = backend.open({ namespace });
  const a = `TA${unique()}`;
  const b = `TB${unique()}`;
  const runs = await fill(store, a);
  await fill(store, b);
  const ofB = (raw: Map<string, string>) =>
    new Map([...raw].filter(([k, v]) => k.includes(b) || v.includes(b)));
  const before = ofB(await backend.rawKeys(namespace));
  expect(before.size).toBeGreaterThan(15);
  const othersUnchanged = async () => {
    expect(ofB(await backend.rawKeys(namespace))).toEqual(before);
  };
  const threads = async (teamId: string) =>
    Promise.all(
      [place(teamId, "C1", T1), place(teamId, "C1", T2), place(teamId, "C2", T3)].map((k) =>
        store.getThread(k),
      ),
    );
  const recents = async (userId: string) =>
    (await store.recentTasks(a, userId, 50)).map((t) => `${t.channelId}/${t.threadTs}`);
  return { store, a, runs, othersUnchanged, threads, recents, backend, namespace };
}

describe.each(backends)("forgetting part of a workspace on %s", (_name, makeBackend) => {
  it("forgets one task thread: its record, queued replies, runs and recent-task entry", async () => {
    const { store, a, runs, othersUnchanged, threads, recents } = await scene(makeBackend);
    const forgotten = await store.forgetThread(place(a, "C1", T1));
    expect(forgotten?.ownerUserId).toBe("U1");
    const [t1, t2, t3] = await threads(a);
    expect([t1, t2?.ownerUserId, t3?.queue.length]).toEqual([undefined, "U2", 2]);
    expect(await store.getRun(runs.t1 ?? "")).toBeUndefined();
    expect(await store.stopRequest(runs.t1 ?? "")).toBeUndefined();
    expect(await store.acquireLease(runLease(runs.t1 ?? ""), "instance-2", 60_000)).toBe(true);
    expect(await store.getRun(runs.t2 ?? "")).toBeDefined();
    expect(await recents("U1")).toEqual(["C2/" + T3]);
    expect(await recents("U2")).toEqual(["C1/" + T2]);
    // A message that was no task's: nothing.
    expect(await store.forgetThread(place(a, "C1", "1700000009.000100"))).toBeUndefined();
    await othersUnchanged();
    await store.close();
  });

  it("forgets a channel: its threads, runs, defaults and tasks in everyone's recent tasks", async () => {
    const { store, a, runs, othersUnchanged, threads, recents } = await scene(makeBackend);
    expect((await store.forgetChannel(a, "C1")).sort()).toEqual(["U1", "U2"]);
    const [t1, t2, t3] = await threads(a);
    expect([t1, t2, t3?.channelId]).toEqual([undefined, undefined, "C2"]);
    expect(await store.getRun(runs.t1 ?? "")).toBeUndefined();
    expect(await store.getRun(runs.t2 ?? "")).toBeUndefined();
    expect(await store.getRun(runs.t3 ?? "")).toBeDefined();
    expect(await store.stopRequest(runs.t3 ?? "")).toEqual(personStop("U9"));
    expect(await store.getDefaults(a, { kind: "channel", channelId: "C1" })).toBeUndefined();
    expect(await store.getDefaults(a, { kind: "channel", channelId: "C2" })).toEqual({
      effort: "low",
    });
    expect(await recents("U1")).toEqual(["C2/" + T3]);
    expect(await recents("U2")).toEqual([]);
    await othersUnchanged();
    await store.close();
  });

  it("erases a person's records: the threads they started, their waiting replies, recent tasks and defaults", async () => {
    const { store, a, runs, othersUnchanged, threads, recents } = await scene(makeBackend);
    expect(await store.forgetPerson(a, "U2")).toEqual({
      threads: 1,
      queuedReplies: 2,
      recentTasks: 1,
      defaults: true,
    });
    const [t1, t2, t3] = await threads(a);
    expect(t2).toBeUndefined();
    expect(t1?.queue).toEqual([]);
    expect(t3?.queue.map((r) => r.userId)).toEqual(["U1"]);
    expect(await recents("U2")).toEqual([]);
    expect(await recents("U1")).toHaveLength(2);
    expect(await store.getDefaults(a, { kind: "user", userId: "U2" })).toBeUndefined();
    expect(await store.getDefaults(a, { kind: "user", userId: "U1" })).toEqual({ model: "m1" });
    // Runs go on: their records are deleted when they end.
    expect(await store.getRun(runs.t2 ?? "")).toBeDefined();
    expect(await store.forgetPerson(a, "U2")).toEqual({
      threads: 0,
      queuedReplies: 0,
      recentTasks: 0,
      defaults: false,
    });
    await othersUnchanged();
    await store.close();
  });

  it("erases what a workspace's people left and keeps its settings and audit trail", async () => {
    const { store, a, runs, othersUnchanged, threads, backend, namespace } =
      await scene(makeBackend);
    await store.forgetPeople(a);
    expect(await threads(a)).toEqual([undefined, undefined, undefined]);
    for (const runId of Object.values(runs)) {
      expect(await store.getRun(runId)).toBeUndefined();
      expect(await store.stopRequest(runId)).toBeUndefined();
      expect(await store.acquireLease(runLease(runId), "instance-2", 60_000)).toBe(true);
      await store.releaseLease(runLease(runId), "instance-2");
    }
    const left = [...(await backend.rawKeys(namespace)).keys()]
      .filter((k) => k.includes(a))
      .map((k) => k.slice(k.indexOf(a) + a.length))
      .sort();
    expect(left).toEqual([
      ":audit",
      ":defaults:channel:C1",
      ":defaults:channel:C2",
      ":event:Ev1",
      ":installation",
      ":usage-policy",
    ]);
    await othersUnchanged();
    await store.close();
  });
});
