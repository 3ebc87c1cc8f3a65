/**
 * Every record the store writes carries the version of its format (record-format.ts), and a
 * record of another version (a later release's, or one written before there were versions) is
 * read as a damaged record: a thread or defaults that are not found, a setting that is
 * unreadable. (Run-index entries: run-index.test.ts.)
 */
import { Keyv } from "keyv";
import { describe, expect, it } from "vitest";
import { createMemoryStore, type MemoryMaps } from "../support/fakes/memory-store.ts";
import { FORMAT_VERSION, OTHER_FORMAT } from "../../src/store/record-format.ts";
import type { RecentTask, ThreadRecord } from "../../src/store/types.ts";
import {
  DEFAULT_USAGE_POLICY,
  getServiceAlert,
  getUsagePolicy,
  putServiceAlert,
  putUsagePolicy,
  UsagePolicyUnreadableError,
} from "../../src/store/usage-policy.ts";

const NS = "fmt";
const TEAM = "T0FMT";
const KEY = { teamId: TEAM, channelId: "C1", threadTs: "1700000000.000100" };
const THREAD_KEY = `t:${TEAM}:thread:C1:1700000000.000100`;

function thread(): ThreadRecord {
  return {
    ...KEY,
    surface: "channel",
    ownerUserId: "U1",
    active: { kind: "starting", since: 1 },
    lastRunId: undefined,
    queue: [],
    createdAt: 1,
    updatedAt: 1,
  };
}

const task: RecentTask = {
  channelId: "C1",
  threadTs: KEY.threadTs,
  prompt: "Build it",
  status: "running",
  startedAt: Date.now(),
  updatedAt: Date.now(),
};

/** A memory store, its records as stored (by key, without the namespace), and a raw writer. */
function storeWithMaps() {
  const maps: MemoryMaps = { records: new Map(), entries: new Map() };
  const store = createMemoryStore({ maps, namespace: NS });
  // keyv on the same map: what another release (or a test) puts there, as it puts it.
  const raw = new Keyv<unknown>({ store: maps.records, namespace: NS });
  return { store, raw };
}

describe("the format version of the store's records", () => {
  it("stamps every record it writes with this release's format version", async () => {
    const { store, raw } = storeWithMaps();
    await store.putThread(thread());
    await store.putRecentTask(TEAM, "U1", task);
    await store.putDefaults(TEAM, { kind: "user", userId: "U1" }, { model: "m1" });
    await store.putRecord(`t:${TEAM}:plain`, "a string");
    await store.putRecord(`t:${TEAM}:kept`, { votes: [] }, { retained: true });

    expect(FORMAT_VERSION).toBe(1);
    expect(await raw.get(THREAD_KEY)).toEqual({ v: 1, value: thread() });
    expect(await raw.get(`t:${TEAM}:recent:U1`)).toEqual({ v: 1, value: [task] });
    expect(await raw.get(`t:${TEAM}:defaults:user:U1`)).toEqual({ v: 1, value: { model: "m1" } });
    expect(await raw.get(`t:${TEAM}:plain`)).toEqual({ v: 1, value: "a string" });
    expect(await raw.get(`t:${TEAM}:kept`)).toEqual({ v: 1, value: { votes: [] } });
    // And reads them back as they were.
    expect(await store.getThread(KEY)).toEqual(thread());
    expect(await store.recentTasks(TEAM, "U1", 10)).toEqual([task]);
    expect(await store.getDefaults(TEAM, { kind: "user", userId: "U1" })).toEqual({ model: "m1" });
    expect(await store.getRecord(`t:${TEAM}:plain`)).toBe("a string");
  });

  it("keeps a thread's service conversation, absent until the service created the task", async () => {
    const { store } = storeWithMaps();
    await store.putThread(thread());
    expect(await store.getThread(KEY)).not.toHaveProperty("service");
    const service = { projectId: "proj_1", threadId: "thr_1" };
    await store.putThread({ ...thread(), service });
    expect((await store.getThread(KEY))?.service).toEqual(service);
    const updated = await store.updateThread(KEY, (rec) => ({ ...rec, lastRunId: "run_1" }));
    expect(updated?.service).toEqual(service);
  });

  it.each([
    ["a later release's format", (value: unknown) => ({ v: FORMAT_VERSION + 1, value })],
    ["no format version", (value: unknown) => value],
  ])(
    "reads a thread of %s as no thread, never overwrites it, and still erases it",
    async (_what, as) => {
      const { store, raw } = storeWithMaps();
      const stored = as(thread());
      await raw.set(THREAD_KEY, stored);
      expect(await store.getThread(KEY)).toBeUndefined();
      expect(await store.updateThread(KEY, (r) => ({ ...r, lastRunId: "run_9" }))).toBeUndefined();
      expect(await raw.get(THREAD_KEY)).toEqual(stored);
      await store.forgetThread(KEY);
      expect(await raw.get(THREAD_KEY)).toBeUndefined();
    },
  );

  it("reads recent tasks and defaults of another format as none", async () => {
    const { store, raw } = storeWithMaps();
    await raw.set(`t:${TEAM}:recent:U1`, { v: FORMAT_VERSION + 1, value: [task] });
    await raw.set(`t:${TEAM}:defaults:user:U1`, { v: FORMAT_VERSION + 1, value: { model: "m" } });
    expect(await store.recentTasks(TEAM, "U1", 10)).toEqual([]);
    expect(await store.getDefaults(TEAM, { kind: "user", userId: "U1" })).toBeUndefined();
  });

  it("hands a record of another format to its reader as unreadable: a usage policy is refused, not defaulted", async () => {
    const { store, raw } = storeWithMaps();
    const policy = { ...DEFAULT_USAGE_POLICY, perUserPerHour: 5 };
    await putUsagePolicy(store, TEAM, policy);
    expect(await getUsagePolicy(store, TEAM)).toEqual(policy);
    await putServiceAlert(store, TEAM, { status: 402, at: Date.now() });

    await raw.set(`t:${TEAM}:usage-policy`, { v: FORMAT_VERSION + 1, value: policy });
    await raw.set(`t:${TEAM}:service-alert`, { v: FORMAT_VERSION + 1, value: { status: 402 } });
    expect(await store.getRecord(`t:${TEAM}:usage-policy`)).toBe(OTHER_FORMAT);
    await expect(getUsagePolicy(store, TEAM)).rejects.toBeInstanceOf(UsagePolicyUnreadableError);
    expect(await getServiceAlert(store, TEAM, Date.now())).toBeUndefined();
  });
});
