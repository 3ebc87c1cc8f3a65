/**
 * Taking over runs nobody relays (runs/resumer.ts and the relay's resume), on in-process
 * doubles and a fake clock: a run left by a dead instance is resumed from the text its record
 * says is shown, and counted as relayed once more; a run another instance holds, or this one
 * relays already, is left alone; a run that ended between the scan's list and its lease has
 * its lease given back; a start left half-done is finished (adopt.ts).
 */
import { pino } from "pino";
import { beforeEach, describe, expect, it } from "vitest";
import { runLease } from "../../src/store/run-index.ts";
import type { Relay } from "../../src/runs/relay.ts";
import { type RunOutcome } from "../../src/runs/relay.ts";
import { Resumer } from "../../src/runs/resumer.ts";
import {
  type RelayedRun,
  reservationId,
  type RunRecord,
  serviceRunId,
  type ThreadStore,
} from "../../src/store/types.ts";
import type { FakeClock } from "../support/fake-clock.ts";
import { relayOnFakes } from "../support/fakes/relay.ts";
import type { FakeSlackWriter } from "../support/fakes/slack-writer.ts";
import type { FakeTaskService } from "../support/fakes/task-service.ts";

const key = { teamId: "T1", channelId: "C1", threadTs: "1700000000.000001" };
let writer: FakeSlackWriter;
let service: FakeTaskService;
let store: ThreadStore;
let clock: FakeClock;
let relay: Relay;
let ended: RunOutcome[];
/** Every resume the resumer asked of the relay, each resolving once that run is over here. */
let resumed: { record: RunRecord; done: Promise<void> }[];

/** A resumer over `over` (the store by default), as one instance runs it. */
function resumer(over: ThreadStore = store): Resumer {
  return new Resumer({
    store: over,
    relay,
    logger: pino({ level: "silent" }),
    leaseTtlMs: 15_000,
    intervalMs: 60_000,
  });
}

beforeEach(() => {
  ({ writer, service, store, clock, relay, ended } = relayOnFakes({ instanceId: "i2" }));
  resumed = [];
  const resume = relay.resume.bind(relay);
  relay.resume = (record) => {
    const done = resume(record);
    resumed.push({ record, done });
    return done;
  };
});

/** A run a dead instance was relaying: its record, and its message showing `shownText`. */
async function orphan(shownText = "The first part"): Promise<RelayedRun> {
  const made = await service.createTask({ prompt: "Explain" });
  const messageTs = await writer.post("C1", { text: shownText, blocks: [] }, key.threadTs);
  const record: RelayedRun = {
    kind: "relaying",
    runId: serviceRunId(made.agent_run_id),
    key,
    ref: { projectId: made.project_id, threadId: made.thread_id },
    messageTs: [messageTs],
    shownText,
    startedAt: clock.now() - 60_000,
    uploads: "pending",
    openRelays: 1,
  };
  await store.putRun(record);
  return record;
}

const allResumed = () => Promise.all(resumed.map((r) => r.done));

describe("taking over runs nobody relays", () => {
  it("resumes a run its instance left, from the text it showed, and counts the relay", async () => {
    const record = await orphan();
    await resumer().scan();
    await clock.advance(0, async () => undefined); // the resume's first writes are done
    expect(resumed.map((r) => r.record.runId)).toEqual([record.runId]);
    expect(relay.isActive(record.runId)).toBe(true);
    // One more instance relays it: should this one die too, the next one knows.
    const counted = await store.getRun(record.runId);
    expect(counted?.kind === "relaying" && counted.openRelays).toBe(2);
    // The service's text goes on from what was shown; the run ends in its message.
    service.final = { status: "completed", content: "The first part, and the rest." };
    service.emit({ type: "status", status: "completed" });
    service.close();
    await allResumed();
    expect(ended.map((e) => [e.state, e.text])).toEqual([
      ["completed", "The first part, and the rest."],
    ]);
    expect(writer.messages[0]?.text).toContain("The first part, and the rest.");
    expect(await store.getRun(record.runId)).toBeUndefined();
    // Its lease was given back with it.
    expect(await store.acquireLease(runLease(record.runId), "i3", 15_000)).toBe(true);
  });

  it("leaves a run whose lease another instance holds", async () => {
    const record = await orphan();
    await store.acquireLease(runLease(record.runId), "i1", 15_000);
    await resumer().scan();
    expect(resumed).toEqual([]);
    expect(await store.getRun(record.runId)).toEqual(record);
    expect(service.results).toBe(0);
  });

  it("leaves a run this instance relays already", async () => {
    const record = await orphan();
    await store.deleteRun(record.runId);
    await relay.start({ ...record, messageTs: record.messageTs[0] ?? "" });
    await resumer().scan();
    expect(resumed).toEqual([]);
    await relay.handover();
  });

  it("gives the lease back of a run that ended between the list and the lease", async () => {
    const record = await orphan();
    // The list still has it; read again under the lease, it is gone.
    const ending = new Proxy(store, {
      get(target, name) {
        if (name === "getRun") return async () => undefined;
        const value: unknown = Reflect.get(target, name);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    await resumer(ending).scan();
    expect(resumed).toEqual([]);
    expect(await store.acquireLease(runLease(record.runId), "i3", 15_000)).toBe(true);
  });

  it("finishes a start its instance left half-done, and relays the service's run", async () => {
    const made = await service.createTask({ prompt: "Explain" });
    const runId = serviceRunId(made.agent_run_id);
    await store.putRun({
      kind: "reserved",
      runId: reservationId("reserved:T1:C1:dead"),
      key,
      messageTs: [],
      startedAt: clock.now() - 5_000,
      owner: "U1",
      opening: { userId: "U1", surface: "channel", since: clock.now() - 5_000 },
      created: { ref: { projectId: made.project_id, threadId: made.thread_id }, runId },
    });
    service.final = { status: "completed", content: "Explained." };
    service.emit({ type: "status", status: "completed" });
    service.close();
    await resumer().scan();
    await allResumed();
    expect(writer.messages).toHaveLength(1);
    expect(writer.messages[0]?.threadTs).toBe(key.threadTs);
    expect(writer.messages[0]?.text).toContain("Explained.");
    expect(ended.map((e) => [e.state, e.target.runId])).toEqual([["completed", runId]]);
    expect(await store.listRuns()).toEqual([]);
  });
});
