/**
 * A thread record as stored: the service's conversation is absent until the service created
 * the task, and stored as every version reads it ("" project and thread until then).
 */
import { describe, expect, it } from "vitest";
import { createMemoryStore, type MemoryMaps } from "../../src/store/memory.ts";
import type { ThreadRecord } from "../../src/store/types.ts";

const KEY = { teamId: "T1", channelId: "C1", threadTs: "1700000000.000100" };

function starting(): ThreadRecord {
  return {
    ...KEY,
    ownerUserId: "U1",
    active: { kind: "starting", since: 1 },
    lastRunId: undefined,
    queue: [],
    createdAt: 1,
    updatedAt: 1,
  };
}

function storeWithMaps() {
  const maps: MemoryMaps = { records: new Map(), entries: new Map() };
  const store = createMemoryStore({ maps, namespace: "tr" });
  const raw = () =>
    [...maps.records.values()]
      .map((v) => (typeof v === "string" ? v : JSON.stringify(v)))
      .join("\n");
  return { store, raw };
}

describe("a thread record in the store", () => {
  it("has no service conversation while its task is being created, and says so as older versions read it", async () => {
    const { store, raw } = storeWithMaps();
    await store.putThread(starting());
    const read = await store.getThread(KEY);
    expect(read).toBeDefined();
    expect(read).not.toHaveProperty("service");
    expect(raw()).toContain('"projectId":""');
    expect(raw()).toContain('"threadId":""');
  });

  it("keeps the service's conversation once the task exists", async () => {
    const { store, raw } = storeWithMaps();
    const service = { projectId: "proj_1", threadId: "thr_1" };
    await store.putThread({ ...starting(), service });
    expect((await store.getThread(KEY))?.service).toEqual(service);
    expect(raw()).toContain('"projectId":"proj_1"');
    const updated = await store.updateThread(KEY, (rec) => ({ ...rec, lastRunId: "run_1" }));
    expect(updated?.service).toEqual(service);
  });
});
