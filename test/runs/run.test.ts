/**
 * One run's life as people see it in the thread, with in-process doubles: the answer grows
 * by edits of one message (only the latest text is ever sent), a long answer spreads over
 * several messages, and the run always ends visibly: completed with its files, failed with
 * the reason, or stopped by whom.
 */
import { pino } from "pino";
import { beforeEach, describe, expect, it } from "vitest";
import { Relay, type RunOutcome } from "../../src/runs/relay.ts";
import { TaskServiceError } from "../../src/service/errors.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import { personStop, type ThreadStore } from "../../src/store/types.ts";
import { shownText } from "../support/run-records.ts";
import { until } from "../support/until.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { STOP_ANSWER_MS } from "../../src/runs/fate.ts";
import { HANDOVER_FLUSH_MS } from "../../src/runs/run.ts";
import { FakeSlackWriter } from "../support/fakes/slack-writer.ts";
import { FakeTaskService } from "../support/fakes/task-service.ts";
import { oneWorkspace } from "../support/fakes/workspaces.ts";
import { runningThreads } from "../../src/threads/running.ts";

const key = { teamId: "T1", channelId: "C1", threadTs: "1700000000.000001" };
let writer: FakeSlackWriter;
let service: FakeTaskService;
let store: ThreadStore;
let relay: Relay;
let ended: RunOutcome[];
let working: string;

/** A relay on the in-process doubles, as one instance of the app builds it. */
function relayOf(
  parts: { writer: FakeSlackWriter; service: FakeTaskService; store: ThreadStore; id: string },
  extra: Partial<ConstructorParameters<typeof Relay>[0]> = {},
): Relay {
  return new Relay({
    workspaces: oneWorkspace(parts.writer, parts.service),
    store: parts.store,
    threads: runningThreads({ store: parts.store, now: Date.now }),
    instanceId: parts.id,
    logger: pino({ level: "silent" }),
    follow: { reconnectDelayMs: 1, pollTimeoutS: 1 },
    stopGraceMs: 50,
    ...extra,
  });
}

/**
 * Holds the service's answer to the next Stop until the test gives it: `take` (stopped),
 * `refuse` (a 400), `restore` (answers at once again).
 */
function holdStops(svc: FakeTaskService) {
  const stopAgent = svc.stopAgent.bind(svc);
  let decide!: (taken: boolean) => void;
  const decided = new Promise<boolean>((resolve) => (decide = resolve));
  svc.stopAgent = async (ref) => {
    if (await decided) return stopAgent(ref);
    throw new TaskServiceError({ kind: "bad_request", status: 400, message: "stop unavailable" });
  };
  return {
    take: () => decide(true),
    refuse: () => decide(false),
    restore: () => void (svc.stopAgent = stopAgent),
  };
}

beforeEach(async () => {
  writer = new FakeSlackWriter({ edits: "scheduled" });
  service = new FakeTaskService();
  store = createMemoryStore();
  ended = [];
  relay = relayOf({ writer, service, store, id: "i1" });
  relay.onEnded(async (o) => {
    ended.push(o);
  });
  working = await writer.post("C1", { text: "Working…", blocks: [] }, key.threadTs);
  await relay.start({
    key,
    ref: { projectId: "p1", threadId: "t1" },
    runId: "run_1",
    messageTs: working,
    startedAt: Date.now(),
    owner: "U1",
  });
});

const tick = () => new Promise((r) => setImmediate(r));
const shown = () => JSON.stringify(writer.messages.find((m) => m.ts === working)?.payload);

describe("a relayed run", () => {
  it("streams the answer by editing one message, sending only the latest text when the budget allows", async () => {
    service.emit({ type: "delta", text: "Hello" }, { type: "delta", text: ", world" });
    await tick();
    service.emit({ type: "delta", text: "! More to come." });
    await tick();
    await writer.flush();
    expect(shown()).toContain("Hello, world! More to come.");
    // Three deltas, one edit: the waiting ones were replaced, never sent.
    expect(writer.calls.filter((c) => c === "chat.update")).toHaveLength(1);
    // The text shown is recorded, so another instance would resume from it.
    expect(shownText(await store.getRun("run_1"))).toBe("Hello, world! More to come.");

    service.final = { status: "completed", content: "Hello, world! All done." };
    service.emit({ type: "status", status: "completed" });
    service.close();
    await relay.idle();
    expect(shown()).toContain("Hello, world! All done.");
    expect(shown()).toMatch(/Completed/);
    expect(ended.map((e) => e.state)).toEqual(["completed"]);
    expect(await store.getRun("run_1")).toBeUndefined();
  });

  it("spreads a long answer over several messages in the thread", async () => {
    const paragraph = `${"word ".repeat(199)}end.\n\n`;
    const content = paragraph.repeat(30); // about 30,000 characters
    service.final = { status: "completed", content };
    service.emit({ type: "delta", text: content }, { type: "status", status: "completed" });
    service.close();
    await relay.idle();
    const visible = writer.visible(key.threadTs);
    expect(visible.length).toBeGreaterThanOrEqual(3);
    expect(visible.at(-1)).toMatch(/Completed/);
  });

  it("never shows more than 60,000 characters while running, even when one delta carries a megabyte", async () => {
    service.emit({ type: "delta", text: "a".repeat(59_990) });
    await tick();
    service.emit({ type: "delta", text: "b".repeat(1024 * 1024) });
    await tick();
    await writer.flush();
    const recorded = shownText(await store.getRun("run_1")) ?? "";
    expect(recorded).toBe(`${"a".repeat(59_990)}${"b".repeat(10)}`);
    expect(writer.visible(key.threadTs).join("").length).toBeLessThan(61_000);
  });

  it("attaches the whole answer as answer.md when the messages cannot show all of it", async () => {
    const content = `${"word ".repeat(14_000)}the last words.`; // 70,015 characters
    service.final = { status: "completed", content };
    service.emit({ type: "delta", text: content }, { type: "status", status: "completed" });
    service.close();
    await relay.idle();
    expect(writer.uploads.map((u) => u.filename)).toEqual(["answer.md"]);
    expect(writer.uploads[0]?.bytes.toString("utf8")).toBe(content);
    const visible = writer.visible(key.threadTs).join("\n");
    expect(visible).toContain("all of it is in `answer.md`, attached below");
    expect(visible).not.toContain("the last words.");
  });

  it("attaches all that streamed of a stopped run past 60,000 characters", async () => {
    const streamed = "x".repeat(50_000) + "y".repeat(20_000);
    service.emit({ type: "delta", text: streamed.slice(0, 50_000) });
    service.emit({ type: "delta", text: streamed.slice(50_000) });
    await tick();
    await relay.stop({ runId: "run_1", ref: { projectId: "p1", threadId: "t1" }, key }, "U2");
    expect(writer.visible(key.threadTs).at(-1)).toMatch(/Stopped by <@U2>/);
    expect(writer.uploads.map((u) => u.filename)).toEqual(["answer.md"]);
    expect(writer.uploads[0]?.bytes.toString("utf8")).toBe(streamed);
  });

  it("says who stopped a run, and asks the service to stop it", async () => {
    service.emit({ type: "delta", text: "Partial answer" });
    await tick();
    await relay.stop({ runId: "run_1", ref: { projectId: "p1", threadId: "t1" }, key }, "U2");
    expect(service.stopped).toEqual(["t1"]);
    expect(shown()).toMatch(/Stopped by <@U2>/);
    expect(ended.map((e) => e.state)).toEqual(["stopped"]);
  });

  it("keeps the text that came while a refused Stop was asked, and shows it at once", async () => {
    const ref = { projectId: "p1", threadId: "t1" };
    service.emit({ type: "delta", text: "Before the stop. " });
    await tick();
    // The service takes a while to refuse; the agent writes meanwhile, then goes quiet.
    const stops = holdStops(service);
    const first = relay.stop({ runId: "run_1", ref, key }, "U2").catch(() => "refused");
    await tick();
    service.emit({ type: "delta", text: "While it was asked. " });
    await tick();
    stops.refuse();
    expect(await first).toBe("refused");
    await writer.flush();
    expect(shown()).toContain("Before the stop. While it was asked.");
    // Stop pressed again before any more text: the answer keeps what came before it.
    stops.restore();
    await relay.stop({ runId: "run_1", ref, key }, "U2");
    expect(shown()).toContain("Before the stop. While it was asked.");
    expect(shown()).toMatch(/Stopped by <@U2>/);
  });

  it("hands the run over, not stopped, when the app shuts down while the service refuses its Stop", async () => {
    const ref = { projectId: "p1", threadId: "t1" };
    service.emit({ type: "delta", text: "Partial answer. " });
    await tick();
    const stops = holdStops(service);
    const stopping = relay.stop({ runId: "run_1", ref, key }, "U2").catch(() => "refused");
    await tick();
    const shutdown = relay.handover();
    await tick();
    stops.refuse();
    expect(await stopping).toBe("refused");
    // The hand-over shows the latest text in an edit, which waits for Slack's budget.
    await until("the run handed over", async () => {
      await writer.flush();
      return (await Promise.race([shutdown.then(() => true), tick().then(() => false)])) === true;
    });
    // The service's run goes on: its record stays for the instance that continues it.
    expect(ended).toEqual([]);
    expect(shown()).not.toMatch(/Stopped/);
    expect(shownText(await store.getRun("run_1"))).toBe("Partial answer. ");
  });

  it("ends the run stopped when the app shuts down while the service takes its Stop", async () => {
    const ref = { projectId: "p1", threadId: "t1" };
    service.emit({ type: "delta", text: "Partial answer. " });
    await tick();
    const stops = holdStops(service);
    const stopping = relay.stop({ runId: "run_1", ref, key }, "U2");
    await tick();
    const shutdown = relay.handover();
    await tick();
    stops.take();
    await stopping;
    await shutdown;
    expect(ended.map((e) => e.state)).toEqual(["stopped"]);
    expect(shown()).toMatch(/Stopped by <@U2>/);
  });

  it("hands the run over on shutdown when the service does not answer its Stop in time, saying who pressed it", async () => {
    const clock = new FakeClock();
    const slow = new FakeTaskService();
    const records = createMemoryStore();
    const shuttingDown = relayOf({ writer, service: slow, store: records, id: "i3" }, { clock });
    const ref = { projectId: "p1", threadId: "t1" };
    const messageTs = await writer.post("C1", { text: "Working…", blocks: [] }, key.threadTs);
    await shuttingDown.start({
      key,
      ref,
      runId: "run_3",
      messageTs,
      startedAt: clock.now(),
      owner: "U1",
    });
    slow.emit({ type: "delta", text: "Partial answer. " });
    await tick();
    await writer.flush();
    slow.stopAgent = () => new Promise(() => undefined); // never answers
    void shuttingDown.stop({ runId: "run_3", ref, key }, "U2");
    let over = false;
    const shutdown = shuttingDown.handover().then(() => (over = true));
    await clock.advance(STOP_ANSWER_MS - 1, () => writer.flush());
    expect(over).toBe(false);
    await clock.advance(HANDOVER_FLUSH_MS + 1, () => writer.flush());
    await shutdown;
    // Not shown as stopped here: the next owner learns from the service, and knows who asked.
    expect(JSON.stringify(writer.messages.find((m) => m.ts === messageTs))).not.toMatch(/Stopped/);
    expect(shownText(await records.getRun("run_3"))).toBe("Partial answer. ");
    expect(await records.stopRequest("run_3")).toEqual(personStop("U2"));
  });

  it("streams nothing of the text held during a Stop when the workspace uninstalls meanwhile", async () => {
    // A native stream sends whatever text it is given: nothing held may reach it.
    const streamed = new FakeSlackWriter({ edits: "scheduled" });
    const agent = new FakeTaskService();
    const parts = { writer: streamed, service: agent, store: createMemoryStore(), id: "i2" };
    const native = relayOf(parts, { streaming: { mode: "native" } });
    const ref = { projectId: "p1", threadId: "t1" };
    const messageTs = await streamed.post("C1", { text: "Working…", blocks: [] }, key.threadTs);
    const run = { key, ref, runId: "run_2", messageTs, startedAt: Date.now(), owner: "U1" };
    await native.start(run);
    agent.emit({ type: "delta", text: "Before the stop.\n" });
    await until("the first line streamed", async () => {
      await streamed.flush();
      return streamed.calls.includes("chat.startStream");
    });
    const stops = holdStops(agent);
    const stopping = native.stop({ runId: "run_2", ref, key }, "U2");
    await tick();
    agent.emit({ type: "delta", text: "Held while stopping.\n" });
    await tick();
    const from = streamed.calls.length;
    const uninstall = native.stopTeam("T1");
    stops.take();
    await stopping.catch(() => undefined);
    await uninstall;
    await streamed.flush();
    expect(streamed.calls.slice(from)).toEqual([]);
    expect(JSON.stringify(streamed.messages)).not.toContain("Held while stopping");
  });

  it("tells of a Stop pressed on another instance that the service refuses, and the run goes on", async () => {
    const ref = { projectId: "p1", threadId: "t1" };
    service.emit({ type: "delta", text: "Partial answer. " });
    await tick();
    // Another instance, on the same store, asks the same service, which refuses.
    const refusing = new FakeTaskService();
    refusing.stopAgent = async () => {
      throw new TaskServiceError({ kind: "bad_request", status: 400, message: "stop unavailable" });
    };
    const elsewhere = relayOf({
      writer: new FakeSlackWriter(),
      service: refusing,
      store,
      id: "i2",
    });
    await expect(elsewhere.stop({ runId: "run_1", ref, key }, "U2")).rejects.toThrow(
      /stop unavailable/,
    );
    // Nobody takes the run for stopped: it ends as the service says.
    expect(await store.stopRequest("run_1")).toBeUndefined();
    service.final = { status: "completed", content: "Partial answer. Finished." };
    service.emit({ type: "status", status: "completed" });
    service.close();
    await relay.idle();
    expect(ended.map((e) => e.state)).toEqual(["completed"]);
  });

  it("does not stop a run when the Stop names another thread or workspace (a forged button)", async () => {
    service.emit({ type: "delta", text: "Partial answer" });
    await tick();
    const ref = { projectId: "p1", threadId: "t1" };
    for (const other of [
      { ...key, teamId: "T0OTHER" },
      { ...key, channelId: "C0ELSEWHERE" },
      { ...key, threadTs: "1.000009" },
    ]) {
      expect(await relay.stop({ runId: "run_1", ref, key: other }, "U2")).toBe(false);
    }
    expect(service.stopped).toEqual([]);
    expect(await store.stopRequest("run_1")).toBeUndefined();
    service.final = { status: "completed", content: "Partial answer, finished." };
    service.emit({ type: "status", status: "completed" });
    service.close();
    await relay.idle();
    expect(ended.map((e) => e.state)).toEqual(["completed"]);
  });

  it("says why when the service fails the run", async () => {
    service.emit(new TaskServiceError({ kind: "credits", status: 402, message: "out of credits" }));
    await relay.idle();
    expect(shown()).toContain("out of credits");
    expect(ended.map((e) => e.state)).toEqual(["error"]);
  });

  it("uploads the generated files into the thread once, and lists them under the answer", async () => {
    service.final = {
      status: "completed",
      content: "Here is your page.",
      files: [
        { file_id: "f1", file_name: "index.html", content: "<h1>Hi</h1>", encoding: "utf-8" },
        { file_id: "f1", file_name: "index.html", content: "<h1>Hi</h1>", encoding: "utf-8" },
      ],
    };
    service.emit({ type: "status", status: "completed" });
    service.close();
    await relay.idle();
    expect(writer.uploads.map((u) => [u.filename, u.bytes.toString()])).toEqual([
      ["index.html", "<h1>Hi</h1>"],
    ]);
    expect(shown()).toContain("index.html");
  });
});
