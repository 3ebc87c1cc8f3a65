/**
 * Tasks from people's messages, whatever carried them: a mention in a channel, a direct
 * message (Slack's agent view threads are DM threads), a reply in a task's thread.
 */
import { pino } from "pino";
import { beforeEach, describe, expect, it } from "vitest";
import { TaskCoordinator } from "../../src/threads/coordinator.ts";
import type { IncomingMessage } from "../../src/threads/requests.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import type { ThreadStore } from "../../src/store/types.ts";
import { FakeFiles } from "../support/fakes/file-source.ts";
import { FakeRelay } from "../support/fakes/recording-relay.ts";
import { FakeTaskService } from "../support/fakes/task-service.ts";
import { FakeSlackWriter } from "../support/fakes/slack-writer.ts";
import { oneWorkspace } from "../support/fakes/workspaces.ts";

const TEAM = "T1";
let store: ThreadStore;
let writer: FakeSlackWriter;
let service: FakeTaskService;
let relay: FakeRelay;
let coordinator: TaskCoordinator;
let seq = 0;

beforeEach(() => {
  store = createMemoryStore();
  writer = new FakeSlackWriter();
  service = new FakeTaskService();
  relay = new FakeRelay();
  coordinator = new TaskCoordinator({
    workspaces: oneWorkspace(writer, service),
    store,
    relay,
    files: new FakeFiles(),
    logger: pino({ level: "silent" }),
    now: () => 1_700_000_000_000,
  });
});

function message(text: string, extra: Partial<IncomingMessage> = {}): IncomingMessage {
  return {
    teamId: TEAM,
    channelId: "C1",
    userId: "U1",
    text,
    ts: `1800000000.${String(++seq).padStart(6, "0")}`,
    files: [],
    startsTask: true,
    surface: "channel",
    ...extra,
  };
}

describe("a mention of the bot in a channel", () => {
  it("starts a task answered in a thread under the mention, without posting the prompt again", async () => {
    const mention = message("Build a landing page for a bakery");
    await coordinator.handleMessage(mention);
    expect(service.prompts).toEqual(["Build a landing page for a bakery"]);
    expect(relay.started[0]?.key).toEqual({ teamId: TEAM, channelId: "C1", threadTs: mention.ts });
    // Only the bot's working message, in the mention's thread.
    expect(writer.messages.map((m) => m.threadTs)).toEqual([mention.ts]);
  });

  it("counts once when Slack delivers it as app_mention and as message", async () => {
    const mention = message("Build a shop");
    await Promise.all([
      coordinator.handleMessage(mention),
      coordinator.handleMessage({ ...mention, startsTask: false }),
      coordinator.handleMessage(mention),
    ]);
    expect(service.prompts).toEqual(["Build a shop"]);
  });

  it("continues the task when it is a reply in the task's thread", async () => {
    const first = message("Build a shop");
    await coordinator.handleMessage(first);
    const target = relay.started[0];
    if (!target) throw new Error("no run started");
    await coordinator.onRunEnded({
      target,
      state: "completed",
      text: "",
      messageTs: [],
    });
    await coordinator.handleMessage(message("Add a cart", { threadTs: first.ts }));
    expect(service.prompts).toEqual(["Build a shop", "Add a cart"]);
    expect(relay.started[1]?.key.threadTs).toBe(first.ts);
  });

  it("starts a new task in a thread that has none", async () => {
    const root = "1700000000.111111";
    await coordinator.handleMessage(message("Summarise this thread", { threadTs: root }));
    expect(relay.started[0]?.key.threadTs).toBe(root);
  });

  it("answers a mention with nothing but the bot's name with the usage, privately", async () => {
    await coordinator.handleMessage(message(""));
    expect(service.prompts).toEqual([]);
    expect(writer.ephemerals[0]?.text).toContain("Usage");
  });

  it("passes inline options to the create call, and refuses a misspelled one privately", async () => {
    await coordinator.handleMessage(message("[model=gpt-x, effort=high, thinking] Build a page"));
    expect(service.created[0]).toMatchObject({
      prompt: "Build a page",
      modelName: "gpt-x",
      reasoningEffort: "high",
      enableThinking: true,
    });
    await coordinator.handleMessage(message("[modle=x] Build"));
    expect(service.prompts).toHaveLength(1);
    expect(writer.ephemerals.at(-1)?.text).toContain("Did you mean `model`?");
  });
});

describe("a direct message to the app", () => {
  it("starts a task in a thread under it, and records the thread as a DM's", async () => {
    const dm = message("Draw a logo", { channelId: "D1", surface: "dm" });
    await coordinator.handleMessage(dm);
    const key = { teamId: TEAM, channelId: "D1", threadTs: dm.ts };
    expect(relay.started[0]?.key).toEqual(key);
    expect((await store.getThread(key))?.surface).toBe("dm");
  });

  it("shows a working status under the DM thread while the run works, and clears it at the end", async () => {
    const dm = message("Draw a logo", { channelId: "D1", surface: "dm" });
    await coordinator.handleMessage(dm);
    expect(writer.statuses.get(dm.ts)).toBe("is working on your task…");
    const target = relay.started[0];
    if (!target) throw new Error("no run started");
    await coordinator.onRunEnded({ target, state: "completed", text: "", messageTs: [] });
    expect(writer.statuses.get(dm.ts)).toBe("");
  });

  it("stops the thread's run when Slack's own Stop is pressed, like the Stop button", async () => {
    const dm = message("Draw a logo", { channelId: "D1", surface: "dm" });
    await coordinator.handleMessage(dm);
    const key = { teamId: TEAM, channelId: "D1", threadTs: dm.ts };
    const told: string[] = [];
    await coordinator.handleSessionStopped({ key, userId: "U9" }, async (t) => {
      told.push(t);
    });
    expect(relay.stopped).toEqual([]);
    expect(told[0]).toContain("Only <@U1>");
    await coordinator.handleSessionStopped({ key, userId: "U1" }, async (t) => {
      told.push(t);
    });
    expect(relay.stopped.map((s) => s.runId)).toEqual([relay.started[0]?.runId]);
  });

  it("leaves a channel message that starts nothing alone", async () => {
    await coordinator.handleMessage(message("lunch?", { startsTask: false }));
    expect(service.prompts).toEqual([]);
    expect(writer.ephemerals).toEqual([]);
  });
});
