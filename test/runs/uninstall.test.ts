/**
 * A workspace uninstalls the app while its runs are relayed: every one of them is stopped at
 * the service and ends without a word to Slack (the token is gone), on this instance and on
 * the others, nobody resumes them, and another workspace's run goes on and finishes. The same
 * for the runs of a deleted channel, or of a thread whose task message was deleted, and only
 * for them.
 */
import { pino } from "pino";
import { beforeEach, describe, expect, it } from "vitest";
import { Relay, type RunOutcome } from "../../src/runs/relay.ts";
import type { RunTarget } from "../../src/runs/record.ts";
import { Resumer } from "../../src/runs/resumer.ts";
import { LeaseKeeper } from "../../src/runs/lease-keeper.ts";
import type { TaskService } from "../../src/runs/ports.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import type { ThreadStore } from "../../src/store/types.ts";
import { shownText as recordedText } from "../support/run-records.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { FakeSlackWriter } from "../support/fakes/slack-writer.ts";
import { FakeTaskService } from "../support/fakes/task-service.ts";
import { oneWorkspace } from "../support/fakes/workspaces.ts";
import { runningThreads } from "../../src/threads/running.ts";

const silent = pino({ level: "silent" });
const LEASE_TTL_MS = 3000;

/** The service: each thread's run is its own scripted stream. */
class Threads implements TaskService {
  readonly runs = new Map<string, FakeTaskService>();
  readonly stopped: string[] = [];
  of(threadId: string): FakeTaskService {
    let run = this.runs.get(threadId);
    if (!run) this.runs.set(threadId, (run = new FakeTaskService()));
    return run;
  }
  streamTaskResult: TaskService["streamTaskResult"] = (ref, options) => {
    const run = this.of(ref.threadId);
    // As the real client: an aborted follow ends the stream with the abort's reason.
    const signal = options?.signal;
    signal?.addEventListener("abort", () => run.emit(new Error(String(signal.reason))), {
      once: true,
    });
    return run.streamTaskResult();
  };
  /** Thread `thr_x` runs `run_x`. */
  getTaskResult: TaskService["getTaskResult"] = async (ref, ...rest) => ({
    ...(await this.of(ref.threadId).getTaskResult(ref, ...rest)),
    agent_run_id: ref.threadId.replace("thr_", "run_"),
  });
  stopAgent: TaskService["stopAgent"] = (ref, ...rest) => {
    this.stopped.push(ref.threadId);
    return this.of(ref.threadId).stopAgent(ref, ...rest);
  };
  createTask: TaskService["createTask"] = () => Promise.reject(new Error("not used"));
  continueConversation: TaskService["continueConversation"] = () =>
    Promise.reject(new Error("not used"));
  getHistory: TaskService["getHistory"] = () => Promise.reject(new Error("not used"));
  listFiles: TaskService["listFiles"] = () => Promise.reject(new Error("not used"));
  readResultFile: TaskService["readResultFile"] = (ref, ...rest) =>
    this.of(ref.threadId).readResultFile(ref, ...rest);
}

/** One instance: its relay, what it showed in Slack, which runs ended visibly there. */
interface Instance {
  readonly relay: Relay;
  readonly writer: FakeSlackWriter;
  readonly ended: RunOutcome[];
}

let store: ThreadStore;
let service: Threads;
let clock: FakeClock;

function instance(id: string): Instance {
  const writer = new FakeSlackWriter({ edits: "scheduled" });
  const ended: RunOutcome[] = [];
  const relay = new Relay({
    workspaces: oneWorkspace(writer, service),
    store,
    threads: runningThreads({ store, now: Date.now }),
    instanceId: id,
    logger: silent,
    clock,
    leaseTtlMs: LEASE_TTL_MS,
    follow: { reconnectDelayMs: 1, pollTimeoutS: 1 },
    stopGraceMs: 50,
  });
  relay.onEnded(async (o) => {
    ended.push(o);
  });
  return { relay, writer, ended };
}

beforeEach(() => {
  store = createMemoryStore();
  service = new Threads();
  clock = new FakeClock(Date.now());
});

/** Starts a run of `teamId` on `at`, its message posted there (in `channelId`, C1 by default). */
async function startRun(
  at: Instance,
  teamId: string,
  name: string,
  channelId = "C1",
): Promise<RunTarget> {
  const key = { teamId, channelId, threadTs: `${name}.000001` };
  const messageTs = await at.writer.post(channelId, { text: "Working…", blocks: [] }, key.threadTs);
  const target: RunTarget = {
    key,
    ref: { projectId: "p1", threadId: `thr_${name}` },
    runId: `run_${name}`,
    messageTs,
    startedAt: clock.now(),
    owner: "U1",
  };
  await at.relay.start(target);
  return target;
}

const tick = () => new Promise((r) => setImmediate(r));
async function until(what: string, ok: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (await ok()) return;
    await tick();
  }
  throw new Error(`never happened: ${what}`);
}
const shownText = (at: Instance, ts: string) =>
  JSON.stringify(at.writer.messages.find((m) => m.ts === ts)?.payload);

describe("a workspace that uninstalls the app", () => {
  it("has its runs here stopped at the service, ended without a word, forgotten; another workspace's run finishes", async () => {
    const i1 = instance("i1");
    const a = await startRun(i1, "TA", "a");
    const b = await startRun(i1, "TB", "b");
    service.of("thr_a").emit({ type: "delta", text: "Alpha so far" });
    service.of("thr_b").emit({ type: "delta", text: "Bravo so far" });
    await until("both shown", async () => {
      await i1.writer.flush();
      return (
        shownText(i1, a.messageTs).includes("Alpha") && shownText(i1, b.messageTs).includes("Bravo")
      );
    });
    const callsBefore = i1.writer.calls.length;
    const editsOfA = i1.writer.messages.find((m) => m.ts === a.messageTs)?.edits;

    await i1.relay.stopTeam("TA");
    await store.forgetTeam("TA");

    expect(service.stopped).toEqual(["thr_a"]);
    expect(i1.relay.isActive(a.runId)).toBe(false);
    expect(i1.relay.isActive(b.runId)).toBe(true);
    expect(await store.getRun(a.runId)).toBeUndefined();

    // B goes on to its end, shown as usual.
    service.of("thr_b").final = { status: "completed", content: "Bravo done" };
    service.of("thr_b").emit({ type: "delta", text: " and done" });
    service.of("thr_b").close();
    await i1.relay.idle();
    await i1.writer.flush();
    expect(i1.ended.map((o) => [o.target.runId, o.state])).toEqual([[b.runId, "completed"]]);
    expect(shownText(i1, b.messageTs)).toContain("Bravo done");
    // A: not one more Slack call for it (no "Stopped", no edit), no end handed to the coordinator.
    expect(i1.writer.messages.find((m) => m.ts === a.messageTs)?.edits).toBe(editsOfA);
    expect(i1.writer.calls.slice(callsBefore).length).toBeGreaterThan(0); // B's
    expect(i1.ended.some((o) => o.target.key.teamId === "TA")).toBe(false);
    // Nobody resumes it: another instance's scan finds nothing of A.
    const i2 = instance("i2");
    const resumer = new Resumer({
      store,
      relay: i2.relay,
      logger: silent,
      leaseTtlMs: LEASE_TTL_MS,
      intervalMs: 60_000,
    });
    await resumer.scan();
    expect(i2.relay.activeRuns).toBe(0);
  });

  it("stops its runs relayed by another instance: stopped at the service with a request that says why, ended there without a word", async () => {
    const i1 = instance("i1");
    const i2 = instance("i2");
    const a = await startRun(i2, "TA", "a");
    service.of("thr_a").emit({ type: "delta", text: "Alpha so far" });
    await until("shown", async () => {
      await i2.writer.flush();
      return shownText(i2, a.messageTs).includes("Alpha");
    });
    const edits = i2.writer.messages.find((m) => m.ts === a.messageTs)?.edits;

    await i1.relay.stopTeam("TA");
    await store.forgetTeam("TA");
    await i2.relay.idle();
    await i2.writer.flush();

    expect(service.stopped).toEqual(["thr_a"]);
    expect(i2.writer.messages.find((m) => m.ts === a.messageTs)?.edits).toBe(edits);
    expect(shownText(i2, a.messageTs)).not.toContain("Stopped");
    expect(i2.ended).toEqual([]);
    expect(await store.getRun(a.runId)).toBeUndefined();
    expect(await store.stopRequest(a.runId)).toBeUndefined();
  });

  it("stops a run relayed elsewhere whose records were forgotten: its lease renewal finds the record gone, stops it at the service, says nothing", async () => {
    const i2 = instance("i2");
    const a = await startRun(i2, "TA", "a");
    const b = await startRun(i2, "TB", "b");
    service.of("thr_a").emit({ type: "delta", text: "Alpha so far" });
    await until("shown", async () => {
      await i2.writer.flush();
      return shownText(i2, a.messageTs).includes("Alpha");
    });
    const edits = i2.writer.messages.find((m) => m.ts === a.messageTs)?.edits;

    // The instance that took the uninstall forgot the workspace without reaching the service.
    await store.forgetTeam("TA");
    expect(service.stopped).toEqual([]);
    await clock.advanceTo(clock.now() + LeaseKeeper.renewEveryMs(LEASE_TTL_MS), async () => {
      await tick();
    });
    await until("A stopped", () => !i2.relay.isActive(a.runId));

    expect(service.stopped).toEqual(["thr_a"]);
    await i2.writer.flush();
    expect(i2.writer.messages.find((m) => m.ts === a.messageTs)?.edits).toBe(edits);
    expect(i2.ended).toEqual([]);
    // Nothing of A came back (its lease was not taken again), B is still relayed.
    expect(await store.getRun(a.runId)).toBeUndefined();
    expect(await store.acquireLease(`run:${a.runId}`, "i3", LEASE_TTL_MS)).toBe(true);
    expect(i2.relay.isActive(b.runId)).toBe(true);
    expect(await store.getRun(b.runId)).toBeDefined();
    service.of("thr_b").final = { status: "completed", content: "Bravo" };
    service.of("thr_b").close();
    await i2.relay.idle();
    expect(i2.ended.map((o) => o.target.runId)).toEqual([b.runId]);
  });

  it("stops a run relayed elsewhere whose record is gone when it next records progress", async () => {
    const i2 = instance("i2");
    const a = await startRun(i2, "TA", "a");
    await store.forgetTeam("TA");
    service.of("thr_a").emit({ type: "delta", text: "Alpha" });
    await until("A stopped", async () => {
      await i2.writer.flush();
      return !i2.relay.isActive(a.runId);
    });
    expect(service.stopped).toEqual(["thr_a"]);
    expect(await store.getRun(a.runId)).toBeUndefined();
    expect(i2.ended).toEqual([]);
  });

  it("still records a run whose first write failed (the store was down): a missing record then is no uninstall", async () => {
    const i1 = instance("i1");
    const put = store.putRun.bind(store);
    let failing = true;
    store.putRun = (record) => (failing ? Promise.reject(new Error("store down")) : put(record));
    const a = await startRun(i1, "TA", "a");
    failing = false;
    service.of("thr_a").final = { status: "completed", content: "Alpha" };
    service.of("thr_a").emit({ type: "delta", text: "Alpha" });
    await until("recorded", async () => {
      await i1.writer.flush();
      return recordedText(await store.getRun(a.runId)) === "Alpha";
    });
    expect(i1.relay.isActive(a.runId)).toBe(true);
    expect(service.stopped).toEqual([]);
    service.of("thr_a").close();
    await i1.relay.idle();
    expect(i1.ended.map((o) => o.state)).toEqual(["completed"]);
  });
});

describe("a deleted channel, or a deleted task message", () => {
  it("stops the runs of that thread, then of that channel, here and elsewhere, without a word; the rest go on", async () => {
    const i1 = instance("i1");
    const i2 = instance("i2");
    const a = await startRun(i1, "TA", "a");
    const b = await startRun(i2, "TA", "b");
    const c = await startRun(i1, "TA", "c", "C2");
    for (const name of ["a", "b", "c"]) {
      service.of(`thr_${name}`).emit({ type: "delta", text: `Run ${name} so far` });
    }
    await until("all shown", async () => {
      await i1.writer.flush();
      await i2.writer.flush();
      return [
        shownText(i1, a.messageTs),
        shownText(i2, b.messageTs),
        shownText(i1, c.messageTs),
      ].every((t) => t.includes("so far"));
    });
    const edits = (at: Instance, t: RunTarget) =>
      at.writer.messages.find((m) => m.ts === t.messageTs)?.edits;
    const before = [edits(i1, a), edits(i2, b)];

    // A's task message was deleted: A alone stops.
    await i1.relay.stopQuietly(a.key, "its task message was deleted in Slack");
    await store.forgetThread(a.key);
    expect(service.stopped).toEqual(["thr_a"]);
    expect(i1.relay.isActive(a.runId)).toBe(false);
    expect(await store.getRun(b.runId)).toBeDefined();

    // C1 was deleted: B, relayed by the other instance, stops there too; C (in C2) goes on.
    await i1.relay.stopQuietly({ teamId: "TA", channelId: "C1" }, "its channel was deleted");
    await store.forgetChannel("TA", "C1");
    await i2.relay.idle();
    expect(service.stopped).toEqual(["thr_a", "thr_b"]);
    expect(i1.relay.isActive(c.runId)).toBe(true);
    await i1.writer.flush();
    await i2.writer.flush();
    expect([edits(i1, a), edits(i2, b)]).toEqual(before);
    expect(i1.ended).toEqual([]);
    expect(i2.ended).toEqual([]);

    service.of("thr_c").final = { status: "completed", content: "Run c done" };
    service.of("thr_c").close();
    await i1.relay.idle();
    await i1.writer.flush();
    expect(i1.ended.map((o) => [o.target.runId, o.state])).toEqual([[c.runId, "completed"]]);
    expect(shownText(i1, c.messageTs)).toContain("Run c done");
  });
});
