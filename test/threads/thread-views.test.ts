/**
 * History, Files and "Get it" with in-process doubles: a file is uploaded into the thread under
 * its safe base name (never the service's path), the task result is fetched once for clicks
 * close together, and one person's clicks are throttled with a sentence saying when to retry.
 */
import { pino } from "pino";
import { beforeEach, describe, expect, it } from "vitest";
import { TaskCoordinator } from "../../src/threads/coordinator.ts";
import { VIEW_LOADS_PER_MIN } from "../../src/threads/thread-views.ts";
import { memoryLimits } from "../../src/runs/memory.ts";
import type { ResultFile } from "../../src/service/schemas.ts";
import { createMemoryStore } from "../../src/store/memory.ts";
import type { SlackThreadKey } from "../../src/store/types.ts";
import { oneWorkspace } from "../support/fakes/workspaces.ts";
import { FakeFiles } from "../support/fakes/file-source.ts";
import { FakeRelay } from "../support/fakes/relay-control.ts";
import { FakeTaskService } from "../support/fakes/task-service.ts";
import { FakeSlackWriter } from "../support/fakes/slack-writer.ts";

/** Slack's side of uploads: what reached each thread, by file name. */
const uploaded = () =>
  writer.uploads.map((u) => ({
    threadTs: u.threadTs,
    filename: u.filename,
    bytes: Buffer.from(u.bytes).toString(),
  }));

const file = (id: string, name: string, content: string): ResultFile => ({
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

beforeEach(async () => {
  writer = new FakeSlackWriter();
  service = new FakeTaskService();
  relay = new FakeRelay();
  now = 1_700_000_100_000; // the start of a minute
  coordinator = new TaskCoordinator({
    workspaces: oneWorkspace(writer, service),
    store: createMemoryStore(),
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
