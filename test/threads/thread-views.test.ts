/**
 * History, Files and "Get it" with in-process doubles: a file is uploaded into the thread under
 * its safe base name (never the service's path), the task result is fetched once for clicks
 * close together, one person's clicks are throttled with a sentence saying when to retry, and
 * only people the people policy and the workspace's usage policy let use the app get them.
 */
import { pino } from "pino";
import { beforeEach, describe, expect, it } from "vitest";
import { TaskCoordinator } from "../../src/threads/coordinator.ts";
import { VIEW_LOADS_PER_MIN } from "../../src/threads/thread-views.ts";
import { memoryLimits } from "../../src/runs/memory.ts";
import { GUEST_REFUSAL, PERSON_UNKNOWN } from "../../src/threads/access/checks.ts";
import { putUsagePolicy } from "../../src/store/usage-policy.ts";
import type { FakeFile } from "../support/fakes/task-service.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import type { SlackThreadKey, ThreadStore } from "../../src/store/types.ts";
import { oneWorkspace } from "../support/fakes/workspaces.ts";
import { FakeFiles } from "../support/fakes/file-source.ts";
import { FakeRelay } from "../support/fakes/recording-relay.ts";
import { FakeTaskService } from "../support/fakes/task-service.ts";
import { FakeSlackWriter } from "../support/fakes/slack-writer.ts";

/** Slack's side of uploads: what reached each thread, by file name. */
const uploaded = () =>
  writer.uploads.map((u) => ({
    threadTs: u.threadTs,
    filename: u.filename,
    bytes: Buffer.from(u.bytes).toString(),
  }));

const file = (id: string, name: string, content: string): FakeFile => ({
  file_id: id,
  file_name: name,
  included_inline: true,
  content,
  encoding: "utf-8",
});

let writer: FakeSlackWriter;
let service: FakeTaskService;
let relay: FakeRelay;
let now: number;
let coordinator: TaskCoordinator;
let key: SlackThreadKey;
let store: ThreadStore;
/** The workspace's user groups, as Slack's usergroups.users.list would answer. */
const groups = new Map<string, string[]>();

beforeEach(async () => {
  writer = new FakeSlackWriter();
  service = new FakeTaskService();
  relay = new FakeRelay();
  now = 1_700_000_100_000; // the start of a minute
  store = createMemoryStore();
  groups.clear();
  coordinator = new TaskCoordinator({
    workspaces: oneWorkspace(writer, service),
    store,
    groupMembers: async (_teamId, groupId) => new Set(groups.get(groupId) ?? []),
    relay,
    files: new FakeFiles(),
    logger: pino({ level: "silent" }),
    now: () => now,
  });
  const task = { teamId: "T1", channelId: "C1", userId: "U1", prompt: "Write reports" };
  await coordinator.startTask(task, async () => {});
  const run = relay.started.at(-1);
  if (!run) throw new Error("the task did not start");
  key = run.key;
});

describe("Get it", () => {
  it("uploads a file under its safe base name, not the service's path", async () => {
    service.files = [file("f1", "../../home/app/.ssh/\u0007id_rsa.txt", "not a key")];
    const said = await coordinator.threads.fetchFile(key, "U1", "f1");
    expect(said).toBe("`id_rsa.txt` is now in the thread.");
    expect(uploaded()).toEqual([
      { threadTs: key.threadTs, filename: "id_rsa.txt", bytes: "not a key" },
    ]);
    // Uploaded under that name, it is found in the thread the next time.
    expect(await coordinator.threads.fetchFile(key, "U1", "f1")).toBe(
      "`id_rsa.txt` is already in the thread.",
    );
  });

  it("fetches the task result once for clicks close together, and again a minute later", async () => {
    service.files = [file("f1", "a.md", "A"), file("f2", "b.md", "B")];
    await coordinator.threads.fetchFile(key, "U1", "f1");
    await coordinator.threads.fetchFile(key, "U2", "f2");
    expect(service.results).toBe(1);
    expect(uploaded().map((u) => u.filename)).toEqual(["a.md", "b.md"]);
    // A file the kept result does not have (a later run's) is asked for.
    service.files = [...service.files, file("f3", "c.md", "C")];
    await coordinator.threads.fetchFile(key, "U1", "f3");
    expect(service.results).toBe(2);
    now += 61_000;
    await coordinator.threads.fetchFile(key, "U1", "f1");
    expect(service.results).toBe(3);
  });

  it("reads the file's content alone, within the budget: a larger one is not brought in", async () => {
    service.files = [file("f1", "big.md", "x".repeat(2 * 1024 * 1024)), file("f2", "s.md", "S")];
    const small = new TaskCoordinator({
      workspaces: oneWorkspace(writer, service),
      store: createMemoryStore(),
      relay,
      files: new FakeFiles(),
      logger: pino({ level: "silent" }),
      now: () => now,
      memory: memoryLimits({ answer: 1, runFiles: 1, process: 16 }),
    });
    const task = { teamId: "T1", channelId: "C9", userId: "U1", prompt: "Write" };
    await small.startTask(task, async () => {});
    const at = relay.started.at(-1)?.key ?? key;
    // The result is read without content; each file's content alone.
    expect(await small.threads.fetchFile(at, "U1", "f1")).toContain(
      "could not be brought into the thread: larger than 1.0 MB",
    );
    expect(await small.threads.fetchFile(at, "U1", "f2")).toBe("`s.md` is now in the thread.");
    expect(uploaded().map((u) => u.filename)).toEqual(["s.md"]);
    expect(service.fileReads).toBe(2);
  });
});

describe("one person's History, Files and Get it clicks", () => {
  it(`are throttled past ${VIEW_LOADS_PER_MIN} a minute, saying when to try again; others go on`, async () => {
    service.files = [file("f1", "a.md", "A")];
    for (let i = 0; i < VIEW_LOADS_PER_MIN - 2; i++) {
      expect(await coordinator.threads.files(key, "U1", 1)).toMatchObject({ ok: true });
    }
    await coordinator.threads.fetchFile(key, "U1", "f1");
    expect(await coordinator.threads.files(key, "U1", 2)).toMatchObject({ ok: true });
    const refused = await coordinator.threads.history(key, "U1", 1, false);
    expect(refused).toEqual({
      ok: false,
      error: `You opened task history and files ${VIEW_LOADS_PER_MIN} times in the last minute, the most one person may. Please try again in 60 s.`,
    });
    expect(await coordinator.threads.fetchFile(key, "U1", "f1")).toContain("Please try again in");
    // Someone else is not held back; the person is again in the next minute.
    expect(await coordinator.threads.files(key, "U2", 1)).toMatchObject({ ok: true });
    now += 60_000;
    expect(await coordinator.threads.files(key, "U1", 1)).toMatchObject({ ok: true });
  });
});

describe("who may see a task's History and Files, and get its files", () => {
  /** What the service was asked for: histories, and results (what Get it reads). */
  let histories = 0;
  const asked = () => ({ histories, results: service.results });
  beforeEach(() => {
    histories = 0;
    service.files = [file("f1", "a.md", "A")];
    service.getHistory = async () => {
      histories++;
      return { messages: [], pagination: { has_next: false } };
    };
  });

  /** What History, Files and Get it answer `userId`: each refusal, or "ok". */
  async function views(userId: string) {
    const history = await coordinator.threads.history(key, userId, 1, false);
    const files = await coordinator.threads.files(key, userId, 1);
    const got = await coordinator.threads.fetchFile(key, userId, "f1");
    return {
      history: history.ok ? "ok" : history.error,
      files: files.ok ? "ok" : files.error,
      get: /is (now|already) in the thread/.test(got) ? "ok" : got,
    };
  }
  const refusedWith = (why: string) => ({ history: why, files: why, get: why });
  const allowed = { history: "ok", files: "ok", get: "ok" };

  it("refuses a guest with the people policy's refusal, and asks the service nothing", async () => {
    writer.people.set("U0GUEST", { teamId: "T1", guest: true, deleted: false });
    expect(await views("U0GUEST")).toEqual(refusedWith(GUEST_REFUSAL));
    expect(asked()).toEqual({ histories: 0, results: 0 });
    expect(writer.uploads).toEqual([]);
    expect(await views("U1")).toEqual(allowed);
  });

  it("refuses someone Slack cannot identify just now, and lets them in once it can", async () => {
    writer.unidentified.add("U2");
    expect(await views("U2")).toEqual(refusedWith(PERSON_UNKNOWN));
    writer.unidentified.delete("U2");
    expect(await views("U2")).toEqual(allowed);
  });

  it("applies the workspace's groups and channels, and counts no hourly quota", async () => {
    groups.set("S0ENG", ["U1"]);
    await putUsagePolicy(store, "T1", {
      who: { kind: "groups", groupIds: ["S0ENG"] },
      where: { kind: "all" },
      perUserPerHour: 1,
      joinPublicChannels: false,
    });
    expect(await views("U2")).toEqual(
      refusedWith(
        "Only members of <!subteam^S0ENG> may start tasks in this workspace (set by its admins).",
      ),
    );
    // A member sees them as often as they like: their one task of the hour is still theirs.
    for (let i = 0; i < 3; i++) expect(await views("U1")).toEqual(allowed);
    const told: string[] = [];
    await coordinator.startTask(
      { teamId: "T1", channelId: "C2", userId: "U1", prompt: "One more" },
      async (text) => {
        told.push(text);
      },
    );
    expect(told).toEqual([]);
    expect(relay.started).toHaveLength(2);

    await putUsagePolicy(store, "T1", {
      who: { kind: "everyone" },
      where: { kind: "channels", channelIds: ["C0TASKS"] },
      perUserPerHour: 0,
      joinPublicChannels: false,
    });
    expect(await views("U1")).toEqual(
      refusedWith(
        "Tasks can't be started in this channel: this workspace allows them only in <#C0TASKS> (set by its admins).",
      ),
    );
  });
});
