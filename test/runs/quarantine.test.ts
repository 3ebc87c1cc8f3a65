/**
 * A run that kills the instances relaying it is not handed from one to the next forever: each
 * relay of it is counted in its record, given back when the run is handed over on purpose,
 * and a run whose relaying instances died three times is quarantined: not followed again, its
 * thread says why and where the result is, and it ends so that the thread goes on.
 */
import { pino } from "pino";
import { beforeEach, describe, expect, it } from "vitest";
import { Relay, type RunOutcome } from "../../src/runs/relay.ts";
import { MAX_RELAY_DEATHS, MAX_RELAY_DEATHS_FOLLOWING } from "../../src/runs/outcome.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import { type RelayedRun, serviceRunId, type ThreadStore } from "../../src/store/types.ts";
import { runLease } from "../../src/store/run-index.ts";
import { FakeSlackWriter } from "../support/fakes/slack-writer.ts";
import { FakeTaskService } from "../support/fakes/task-service.ts";
import { oneWorkspace } from "../support/fakes/workspaces.ts";
import { runningThreads } from "../../src/threads/running.ts";

const key = { teamId: "T1", channelId: "C1", threadTs: "1700000000.000001" };
let writer: FakeSlackWriter;
let service: FakeTaskService;
let store: ThreadStore;
let ended: RunOutcome[];
let relay: Relay;
let errors: { msg: string; runId?: string }[];

beforeEach(() => {
  writer = new FakeSlackWriter({ edits: "scheduled" });
  service = new FakeTaskService();
  store = createMemoryStore();
  ended = [];
  errors = [];
  const logger = pino(
    { level: "error" },
    { write: (line: string) => void errors.push(JSON.parse(line) as { msg: string }) },
  );
  relay = new Relay({
    workspaces: oneWorkspace(writer, service),
    store,
    threads: runningThreads({ store, now: Date.now }),
    instanceId: "i9",
    logger,
    follow: { reconnectDelayMs: 1, pollTimeoutS: 1 },
    stopGraceMs: 50,
  });
  relay.onEnded(async (o) => {
    ended.push(o);
  });
});

/** A run another instance was relaying, as its record says, and its message in the thread. */
async function leftBehind(openRelays: number | undefined, finishing = true): Promise<RelayedRun> {
  const messageTs = await writer.post("C1", { text: "Working…", blocks: [] }, key.threadTs);
  const record: RelayedRun = {
    kind: "relaying",
    runId: serviceRunId("run_9"),
    key,
    ref: { projectId: "p9", threadId: "thr_9" },
    messageTs: [messageTs],
    shownText: "The first part",
    startedAt: Date.now() - 60_000,
    uploads: "pending",
    ...(openRelays === undefined ? {} : { openRelays }),
    ...(finishing ? { finishing } : {}),
  };
  await store.putRun(record);
  await store.acquireLease(runLease(record.runId), "i9", 15_000);
  return record;
}

describe("a run that instances keep dying on", () => {
  it(`is quarantined once ${MAX_RELAY_DEATHS} instances died relaying it: not followed, its thread says why`, async () => {
    const record = await leftBehind(MAX_RELAY_DEATHS);
    await relay.resume(record);
    await relay.idle();
    // Never followed again: nothing was asked of the service.
    expect(service.results).toBe(0);
    expect(service.stopped).toEqual([]);
    const final = JSON.stringify(writer.messages.at(-1)?.payload);
    expect(final).toContain("The first part");
    expect(final).toContain("the app stopped 3 times while showing it");
    expect(final).toContain("open History under this message");
    // It ended: the thread is free again, the record is gone, an error names the run.
    expect(ended.map((e) => e.state)).toEqual(["error"]);
    expect(await store.getRun(record.runId)).toBeUndefined();
    expect(errors.find((e) => e.msg.startsWith("run quarantined"))?.runId).toBe("run_9");
    expect(relay.metrics().runs.quarantined).toBe(1);
  });

  it("counts each relay in the record, and a hand-over on purpose gives it back", async () => {
    const record = await leftBehind(1); // one instance died relaying it
    service.emit({ type: "delta", text: " and more" });
    const resumed = relay.resume(record);
    // Taken over: two relays began and are not let go.
    await expect.poll(async () => (await store.getRun(record.runId))?.openRelays).toBe(2);
    await relay.handover();
    await resumed;
    // Handed over on shutdown: only the instance that died still counts.
    expect((await store.getRun(record.runId))?.openRelays).toBe(1);
    expect(ended).toEqual([]);
  });

  it(`is relayed again while only ${MAX_RELAY_DEATHS_FOLLOWING - 1} died on it before it was ending (maybe of another run)`, async () => {
    const record = await leftBehind(MAX_RELAY_DEATHS_FOLLOWING - 1, false);
    service.final = { status: "completed", content: "The first part, then the rest." };
    service.emit({ type: "status", status: "completed" });
    service.close();
    await relay.resume(record);
    await relay.idle();
    expect(ended.map((e) => e.state)).toEqual(["completed"]);
  });

  it(`is quarantined once ${MAX_RELAY_DEATHS_FOLLOWING} died on it while it was followed`, async () => {
    const record = await leftBehind(MAX_RELAY_DEATHS_FOLLOWING, false);
    await relay.resume(record);
    await relay.idle();
    expect(service.results).toBe(0);
    expect(JSON.stringify(writer.messages.at(-1)?.payload)).toContain("stopped 10 times");
  });

  it("is relayed as usual while fewer instances died on it", async () => {
    const record = await leftBehind(MAX_RELAY_DEATHS - 1);
    service.final = { status: "completed", content: "The first part, then the rest." };
    service.emit({ type: "status", status: "completed" });
    service.close();
    await relay.resume(record);
    await relay.idle();
    expect(ended.map((e) => e.state)).toEqual(["completed"]);
    expect(JSON.stringify(writer.messages.at(-1)?.payload)).toContain("then the rest");
  });

  it("starts a new run counting its own relay", async () => {
    const messageTs = await writer.post("C1", { text: "Working…", blocks: [] }, key.threadTs);
    await relay.start({
      key,
      ref: { projectId: "p1", threadId: "thr_1" },
      runId: "run_1",
      messageTs,
      startedAt: Date.now(),
    });
    expect((await store.getRun("run_1"))?.openRelays).toBe(1);
    await relay.handover();
  });
});
