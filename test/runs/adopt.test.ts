/**
 * Adoption on in-process doubles and a fake clock: an instance died while a run started, and
 * this one finishes the start from its reservation by a fresh start's steps. What was left
 * unposted is posted, the thread layer records the run, the service's run is relayed (and
 * stopped if Stop was pressed meanwhile); a start the service never answered ends its message
 * as interrupted; a start nothing can show tells the person and stops the service's run.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { Relay } from "../../src/runs/relay.ts";
import { type RunOutcome } from "../../src/runs/relay.ts";
import type { StepResult } from "../../src/runs/ports.ts";
import {
  type RelayedRun,
  type ReservedRun,
  reservationId,
  type RunOpening,
  serviceRunId,
  type ThreadStore,
} from "../../src/store/types.ts";
import { runLease } from "../../src/store/run-index.ts";
import type { FakeClock } from "../support/fake-clock.ts";
import { relayOnFakes } from "../support/fakes/relay.ts";
import type { FakeSlackWriter } from "../support/fakes/slack-writer.ts";
import type { FakeTaskService } from "../support/fakes/task-service.ts";

const place = { teamId: "T1", channelId: "C1" };
const threadTs = "1700000000.000001";
let writer: FakeSlackWriter;
let service: FakeTaskService;
let store: ThreadStore;
let clock: FakeClock;
let relay: Relay;
let ended: RunOutcome[];
let steps: StepResult[];

beforeEach(() => {
  steps = [];
  const workflowSteps = {
    end: async (_t: string, _s: unknown, r: StepResult) => void steps.push(r),
  };
  ({ writer, service, store, clock, relay, ended } = relayOnFakes({
    instanceId: "i2",
    workflowSteps,
  }));
});

/** The reservation a dead instance left: its opening, and what it got done. */
async function leftBehind(got: Partial<ReservedRun> & { plan?: Partial<RunOpening> } = {}) {
  const { plan, ...rest } = got;
  const record: ReservedRun & { opening: RunOpening } = {
    kind: "reserved",
    runId: reservationId("reserved:T1:C1:dead"),
    key: place,
    messageTs: [],
    startedAt: clock.now() - 5_000,
    owner: "U1",
    opening: {
      userId: "U1",
      surface: "channel",
      since: clock.now() - 5_000,
      prompt: { text: "Draft the memo", fileNames: [] },
      ...plan,
    },
    ...rest,
  };
  await store.putRun(record);
  return record;
}

/** The service's run the dead instance had asked for (`thr_1`, `run_1`). */
async function serviceRun() {
  const made = await service.createTask({ prompt: "Draft the memo" });
  const ref = { projectId: made.project_id, threadId: made.thread_id };
  return { ref, runId: serviceRunId(made.agent_run_id) };
}

describe("finishing a start another instance began", () => {
  it("posts the prompt and working message left unposted, records the thread, and relays the service's run", async () => {
    const created = await serviceRun();
    const record = await leftBehind({ created });
    service.final = { status: "completed", content: "The memo." };
    service.emit({ type: "status", status: "completed" });
    service.close();

    await relay.resume(record);
    const [prompt, working] = writer.messages;
    expect(prompt?.threadTs).toBeUndefined();
    expect(prompt?.text).toContain("Draft the memo");
    expect(working?.threadTs).toBe(prompt?.ts);
    expect(writer.messages).toHaveLength(2);
    // The thread layer's record: the service's conversation, who asked, the run in its message.
    const key = { ...place, threadTs: prompt?.ts ?? "" };
    const thread = await store.getThread(key);
    expect(thread?.service).toEqual(created.ref);
    expect(thread?.ownerUserId).toBe("U1");
    expect(thread?.active).toEqual({ kind: "running", runId: "run_1", messageTs: working?.ts });
    // The run was relayed to its end in that message; nothing is left recorded.
    expect(ended.map((e) => [e.state, e.text, e.target.runId])).toEqual([
      ["completed", "The memo.", "run_1"],
    ]);
    expect(working?.text).toContain("The memo.");
    expect(await store.listRuns()).toEqual([]);
    // The service was not asked again.
    expect(service.prompts).toEqual(["Draft the memo"]);
  });

  it("leaves a start it could not finish for a later scan, neither forgotten nor its step failed", async () => {
    const created = await serviceRun();
    const record = await leftBehind({
      created,
      plan: { step: { executionId: "Fx1", token: "xwfp-step" } },
    });
    // The store fails once the service's run is claimed here (after its messages are posted).
    const getRun = store.getRun.bind(store);
    store.getRun = async (id) => {
      if (id === created.runId) throw new Error("the store is unreachable");
      return getRun(id);
    };
    await relay.resume(record);
    store.getRun = getRun;
    // Still recorded, its lease free: the next scan (any instance) finishes it.
    expect((await store.listRuns()).map((r) => r.runId)).toEqual([record.runId]);
    expect(await store.acquireLease(runLease(record.runId), "i3", 15_000)).toBe(true);
    expect(steps).toEqual([]);
    expect(service.stopped).toEqual([]);
  });

  it("posts only the working message in a thread that exists, and stops a run whose Stop was pressed meanwhile", async () => {
    const created = await serviceRun();
    const key = { ...place, threadTs };
    const now = clock.now();
    await store.putThread({
      ...key,
      ownerUserId: "U1",
      surface: "channel",
      active: { kind: "starting", since: now, stop: { kind: "person", userId: "U3" } },
      lastRunId: undefined,
      queue: [],
      createdAt: now,
      updatedAt: now,
    });
    const record = await leftBehind({ key, created });

    await relay.resume(record);
    await relay.idle();
    expect(writer.messages).toHaveLength(1);
    expect(writer.messages[0]?.threadTs).toBe(threadTs);
    expect(service.stopped).toEqual(["thr_1"]);
    expect(ended.map((e) => e.state)).toEqual(["stopped"]);
    expect(writer.messages[0]?.text).toMatch(/Stopped by <@U3>/);
    expect(await store.listRuns()).toEqual([]);
  });

  it("ends the message as interrupted when the service never answered", async () => {
    const record = await leftBehind({ key: { ...place, threadTs } });

    await relay.resume(record);
    await relay.idle();
    expect(writer.messages).toHaveLength(1);
    expect(writer.messages[0]?.text).toContain("interrupted before the task service answered");
    expect(ended).toHaveLength(1);
    expect(service.prompts).toEqual([]);
    expect(await store.listRuns()).toEqual([]);
    // Nothing ran: the thread is not recorded as running anything.
    expect(await store.getThread({ ...place, threadTs })).toBeUndefined();
  });

  it("tells the person privately, stops the service's run, and fails its step when nothing can be posted", async () => {
    const created = await serviceRun();
    const step = { executionId: "Fx1", token: "xwfp-1" };
    const record = await leftBehind({ created, plan: { step } });
    writer.failPosts("channel_not_found");

    await relay.resume(record);
    expect(writer.ephemerals).toHaveLength(1);
    expect(writer.ephemerals[0]).toMatchObject({ channelId: "C1", userId: "U1" });
    expect(writer.ephemerals[0]?.text).toMatch(/channel/);
    expect(service.stopped).toEqual(["thr_1"]);
    expect(steps.map((s) => s.state)).toEqual(["error"]);
    expect(await store.listRuns()).toEqual([]);
    expect(relay.activeRuns).toBe(0);
  });

  it("leaves the service's run to the instance that relays it already", async () => {
    const created = await serviceRun();
    const theirs: RelayedRun = {
      kind: "relaying",
      runId: created.runId,
      key: { ...place, threadTs },
      ref: created.ref,
      messageTs: ["1700000000.000200"],
      shownText: "Shown by them",
      startedAt: clock.now(),
      uploads: "pending",
    };
    await store.putRun(theirs);
    await store.acquireLease(runLease(created.runId), "i1", 15_000);
    const record = await leftBehind({ key: { ...place, threadTs }, created });

    await relay.resume(record);
    expect(relay.activeRuns).toBe(0);
    expect(await store.listRuns()).toEqual([theirs]);
    expect(service.stopped).toEqual([]);
    expect(steps).toEqual([]);
  });
});
