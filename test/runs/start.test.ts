/**
 * A run's start (runs/start.ts) on in-process doubles and a fake clock: the start is reserved
 * before anything else, the service is asked while the messages are posted, the thread records
 * the run as running, the relay follows it, and the reservation goes whatever happened. A start
 * nothing can show tells the person and stops the service's run; a Stop pressed while it
 * started stops it once it is known.
 */
import { pino } from "pino";
import { beforeEach, describe, expect, it } from "vitest";
import type { Relay } from "../../src/runs/relay.ts";
import { type RunOutcome } from "../../src/runs/relay.ts";
import { type StartRequest, startRun } from "../../src/runs/start.ts";
import { TaskServiceError } from "../../src/service/errors.ts";
import { type RunOpening, serviceRunId, type ThreadStore } from "../../src/store/types.ts";
import type { FakeClock } from "../support/fake-clock.ts";
import { relayOnFakes } from "../support/fakes/relay.ts";
import type { FakeSlackWriter } from "../support/fakes/slack-writer.ts";
import type { FakeTaskService } from "../support/fakes/task-service.ts";
import { oneWorkspace } from "../support/fakes/workspaces.ts";
import { runningThreads } from "../../src/threads/running.ts";
import { runLease } from "../../src/store/run-index.ts";

const place = { teamId: "T1", channelId: "C1" };
let writer: FakeSlackWriter;
let service: FakeTaskService;
let store: ThreadStore;
let clock: FakeClock;
let relay: Relay;
let ended: RunOutcome[];
let told: string[];

beforeEach(() => {
  ({ writer, service, store, clock, relay, ended } = relayOnFakes());
  told = [];
});

/** Starts a run the way a new task does (a command: no thread yet), with `over` changed. */
function start(over: Partial<StartRequest> = {}) {
  const plan: RunOpening = {
    userId: "U1",
    surface: "channel",
    since: clock.now(),
    prompt: { text: "Summarise the report", fileNames: [] },
  };
  return startRun(
    {
      relay,
      workspaces: oneWorkspace(writer, service),
      threads: runningThreads({ store, now: () => clock.now() }),
      logger: pino({ level: "silent" }),
    },
    {
      place,
      plan,
      startedAt: clock.now(),
      ask: async () => {
        const made = await service.createTask({ prompt: "Summarise the report" });
        const ref = { projectId: made.project_id, threadId: made.thread_id };
        return { ref, runId: serviceRunId(made.agent_run_id) };
      },
      tell: async (text) => void told.push(text),
      notShownAdvice: "Not posted: try again.",
      ...over,
    },
  );
}

const texts = () => writer.messages.map((m) => m.text);

describe("starting a run", () => {
  it("posts the prompt and a working message in its thread, records the thread running, and relays the run", async () => {
    const result = await start();
    expect(result.kind).toBe("started");
    if (result.kind !== "started") return;
    // The prompt is the thread's parent; the working message is in its thread.
    const [prompt, working] = writer.messages;
    expect(prompt?.threadTs).toBeUndefined();
    expect(prompt?.text).toContain("Summarise the report");
    expect(working?.threadTs).toBe(prompt?.ts);
    expect(result.key).toEqual({ ...place, threadTs: prompt?.ts });
    expect(result.messageTs).toBe(working?.ts);
    // The service was asked once, for this prompt.
    expect(service.prompts).toEqual(["Summarise the report"]);
    // The thread continues the service's conversation, and runs this run in that message.
    const thread = await store.getThread(result.key);
    expect(thread?.service).toEqual({ projectId: "proj_1", threadId: "thr_1" });
    expect(thread?.ownerUserId).toBe("U1");
    expect(thread?.active).toEqual({ kind: "running", runId: "run_1", messageTs: working?.ts });
    // Only the run's record is left: the reservation is gone, the relay follows the run.
    const runs = await store.listRuns();
    expect(runs.map((r) => [r.kind, r.runId])).toEqual([["relaying", "run_1"]]);
    expect(relay.isActive("run_1")).toBe(true);

    service.final = { status: "completed", content: "The summary." };
    service.emit({ type: "status", status: "completed" });
    service.close();
    await relay.idle();
    expect(ended.map((e) => [e.state, e.text])).toEqual([["completed", "The summary."]]);
    expect(writer.messages.find((m) => m.ts === working?.ts)?.text).toContain("The summary.");
  });

  it("holds a start's lease before its record exists: another instance's scan cannot take it over", async () => {
    const putRun = store.putRun.bind(store);
    const taken: boolean[] = [];
    store.putRun = async (record) => {
      await putRun(record);
      // Another instance scans right after the record is written and tries to take it.
      if (record.kind === "reserved") {
        taken.push(await store.acquireLease(runLease(record.runId), "another-instance", 60_000));
      }
    };
    const result = await start();
    expect(result.kind).toBe("started");
    expect(taken.length).toBeGreaterThan(0);
    expect(taken.every((t) => !t)).toBe(true);
  });

  it("relays a run whose record cannot be written at its start, and writes it anew with its progress", async () => {
    const putRun = store.putRun.bind(store);
    let refused = 0;
    store.putRun = async (record) => {
      if (record.kind === "relaying" && refused++ === 0) throw new Error("the store is down");
      return putRun(record);
    };
    const result = await start();
    expect(result.kind).toBe("started");
    // Shown all the same, with no record yet.
    expect(relay.isActive("run_1")).toBe(true);
    expect((await store.listRuns()).map((r) => r.kind)).toEqual([]);
    // Its first progress writes the record anew (an update would find nothing to update).
    service.emit({ type: "delta", text: "The first lines.\n" });
    await clock.advance(5000, async () => undefined);
    const runs = await store.listRuns();
    expect(runs.map((r) => [r.kind, r.runId])).toEqual([["relaying", "run_1"]]);
    service.final = { status: "completed", content: "The first lines." };
    service.emit({ type: "status", status: "completed" });
    service.close();
    await relay.idle();
    expect(ended.map((e) => e.state)).toEqual(["completed"]);
  });

  it("shows the run's message and leaves nothing recorded when the service refuses", async () => {
    const refusal = new TaskServiceError({ kind: "bad_request", status: 400, message: "no" });
    const result = await start({ ask: () => Promise.reject(refusal) });
    expect(result.kind).toBe("refused");
    if (result.kind !== "refused") return;
    expect(result.error).toBe(refusal);
    // The message exists (the caller shows why there), nothing is relayed or recorded.
    expect(writer.messages.map((m) => m.ts)).toContain(result.messageTs);
    expect(await store.listRuns()).toEqual([]);
    expect(await store.getThread(result.key)).toBeUndefined();
    expect(told).toEqual([]);
  });

  it("tells the person why, and stops the service's run, when the prompt cannot be posted", async () => {
    writer.failPosts("channel_not_found");
    const result = await start();
    expect(result.kind).toBe("not-shown");
    expect(told).toHaveLength(1);
    expect(told[0]).not.toBe("Not posted: try again.");
    // Nobody can see the run: it is stopped, and nothing is left recorded.
    expect(service.stopped).toEqual(["thr_1"]);
    expect(await store.listRuns()).toEqual([]);
    expect(relay.activeRuns).toBe(0);
  });

  it("tells the start's own advice when the working message cannot be posted in a thread", async () => {
    writer.failPosts("ratelimited");
    const result = await start({ place: { ...place, threadTs: "1700000000.000001" } });
    expect(result).toMatchObject({ kind: "not-shown", thread: { threadTs: "1700000000.000001" } });
    expect(told).toEqual(["Not posted: try again."]);
    expect(service.stopped).toEqual(["thr_1"]);
  });

  it("records the start before the service answers, and its progress as the messages post", async () => {
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const starting = start({
      ask: async () => {
        await answered;
        return { ref: { projectId: "p", threadId: "thr_7" }, runId: serviceRunId("run_7") };
      },
    });
    // The messages post while the service has not answered yet: the reservation says where.
    await clock.advance(0, async () => undefined);
    const [reserved] = await store.listRuns();
    expect(reserved?.kind).toBe("reserved");
    expect(reserved?.key.threadTs).toBe(writer.messages[0]?.ts);
    expect(reserved?.messageTs).toEqual([writer.messages[1]?.ts]);
    expect(reserved?.kind === "reserved" && reserved.opening?.prompt?.text).toBe(
      "Summarise the report",
    );
    answer();
    await starting;
    expect((await store.listRuns()).map((r) => r.runId)).toEqual(["run_7"]);
  });

  it("stops a run whose Stop was pressed while it started, once it is known", async () => {
    const threadTs = "1700000000.000001";
    const key = { ...place, threadTs };
    const now = clock.now();
    await store.putThread({
      ...key,
      ownerUserId: "U1",
      surface: "channel",
      active: { kind: "starting", since: now, stop: { kind: "person", userId: "U2" } },
      lastRunId: undefined,
      queue: [],
      createdAt: now,
      updatedAt: now,
    });
    const result = await start({ place: key });
    expect(result.kind).toBe("started");
    await relay.idle();
    expect(service.stopped).toEqual(["thr_1"]);
    expect(ended.map((e) => e.state)).toEqual(["stopped"]);
    expect(texts().at(-1)).toMatch(/Stopped by <@U2>/);
  });

  it("leaves a thread alone that no longer waits for the reply a follow-up answers", async () => {
    const threadTs = "1700000000.000001";
    const key = { ...place, threadTs };
    const now = clock.now();
    const idle = {
      ...key,
      service: { projectId: "p", threadId: "thr_0" },
      ownerUserId: "U1",
      surface: "channel",
      active: { kind: "starting", since: now, replyTs: "1700000001.000001" },
      lastRunId: undefined,
      queue: [],
      createdAt: now,
      updatedAt: now,
    } as const;
    await store.putThread(idle);
    const plan = { userId: "U1", surface: "channel", since: now, replyTs: "1700000002.000002" };
    const result = await start({ place: key, plan: plan as RunOpening });
    expect(result.kind).toBe("started");
    // Another reply's start owns the thread: it is not told this run runs.
    expect((await store.getThread(key))?.active).toEqual(idle.active);
  });
});
