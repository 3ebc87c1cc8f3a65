/**
 * Forgetting a workspace (the app was uninstalled there) on every backend: two workspaces are
 * filled with every kind of record through the store's API, one is forgotten, and the raw keys
 * of the backend show nothing of it left while the other's are exactly as they were.
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
  type ThreadRecord,
  type ThreadStore,
} from "../../src/store/types.ts";
import { rawRedisKeys, rawSqliteKeys } from "../support/raw-keys.ts";

const dir = mkdtempSync(join(tmpdir(), "taskbot-forget-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const redisUrl = testRedisUrl();

let n = 0;
const unique = () => `${process.pid}x${Date.now().toString(36)}x${n++}`;

/** One backend: a store on it, and every raw key (with its value) under a namespace. */
interface Backend {
  open(options: StoreOptions): ThreadStore;
  rawKeys(namespace: string): Promise<Map<string, string>>;
  close(): Promise<void>;
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
    close: async () => {},
  };
}

function sqliteBackend(): Backend {
  const path = join(dir, "forget.sqlite");
  return {
    open: (options) => createSqliteStore(path, () => {}, options),
    rawKeys: async (ns) => rawSqliteKeys(path, ns),
    close: async () => {},
  };
}

function redisBackend(url: string): Backend {
  return {
    open: (options) => createRedisStore(url, () => {}, options),
    rawKeys: (ns) => rawRedisKeys(url, ns),
    close: async () => {},
  };
}

const backends: Array<[string, () => Backend]> = [
  ["memory", memoryBackend],
  ["embedded SQLite", sqliteBackend],
];
if (redisUrl) backends.push(["Redis", () => redisBackend(redisUrl)]);

const thread = (teamId: string, threadTs: string, runId: string): ThreadRecord => ({
  teamId,
  channelId: "C1",
  threadTs,
  service: { projectId: "proj_1", threadId: `thr_${threadTs}` },
  surface: "channel",
  ownerUserId: "U1",
  active: { kind: "running", runId, messageTs: "1700000000.000200" },
  lastRunId: undefined,
  queue: [{ userId: "U2", text: "and then?", ts: "1700000000.000300" }],
  createdAt: 1,
  updatedAt: 1,
});

/** A start being made, as a reservation records it. */
const reserved = (teamId: string, runId: string): ReservedRun => ({
  kind: "reserved",
  runId: reservationId(runId),
  key: { teamId, channelId: "C1", threadTs: "1700000000.000100" },
  messageTs: ["1700000000.000200"],
  startedAt: 1,
  opening: { userId: "U1", surface: "channel", since: 1 },
});

const run = (teamId: string, runId: string): RelayedRun => ({
  kind: "relaying",
  runId: serviceRunId(runId),
  key: { teamId, channelId: "C1", threadTs: "1700000000.000100" },
  ref: { projectId: "proj_1", threadId: "thr_1" },
  messageTs: ["1700000000.000200"],
  shownText: "Hello",
  startedAt: Date.now(),
  uploads: "pending",
});

/** Every kind of record a workspace has, written the way the app writes them. */
async function fill(store: ThreadStore, teamId: string, enterpriseId: string): Promise<string[]> {
  const relaying = `run_${teamId}`;
  const creating = `res_${teamId}`;
  const rec = thread(teamId, "1700000000.000100", relaying);
  await store.putThread(rec);
  // A queued reply written under the thread's lock, as follow-ups are.
  await store.updateThread(rec, (r) => ({
    ...r,
    queue: [...r.queue, { userId: "U3", text: "also", ts: "1700000000.000400" }],
  }));
  await store.putRun(run(teamId, relaying));
  await store.putRun(reserved(teamId, creating));
  await store.acquireLease(runLease(relaying), "instance-1", 60_000);
  await store.acquireLease(runLease(creating), "instance-1", 60_000);
  await store.requestStop(relaying, personStop("U1"));
  await store.claimOnce(teamId, "event:Ev1", 60_000);
  const perMinute = [
    { name: "user:U1", limit: 10 },
    { name: "channel:C1", limit: 60 },
  ];
  await store.consumeRate(teamId, perMinute, 60_000, Date.now());
  await store.putRecentTask(teamId, "U1", {
    channelId: "C1",
    threadTs: rec.threadTs,
    prompt: "Summarise",
    status: "running",
    startedAt: 1,
    updatedAt: 1,
  });
  await store.putDefaults(teamId, { kind: "user", userId: "U1" }, { model: "m1" });
  await store.putDefaults(teamId, { kind: "channel", channelId: "C1" }, { effort: "high" });
  await store.putRecord(`t:${teamId}:installation`, {
    team: { id: teamId },
    enterprise: { id: enterpriseId },
    bot: { token: `xoxb-${teamId}` },
  });
  await store.putRecord(`t:${teamId}:service-key`, { sealed: "..." });
  await store.putRecord(`t:${teamId}:usage-policy`, { who: "everyone" });
  return [relaying, creating];
}

describe.each(backends)("forgetting a workspace on %s", (_name, makeBackend) => {
  it("deletes every record of that workspace and leaves the other's exactly as they were", async () => {
    const backend = makeBackend();
    const namespace = `forget${unique()}`;
    const store = backend.open({ namespace });
    const teamA = `TA${unique()}`;
    const teamB = `TB${unique()}`;
    const runsA = await fill(store, teamA, "E1");
    const runsB = await fill(store, teamB, "E1");
    const ofA = (key: string, value: string) =>
      [teamA, ...runsA].some((s) => key.includes(s) || value.includes(s));

    const before = await backend.rawKeys(namespace);
    const keysOfA = [...before].filter(([k, v]) => ofA(k, v)).map(([k]) => k);
    // Every kind was written: threads, runs, leases, Stop requests, claims, recent tasks,
    // defaults of a person and of a channel, installation and the other t:<team>: records.
    const kinds = [
      ":thread:",
      ":run:",
      ":lease:run:",
      ":stopreq:",
      ":claim:",
      ":rate:",
      ":recent:",
      ":defaults:user:",
      ":defaults:channel:",
      ":installation",
      ":service-key",
      ":usage-policy",
    ];
    for (const kind of kinds)
      expect(
        keysOfA.some((k) => k.includes(kind)),
        kind,
      ).toBe(true);

    await store.forgetTeam(teamA);

    const after = await backend.rawKeys(namespace);
    expect([...after].filter(([k, v]) => ofA(k, v))).toEqual([]);
    // The other workspace's raw records are all still there, unchanged.
    expect(after).toEqual(new Map([...before].filter(([k, v]) => !ofA(k, v))));
    expect(after.size).toBeGreaterThanOrEqual(kinds.length);

    // And through the API: A reads as never installed, B as it was.
    const key = (teamId: string) => ({ teamId, channelId: "C1", threadTs: "1700000000.000100" });
    expect(await store.getThread(key(teamA))).toBeUndefined();
    expect(await store.getRun(runsA[0] ?? "")).toBeUndefined();
    expect(await store.stopRequest(runsA[0] ?? "")).toBeUndefined();
    expect(await store.recentTasks(teamA, "U1", 5)).toEqual([]);
    expect(await store.getRecord(`t:${teamA}:installation`)).toBeUndefined();
    expect(await store.claimOnce(teamA, "event:Ev1", 60_000)).toBe(true);
    const full = [{ name: "user:U1", limit: 1 }];
    expect(await store.consumeRate(teamA, full, 60_000, Date.now())).toEqual({ allowed: true });
    expect(await store.acquireLease(runLease(runsA[0] ?? ""), "instance-2", 60_000)).toBe(true);
    expect((await store.getThread(key(teamB)))?.queue).toHaveLength(2);
    expect((await store.listRuns()).map((r) => r.runId).sort()).toEqual([...runsB].sort());
    expect(await store.stopRequest(runsB[0] ?? "")).toEqual(personStop("U1"));
    expect(await store.getDefaults(teamB, { kind: "channel", channelId: "C1" })).toEqual({
      effort: "high",
    });
    expect(await store.claimOnce(teamB, "event:Ev1", 60_000)).toBe(false);
    expect(await store.consumeRate(teamB, full, 60_000, Date.now())).toMatchObject({
      allowed: false,
    });
    expect(await store.acquireLease(runLease(runsB[0] ?? ""), "instance-2", 60_000)).toBe(false);
    await store.close();
    await backend.close();
  });

  it("does not bring a forgotten run back: its record is only rewritten while it exists", async () => {
    const backend = makeBackend();
    const store = backend.open({ namespace: `forget${unique()}` });
    const teamId = `TA${unique()}`;
    const record = run(teamId, `run_${teamId}`);
    await store.putRun(record);
    expect(await store.updateRun({ ...record, shownText: "Hello, world" })).toBe(true);
    expect(await store.getRun(record.runId)).toMatchObject({ shownText: "Hello, world" });
    await store.forgetTeam(teamId);
    expect(await store.updateRun({ ...record, shownText: "Hello, world!" })).toBe(false);
    expect(await store.getRun(record.runId)).toBeUndefined();
    await store.close();
    await backend.close();
  });

  it("forgets a workspace whose id another one's starts with, and nothing of the other", async () => {
    const backend = makeBackend();
    const namespace = `forget${unique()}`;
    const store = backend.open({ namespace });
    const teamId = `TA${unique()}`;
    await fill(store, teamId, "E1");
    await fill(store, `${teamId}0`, "E1");
    const before = await backend.rawKeys(namespace);
    await store.forgetTeam(teamId);
    const after = await backend.rawKeys(namespace);
    expect(after.size).toBeGreaterThan(0);
    expect([...after.keys()].every((k) => k.includes(`${teamId}0`))).toBe(true);
    expect(after).toEqual(
      new Map([...before].filter(([k, v]) => k.includes(`${teamId}0`) || v.includes(`${teamId}0`))),
    );
    await store.close();
    await backend.close();
  });
});
