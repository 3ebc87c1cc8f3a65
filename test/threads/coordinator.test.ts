/**
 * The coordinator with in-process doubles (the end-to-end suites drive it through Slack): the
 * checks every surface's requests get, and a thread's state across replies and runs.
 */
import { pino } from "pino";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { type TellUser, TaskCoordinator } from "../../src/threads/coordinator.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import {
  type SlackThreadKey,
  StoreUnavailableError,
  type ThreadStore,
} from "../../src/store/types.ts";
import { FakeFiles } from "../support/fakes/file-source.ts";
import { FakeRelay } from "../support/fakes/recording-relay.ts";
import { FakeTaskService } from "../support/fakes/task-service.ts";
import { FakeSlackWriter } from "../support/fakes/slack-writer.ts";
import { oneWorkspace } from "../support/fakes/workspaces.ts";

const TEAM = "T1";
const CHANNEL = "C1";
const OWNER = "U1";
const OTHER = "U2";

let store: ThreadStore;
let writer: FakeSlackWriter;
let service: FakeTaskService;
let relay: FakeRelay;
let now: number;
let told: string[];
let coordinator: TaskCoordinator;
const tell: TellUser = async (text) => {
  told.push(text);
};

function coordinatorWith(s: ThreadStore): TaskCoordinator {
  return new TaskCoordinator({
    workspaces: oneWorkspace(writer, service),
    store: s,
    relay,
    files: new FakeFiles(),
    logger: pino({ level: "silent" }),
    now: () => now,
  });
}

beforeEach(() => {
  store = createMemoryStore();
  writer = new FakeSlackWriter();
  service = new FakeTaskService();
  relay = new FakeRelay();
  now = 1_700_000_000_000;
  told = [];
  coordinator = coordinatorWith(store);
});

const task = (prompt: string, trigger?: string) => ({
  teamId: TEAM,
  channelId: CHANNEL,
  userId: OWNER,
  prompt,
  delivery: trigger ? { kind: "trigger" as const, id: trigger } : undefined,
});

let replies = 0;
function reply(key: SlackThreadKey, text: string, eventId = `Ev${++replies}`, user = OTHER) {
  return {
    key,
    userId: user,
    text,
    ts: `1800000000.${String(++replies).padStart(6, "0")}`,
    files: [],
    delivery: { kind: "event" as const, id: eventId },
  };
}

/**
 * The service takes its time: creates wait until the returned function is called (`onAsked`
 * runs as each arrives).
 */
function holdCreates(onAsked: () => void = () => {}): () => void {
  let answer = () => {};
  const answered = new Promise<void>((resolve) => (answer = resolve));
  const create = service.createTask;
  service.createTask = async (input, options) => {
    onAsked();
    await answered;
    return create(input, options);
  };
  return () => answer();
}

/** The run the relay was last handed. */
function lastRun() {
  const run = relay.started.at(-1);
  if (!run) throw new Error("no run was started");
  return run;
}

/** The relay has shown the last run's final state. */
const endLastRun = () =>
  coordinator.onRunEnded({ target: lastRun(), state: "completed", text: "", messageTs: [] });

/** Starts a task and returns its thread, with its first run in progress. */
async function startedTask(prompt = "Build a bakery site"): Promise<SlackThreadKey> {
  await coordinator.startTask(task(prompt), tell);
  const run = relay.started.at(-1);
  if (!run) throw new Error(`the task did not start; told: ${told.join(" / ")}`);
  return run.key;
}

describe("the checks every surface's requests go through", () => {
  it("refuses an empty or too long prompt privately, before anything is posted or created", async () => {
    expect(coordinator.refuseNewTask("   ")).toContain("/task <what you want built>");
    expect(coordinator.refuseNewTask("x".repeat(5001))).toContain("5,001 characters");
    await coordinator.startTask(task("  "), tell);
    await coordinator.startTask(task("x".repeat(5001)), tell);
    expect(told).toEqual([
      expect.stringContaining("/task <what you want built>"),
      expect.stringContaining("at most 5,000"),
    ]);
    expect(writer.messages).toEqual([]);
    expect(service.prompts).toEqual([]);
  });

  it("starts a task once when Slack retries the command with the same trigger id", async () => {
    await Promise.all([
      coordinator.startTask(task("Build a shop", "Tr1"), tell),
      coordinator.startTask(task("Build a shop", "Tr1"), tell),
    ]);
    await coordinator.startTask(task("Build a shop", "Tr2"), tell);
    expect(service.prompts).toEqual(["Build a shop", "Build a shop"]);
    expect(relay.started).toHaveLength(2);
  });

  it("sends a redelivered reply once", async () => {
    const key = await startedTask();
    await endLastRun();
    const first = reply(key, "Add a menu page", "EvSame");
    expect(await coordinator.handleReply(first)).toBe(true);
    expect(await coordinator.handleReply({ ...first })).toBe(true);
    expect(service.prompts).toEqual(["Build a bakery site", "Add a menu page"]);
    // Not even queued behind the run it started, nor marked as waiting.
    expect((await store.getThread(key))?.queue).toEqual([]);
    expect(writer.ephemerals).toEqual([]);
    expect(writer.reactions.size).toBe(0);
  });

  it("leaves a message in a thread that is not a task thread alone, without using up its delivery", async () => {
    const key = { teamId: TEAM, channelId: CHANNEL, threadTs: "1700000000.999999" };
    const message = reply(key, "Just chatting", "EvChat");
    expect(await coordinator.handleReply(message)).toBe(false);
    expect(writer.ephemerals).toEqual([]);
    // Had the thread been a task thread after all, the same delivery would still count.
    await store.putThread({
      ...key,
      service: { projectId: "proj_x", threadId: "thr_x" },
      surface: "channel",
      ownerUserId: OWNER,
      active: { kind: "idle" },
      lastRunId: "run_x",
      queue: [],
      createdAt: now,
      updatedAt: now,
    });
    expect(await coordinator.handleReply(message)).toBe(true);
    expect(service.prompts).toEqual(["Just chatting"]);
  });

  it("tells the person privately when the store does not answer, and starts nothing", async () => {
    const down = new Proxy({} as ThreadStore, {
      get: () => () => Promise.reject(new StoreUnavailableError(new Error("ECONNREFUSED"))),
    });
    const broken = coordinatorWith(down);
    await broken.startTask(task("Build a shop", "Tr9"), tell);
    const key = { teamId: TEAM, channelId: CHANNEL, threadTs: "1700000000.000001" };
    expect(await broken.handleReply(reply(key, "Hello?"))).toBe(true);
    await broken.handleStop({ key, userId: OWNER, runId: "run_1" }, tell);
    expect(told).toEqual([
      expect.stringContaining("temporarily unavailable"),
      expect.stringContaining("temporarily unavailable"),
    ]);
    expect(writer.ephemerals).toEqual([
      expect.objectContaining({
        threadTs: key.threadTs,
        text: expect.stringMatching(
          /^Your message could not be handled: .*temporarily unavailable/,
        ),
      }),
    ]);
    expect(writer.messages).toEqual([]);
    expect(service.prompts).toEqual([]);
  });
});

describe("a burst of new tasks in one channel", () => {
  /** Claiming `trigger`'s delivery (the first store call of a task's checks) waits for `held`. */
  function slowChecks(trigger: string, held: Promise<void>): void {
    const claimOnce = store.claimOnce.bind(store);
    store.claimOnce = async (teamId, name, ttlMs) => {
      if (name.endsWith(trigger)) await held;
      return claimOnce(teamId, name, ttlMs);
    };
  }
  const prompts = () => writer.messages.filter((m) => m.threadTs === undefined).map((m) => m.text);

  it("posts the prompts in the order the tasks came, though an earlier task's checks took longer", async () => {
    let release = () => {};
    slowChecks("Tr1", new Promise((resolve) => (release = resolve)));
    const first = coordinator.startTask(task("First task", "Tr1"), tell);
    const second = coordinator.startTask(task("Second task", "Tr2"), tell);
    // The second task's work starts at once; its prompt waits for the first's.
    await expect.poll(() => service.prompts).toEqual(["Second task"]);
    release();
    await Promise.all([first, second]);
    expect(prompts()).toEqual([
      expect.stringContaining("First task"),
      expect.stringContaining("Second task"),
    ]);
    expect(relay.started).toHaveLength(2);
  });

  it("lets the next prompt go at once when a task is refused, however long telling takes", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout"] });
    try {
      void coordinator.startTask(task(""), () => new Promise(() => {}));
      const second = coordinator.startTask(task("Second task", "Tr2"), tell);
      await vi.advanceTimersByTimeAsync(0);
      await second;
      expect(prompts()).toEqual([expect.stringContaining("Second task")]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("waits 3 s at most for an earlier task whose checks never end", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout"] });
    try {
      slowChecks("Tr1", new Promise(() => {}));
      void coordinator.startTask(task("Stuck task", "Tr1"), tell);
      const second = coordinator.startTask(task("Second task", "Tr2"), tell);
      await vi.advanceTimersByTimeAsync(2999);
      expect(service.prompts).toEqual(["Second task"]);
      expect(prompts()).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      await second;
      expect(prompts()).toEqual([expect.stringContaining("Second task")]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("a task in a direct message", () => {
  it("titles its thread by the prompt's first line, cut between two emoji", async () => {
    // Found while tracing what the app sends Slack: the 199th character could be half an emoji.
    const threadTs = "1700000000.000100";
    const dm = { ...task(`\n Draw: ${"🎨".repeat(150)}\nin blue`), channelId: "D1", threadTs };
    await coordinator.startTask({ ...dm, surface: "dm" }, tell);
    expect(writer.titles.get(threadTs)).toBe(`Draw: ${"🎨".repeat(96)}…`);
  });
});

describe("a task thread's state", () => {
  it("asks the service before posting anything; the thread is starting until the service answers", async () => {
    let postedWhenAsked = -1;
    const answer = holdCreates(() => (postedWhenAsked = writer.messages.length));
    const starting = coordinator.startTask(task("Build a landing page"), tell);
    // The prompt and the working message are posted while the service works.
    await expect.poll(() => writer.messages.length).toBe(2);
    expect(postedWhenAsked).toBe(0);
    const threadTs = writer.messages[0]?.ts ?? "";
    const key = { teamId: TEAM, channelId: CHANNEL, threadTs };
    expect((await store.getThread(key))?.active).toEqual({ kind: "starting", since: now });
    // Recorded meanwhile, so another instance could finish the start: thread and message.
    expect(relay.reserved.size).toBe(1);
    const [notes] = [...relay.progresses.values()];
    expect(notes).toEqual([{ threadTs }, { threadTs, messageTs: writer.messages[1]?.ts }]);
    answer();
    await starting;
    expect((await store.getThread(key))?.active).toEqual({
      kind: "running",
      runId: lastRun().runId,
      messageTs: lastRun().messageTs,
    });
    expect(relay.reserved.size).toBe(0);
  });

  it("records the service's run as soon as it answers, before the messages exist", async () => {
    writer.holdPosts();
    const starting = coordinator.startTask(task("Build a landing page"), tell);
    await expect.poll(() => [...relay.progresses.values()][0]?.length ?? 0).toBe(1);
    const [notes] = [...relay.progresses.values()];
    expect(notes?.[0]).toEqual({
      created: { ref: expect.objectContaining({}), runId: expect.any(String) },
    });
    expect(writer.messages).toHaveLength(0);
    writer.releasePosts();
    await starting;
    expect(lastRun().runId).toBe(notes?.[0]?.created?.runId);
  });

  it("stops the run as soon as it is known when Slack's own Stop was pressed while it started", async () => {
    const answer = holdCreates();
    const starting = coordinator.startTask(task("Build a landing page"), tell);
    await expect.poll(() => writer.messages.length).toBe(2);
    const key = { teamId: TEAM, channelId: CHANNEL, threadTs: writer.messages[0]?.ts ?? "" };
    await coordinator.handleSessionStopped({ key, userId: OWNER }, tell);
    // Nobody else may: a stranger's Stop is refused privately and changes nothing.
    await coordinator.handleSessionStopped({ key, userId: OTHER }, async () => {});
    answer();
    await starting;
    expect(relay.stopped).toEqual([{ runId: lastRun().runId, userId: OWNER }]);
    expect(told).toEqual([]);
  });

  it("stops the run when Slack's own Stop is pressed in a DM while its working message is being posted", async () => {
    // A DM's thread is the person's message: Slack shows its own Stop before the bot's first
    // post has come back.
    const dm = { ...task("Write a long story"), channelId: "D1", threadTs: "1700000000.000100" };
    writer.holdPosts();
    const starting = coordinator.startTask(dm, tell);
    await expect.poll(() => service.created.length).toBe(1);
    const key = { teamId: TEAM, channelId: "D1", threadTs: dm.threadTs };
    await coordinator.handleSessionStopped({ key, userId: OWNER }, tell);
    writer.releasePosts();
    await starting;
    expect(relay.stopped).toEqual([{ runId: lastRun().runId, userId: OWNER }]);
    expect(told).toEqual([]);
  });

  it("stops a run that started while an admin's Stop was being checked", async () => {
    const ADMIN = "U9";
    let confirm = () => {};
    const confirmed = new Promise<void>((resolve) => (confirm = resolve));
    writer.isAdmin = async () => {
      await confirmed;
      return true;
    };
    const answer = holdCreates();
    const starting = coordinator.startTask(task("Build a landing page"), tell);
    await expect.poll(() => writer.messages.length).toBe(2);
    const key = { teamId: TEAM, channelId: CHANNEL, threadTs: writer.messages[0]?.ts ?? "" };
    const stopping = coordinator.handleSessionStopped({ key, userId: ADMIN }, tell);
    answer();
    await starting;
    expect(relay.stopped).toEqual([]);
    confirm();
    await stopping;
    expect(relay.stopped).toEqual([{ runId: lastRun().runId, userId: ADMIN }]);
    expect(told).toEqual([]);
  });

  it("on shutdown, waits for a task being created to be shown and handed to the relay", async () => {
    const answer = holdCreates();
    const starting = coordinator.startTask(task("Build a landing page"), tell);
    let settled = false;
    const settling = coordinator.settle(60_000).then(() => (settled = true));
    await expect.poll(() => writer.messages.length).toBe(2);
    expect(settled).toBe(false);
    answer();
    await settling;
    expect(relay.started).toHaveLength(1);
    await starting;
  });

  it("on shutdown, stops waiting for a create the service never answers after the time given", async () => {
    service.createTask = () => new Promise(() => {});
    void coordinator.startTask(task("Build a landing page"), tell);
    await expect.poll(() => writer.messages.length).toBe(2);
    await coordinator.settle(20);
    // The start stays recorded: another instance ends its message from the record.
    expect(relay.reserved.size).toBe(1);
    expect(relay.started).toHaveLength(0);
  });

  it("stops the run and says why privately when the task cannot be posted in the channel", async () => {
    writer.failPosts("channel_not_found");
    await coordinator.startTask(task("Build a landing page"), tell);
    expect(told).toEqual([expect.stringContaining("channel")]);
    expect(service.stopped).toHaveLength(1);
    expect(relay.started).toHaveLength(0);
    expect(relay.reserved.size).toBe(0);
  });

  it("refuses a reply privately once 20 are waiting in the thread, and queues nothing more", async () => {
    const key = await startedTask();
    for (let i = 1; i <= 20; i++) await coordinator.handleReply(reply(key, `Follow-up ${i}`));
    writer.ephemerals.length = 0;
    await coordinator.handleReply(reply(key, "One too many"));
    expect((await store.getThread(key))?.queue).toHaveLength(20);
    expect(writer.ephemerals).toEqual([
      expect.objectContaining({
        userId: OTHER,
        text: expect.stringContaining("20 messages are already waiting"),
      }),
    ]);
  });

  it("queues replies during a run and sends them in order as runs end", async () => {
    const key = await startedTask();
    await coordinator.handleReply(reply(key, "First follow-up"));
    await coordinator.handleReply(reply(key, "Second follow-up", undefined, OWNER));
    const queued = await store.getThread(key);
    expect(queued?.queue.map((q) => q.text)).toEqual(["First follow-up", "Second follow-up"]);
    expect([...writer.reactions.values()].flat()).toEqual([
      "hourglass_flowing_sand",
      "hourglass_flowing_sand",
    ]);
    expect(writer.ephemerals.map((e) => e.userId)).toEqual([OTHER, OWNER]);

    for (const expected of [["First follow-up"], ["First follow-up", "Second follow-up"]]) {
      await endLastRun();
      expect(service.prompts.slice(1)).toEqual(expected);
    }
    const after = await store.getThread(key);
    expect(after).toMatchObject({
      queue: [],
      active: { kind: "running", runId: relay.started.at(-1)?.runId },
      lastRunId: relay.started.at(-2)?.runId,
    });
    expect([...writer.reactions.values()].flat()).toEqual([]);
  });

  it("frees the thread and shows why when the service refuses a follow-up", async () => {
    const key = await startedTask();
    await endLastRun();
    service.continueConversation = async () => {
      throw new Error("the service is down");
    };
    await coordinator.handleReply(reply(key, "Continue"));
    expect((await store.getThread(key))?.active).toEqual({ kind: "idle" });
    expect(writer.thread(key.threadTs).at(-1)).toMatch(/^Something went wrong/);
  });
});
