/**
 * What the coordinator forgets, with in-process doubles (the end-to-end suites drive it through
 * Slack): a task whose message was deleted, a reply deleted while it waited, a deleted channel,
 * a person's erase and an admin's; and an admin stopping another person's run, written to the
 * audit trail (a person stopping their own is not an admin action).
 */
import { pino } from "pino";
import { beforeEach, describe, expect, it } from "vitest";
import { feedbackKey } from "../../src/feedback/feedback.ts";
import type { AuditEvent } from "../../src/store/audit.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import type { SlackThreadKey, ThreadStore } from "../../src/store/types.ts";
import { type TellUser, TaskCoordinator } from "../../src/threads/coordinator.ts";
import { FakeFiles } from "../support/fakes/file-source.ts";
import { FakeRelay } from "../support/fakes/recording-relay.ts";
import { FakeSlackWriter } from "../support/fakes/slack-writer.ts";
import { FakeTaskService } from "../support/fakes/task-service.ts";
import { oneWorkspace } from "../support/fakes/workspaces.ts";

const TEAM = "T1";
const CHANNEL = "C1";
const OWNER = "U1";
const OTHER = "U2";
const ADMIN = "U9";

let store: ThreadStore;
let writer: FakeSlackWriter;
let relay: FakeRelay;
let coordinator: TaskCoordinator;
let audited: Omit<AuditEvent, "when">[];
let refreshed: string[];
let told: string[];
const tell: TellUser = async (text) => {
  told.push(text);
};

beforeEach(() => {
  store = createMemoryStore();
  writer = new FakeSlackWriter();
  writer.admins.add(ADMIN);
  relay = new FakeRelay();
  audited = [];
  refreshed = [];
  told = [];
  coordinator = new TaskCoordinator({
    workspaces: oneWorkspace(writer, new FakeTaskService()),
    store,
    relay,
    files: new FakeFiles(),
    logger: pino({ level: "silent" }),
    home: { taskChanged: (team, user) => refreshed.push(`${team}/${user}`) },
    audit: {
      record: async (event) => {
        audited.push(event);
      },
    },
  });
});

/** A task of OWNER in `channelId`, its first run going, listed in OWNER's recent tasks. */
async function startedTask(prompt: string, channelId = CHANNEL): Promise<SlackThreadKey> {
  await coordinator.startTask(
    { teamId: TEAM, channelId, userId: OWNER, prompt, delivery: undefined },
    tell,
  );
  const key = relay.started.at(-1)?.key;
  if (!key) throw new Error(`the task did not start; told: ${told.join(" / ")}`);
  await expect
    .poll(async () => (await store.recentTasks(TEAM, OWNER, 5)).length)
    .toBeGreaterThan(0);
  return key;
}

let replies = 0;
/** A reply of `user` in the thread (queued while its run goes on); returns its ts. */
async function replied(key: SlackThreadKey, user: string, text: string): Promise<string> {
  const ts = `1800000000.${String(++replies).padStart(6, "0")}`;
  await coordinator.handleReply({
    key,
    userId: user,
    text,
    ts,
    files: [],
    delivery: { kind: "event", id: `Ev${replies}` },
  });
  return ts;
}

/** A vote on a run's answer, as the feedback recorder keeps it. */
async function voted(key: SlackThreadKey, runId: string, ...voters: string[]): Promise<string> {
  const at = feedbackKey(TEAM, runId);
  const votes = voters.map((userId) => ({ userId, kind: "positive", at: 1 }));
  await store.putRecord(at, { runId, channelId: key.channelId, threadTs: key.threadTs, votes });
  return at;
}

describe("stopping another person's run", () => {
  it("is written to the audit trail when an admin does it, not when the owner stops their own", async () => {
    const key = await startedTask("Build a bakery site");
    const run = relay.started.at(-1)?.runId ?? "";
    await coordinator.handleStop({ key, userId: ADMIN, runId: run }, tell);
    expect(relay.stopped).toEqual([{ runId: run, userId: ADMIN }]);
    expect(audited).toEqual([
      {
        what: "run.stopped",
        who: ADMIN,
        workspace: TEAM,
        channel: CHANNEL,
        whom: OWNER,
        detail: `run ${run}`,
      },
    ]);
    const mine = await startedTask("Build a shop", "C2");
    const second = relay.started.at(-1)?.runId ?? "";
    await coordinator.handleStop({ key: mine, userId: OWNER, runId: second }, tell);
    expect(relay.stopped).toHaveLength(2);
    expect(audited).toHaveLength(1);
  });
});

describe("forgetting", () => {
  it("forgets a task whose message was deleted: its run stopped quietly, its records and votes gone", async () => {
    const key = await startedTask("Build a bakery site");
    const other = await startedTask("Build a shop");
    await replied(key, OTHER, "Add a menu");
    const vote = await voted(key, "run_a", OTHER);
    const kept = await voted(other, "run_b", OTHER);
    refreshed = [];

    await coordinator.forgetting.messageDeleted(TEAM, CHANNEL, key.threadTs, undefined);

    expect(relay.stoppedQuietly.map((s) => s.scope)).toEqual([key]);
    expect(await store.getThread(key)).toBeUndefined();
    expect(await store.getRecord(vote)).toBeUndefined();
    expect(await store.getRecord(kept)).toBeDefined();
    expect((await store.recentTasks(TEAM, OWNER, 5)).map((t) => t.threadTs)).toEqual([
      other.threadTs,
    ]);
    expect(refreshed).toEqual([`${TEAM}/${OWNER}`]);
    expect(await store.getThread(other)).toBeDefined();
  });

  it("drops a reply deleted while it waited, and leaves any other deleted message alone", async () => {
    const key = await startedTask("Build a bakery site");
    const first = await replied(key, OTHER, "Add a menu");
    await replied(key, OTHER, "And a map");
    await coordinator.forgetting.messageDeleted(TEAM, CHANNEL, first, key.threadTs);
    expect((await store.getThread(key))?.queue.map((r) => r.text)).toEqual(["And a map"]);
    // A message of no task (or a reply already sent): nothing changes, nothing stops.
    await coordinator.forgetting.messageDeleted(TEAM, CHANNEL, "1800000099.000001", key.threadTs);
    await coordinator.forgetting.messageDeleted(TEAM, CHANNEL, "1800000099.000002", undefined);
    expect((await store.getThread(key))?.queue).toHaveLength(1);
    expect(relay.stoppedQuietly).toEqual([]);
  });

  it("forgets a deleted channel's tasks, runs and votes, and shows its people their Home again", async () => {
    const key = await startedTask("Build a bakery site");
    const elsewhere = await startedTask("Build a shop", "C2");
    const vote = await voted(key, "run_a", OTHER);
    const kept = await voted(elsewhere, "run_b", OTHER);
    refreshed = [];
    await coordinator.forgetting.channelDeleted(TEAM, CHANNEL);
    expect(relay.stoppedQuietly.map((s) => s.scope)).toEqual([
      { teamId: TEAM, channelId: CHANNEL },
    ]);
    expect(await store.getThread(key)).toBeUndefined();
    expect(await store.getThread(elsewhere)).toBeDefined();
    expect(await store.getRecord(vote)).toBeUndefined();
    expect(await store.getRecord(kept)).toBeDefined();
    expect(refreshed).toEqual([`${TEAM}/${OWNER}`]);
  });

  it("erases a person's records and their votes, and leaves others' votes", async () => {
    const key = await startedTask("Build a bakery site");
    await replied(key, OTHER, "Add a menu");
    const theirs = await voted(key, "run_a", OTHER);
    const shared = await voted(key, "run_b", OTHER, OWNER);
    const erased = await coordinator.forgetting.erasePerson(TEAM, OTHER);
    expect(erased).toEqual({
      threads: 0,
      queuedReplies: 1,
      recentTasks: 0,
      defaults: false,
      votes: 2,
    });
    expect(await store.getRecord(theirs)).toBeUndefined();
    expect(await store.getRecord(shared)).toMatchObject({ votes: [{ userId: OWNER }] });
    expect((await store.getThread(key))?.queue).toEqual([]);
    // Not an admin action: nothing in the audit trail, no run stopped.
    expect(audited).toEqual([]);
    expect(relay.stoppedQuietly).toEqual([]);
  });

  it("erases a workspace's records for an admin: its runs stopped quietly, the erase audited", async () => {
    const key = await startedTask("Build a bakery site");
    const vote = await voted(key, "run_a", OTHER);
    await coordinator.forgetting.eraseWorkspace(TEAM, ADMIN);
    expect(relay.stoppedQuietly.map((s) => s.scope)).toEqual([{ teamId: TEAM }]);
    expect(await store.getThread(key)).toBeUndefined();
    expect(await store.getRecord(vote)).toBeUndefined();
    expect(await store.recentTasks(TEAM, OWNER, 5)).toEqual([]);
    expect(audited).toEqual([{ what: "records.erased", who: ADMIN, workspace: TEAM }]);
  });
});
