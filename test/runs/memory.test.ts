/**
 * What a run may hold of the service's data, with in-process doubles: an answer that passes
 * its budget stops the run at the service and ends it, saying so, with what was kept attached;
 * a run's files are read one at a time and go up in batches that stay within the run's file
 * budget; a file past it is listed, never dropped; the process's budget is shared by all runs.
 */
import { pino } from "pino";
import { beforeEach, describe, expect, it } from "vitest";
import { type MemoryLimits, memoryLimits } from "../../src/runs/memory.ts";
import { Relay, type RelayOptions, type RunOutcome } from "../../src/runs/relay.ts";
import type { FakeFile } from "../support/fakes/task-service.ts";
import type { PagePreviews, SiteFile } from "../../src/runs/ports.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import type { ThreadStore } from "../../src/store/types.ts";
import { ByteBudget } from "../../src/util/byte-budget.ts";
import { FakeSlackWriter } from "../support/fakes/slack-writer.ts";
import { FakeTaskService } from "../support/fakes/task-service.ts";
import { FakePagePreviews } from "../support/fakes/page-previews.ts";
import { oneWorkspace } from "../support/fakes/workspaces.ts";
import { runningThreads } from "../../src/threads/running.ts";

const key = { teamId: "T1", channelId: "C1", threadTs: "1700000000.000001" };
const MiB = 1024 * 1024;
let writer: FakeSlackWriter;
let service: FakeTaskService;
let store: ThreadStore;
let ended: RunOutcome[];

beforeEach(() => {
  writer = new FakeSlackWriter({ edits: "scheduled" });
  service = new FakeTaskService();
  store = createMemoryStore();
  ended = [];
});

/** Starts one run on a relay with these memory limits; resolves once the run is relayed. */
async function start(memory = memoryLimits({ answer: 1, runFiles: 1, process: 16 })) {
  const relay = relayWith(memory, { stopGraceMs: 50 });
  const created = await relayRun(relay, "go", "U1");
  return { relay, memory, threadId: created.thread_id };
}

/** A relay with these memory limits (and `extra` options) on the in-process doubles. */
function relayWith(memory: MemoryLimits, extra: Partial<RelayOptions> = {}): Relay {
  const relay = new Relay({
    workspaces: oneWorkspace(writer, service),
    store,
    threads: runningThreads({ store, now: Date.now }),
    instanceId: "i1",
    logger: pino({ level: "silent" }),
    follow: { reconnectDelayMs: 1, pollTimeoutS: 1 },
    memory,
    ...extra,
  });
  relay.onEnded(async (o) => void ended.push(o));
  return relay;
}

/** Relays a run of `prompt` (asked by `owner`) in the thread's working message. */
async function relayRun(relay: Relay, prompt: string, owner?: string) {
  const created = await service.createTask({ prompt });
  const working = await writer.post("C1", { text: "Working…", blocks: [] }, key.threadTs);
  await relay.start({
    key,
    ref: { projectId: created.project_id, threadId: created.thread_id },
    runId: created.agent_run_id,
    messageTs: working,
    startedAt: Date.now(),
    ...(owner === undefined ? {} : { owner }),
  });
  return created;
}

/** The run's last message: its final state, its files. */
const finalShown = () => JSON.stringify(writer.messages.at(-1)?.payload ?? {});

describe("a run's answer within its budget", () => {
  it("stops a runaway answer at the service once it passes the budget, and says so in the thread", async () => {
    const { relay, memory, threadId } = await start();
    // 64 KiB a delta, without end: the 17th passes 1 MiB.
    const chunk = "x".repeat(64 * 1024);
    for (let i = 0; i < 40; i++) service.emit({ type: "delta", text: chunk });
    await relay.idle();
    expect(service.stopped).toEqual([threadId]);
    expect(ended.map((e) => e.state)).toEqual(["stopped"]);
    expect(finalShown()).toContain("passed 1.0 MB, the most this app keeps of one answer");
    // What was kept went up whole: 16 deltas of 64 KiB, nothing beyond the budget.
    const file = writer.uploads.find((u) => u.filename === "answer.md");
    expect(file?.bytes.toString("utf8")).toBe(chunk.repeat(16));
    // And the process's budget is whole again.
    expect(memory.process.used).toBe(0);
  });

  it("stops the run whose answer finds the process's budget full, and the others go on", async () => {
    const memory = memoryLimits({ answer: 8, runFiles: 1, process: 16 });
    // Another run of the process holds all but 256 KiB of it.
    expect(memory.process.tryTake(16 * MiB - 256 * 1024)).toBe(true);
    const { relay } = await start(memory);
    const chunk = "y".repeat(64 * 1024);
    for (let i = 0; i < 8; i++) service.emit({ type: "delta", text: chunk });
    await relay.idle();
    expect(ended.map((e) => e.state)).toEqual(["stopped"]);
    expect(finalShown()).toContain("the app holds too many long answers at once");
    expect(memory.process.used).toBe(16 * MiB - 256 * 1024);
  });

  it("ends as usual an answer just within its budget", async () => {
    const { relay } = await start();
    const text = "z".repeat(MiB - 10);
    service.final = { status: "completed", content: text };
    service.emit({ type: "delta", text }, { type: "status", status: "completed" });
    service.close();
    await relay.idle();
    expect(ended.map((e) => e.state)).toEqual(["completed"]);
    expect(service.stopped).toEqual([]);
    expect(finalShown()).not.toContain("passed");
  });
});

/** `n` text files of `size` bytes each. */
function textFiles(n: number, size: number): FakeFile[] {
  return Array.from({ length: n }, (_, i) => ({
    file_id: `f${i}`,
    file_name: `part-${i}.txt`,
    file_size: size,
    content: String(i % 10).repeat(size),
    encoding: "utf-8",
    included_inline: true,
  }));
}

/** Ends the run with these files. */
async function endWith(relay: Relay, files: FakeFile[]): Promise<void> {
  service.final = { status: "completed", content: "Done.", files };
  service.emit({ type: "status", status: "completed" });
  service.close();
  await relay.idle();
}

describe("a run's files within their budget", () => {
  it("reads each file alone and uploads them in batches that fit the run's budget", async () => {
    const { relay, memory } = await start(memoryLimits({ answer: 1, runFiles: 1, process: 16 }));
    // Every read is watched: the process never holds more than the run's 1 MiB of files.
    let peak = 0;
    const read = service.readResultFile;
    service.readResultFile = async (...args) => {
      const bytes = await read(...args);
      peak = Math.max(peak, memory.process.used);
      return bytes;
    };
    // 250 KiB each, taken as base64 would send them (341 KB): three fit in 1 MiB.
    const files = textFiles(6, 250 * 1024);
    await endWith(relay, files);
    expect(service.fileReads).toBe(6);
    expect(peak).toBeLessThanOrEqual(MiB);
    // Three files fit 1 MiB at a time: two uploads, every file whole and in order.
    const batches = writer.uploadBatches.map((b) => b.map((u) => u.filename));
    expect(batches).toEqual([
      ["part-0.txt", "part-1.txt", "part-2.txt"],
      ["part-3.txt", "part-4.txt", "part-5.txt"],
    ]);
    for (const [i, f] of files.entries()) {
      expect(writer.uploads[i]?.bytes.toString("utf8")).toBe(f.content);
    }
    expect(memory.process.used).toBe(0);
  });

  it("lists a file larger than the run's budget by name and size, and uploads the others", async () => {
    const { relay } = await start(memoryLimits({ answer: 1, runFiles: 1, process: 16 }));
    const [small, big] = [textFiles(1, 1000)[0], { ...textFiles(1, 2 * MiB)[0], file_id: "big" }];
    if (!small || !big) throw new Error("no files");
    await endWith(relay, [small, { ...big, file_name: "video.mp4" }]);
    expect(writer.uploads.map((u) => u.filename)).toEqual(["part-0.txt"]);
    const shown = finalShown() ?? "";
    expect(shown).toContain("video.mp4");
    expect(shown).toContain("larger than 1.0 MB, the most this app brings into Slack at once");
    // Its size said by the service, it was never read.
    expect(service.fileReads).toBe(1);
  });

  it("lists a file whose content turns out larger than it said", async () => {
    const { relay } = await start(memoryLimits({ answer: 1, runFiles: 1, process: 16 }));
    const liar = { ...textFiles(1, 2 * MiB)[0], file_size: 1000 } as FakeFile;
    await endWith(relay, [liar]);
    expect(writer.uploads).toEqual([]);
    expect(finalShown()).toContain("larger than 1.0 MB");
  });

  it("lists a file the process's budget has no room for in time, and ends the run", async () => {
    const memory = { ...memoryLimits({ answer: 1, runFiles: 1, process: 16 }), fileWaitMs: 50 };
    // Other runs hold all but room for this run's short answer.
    expect(memory.process.tryTake(16 * MiB - 100)).toBe(true);
    const { relay } = await start(memory);
    await endWith(relay, textFiles(1, 1000));
    expect(writer.uploads).toEqual([]);
    expect(finalShown()).toContain("the app was busy bringing other files into Slack");
    expect(ended.map((e) => e.state)).toEqual(["completed"]);
  });
});

describe("the process's byte budget", () => {
  it("takes what fits, lets a taker wait its turn, and gives up after its wait", async () => {
    const budget = new ByteBudget(100);
    expect(budget.tryTake(60)).toBe(true);
    expect(budget.tryTake(60)).toBe(false);
    const waiting = budget.take(60, 10_000);
    const late = budget.take(30, 20); // behind the first: waits, then gives up
    expect(await late).toBe(false);
    budget.give(60);
    expect(await waiting).toBe(true);
    expect(budget.used).toBe(60);
    expect(await budget.take(101, 10)).toBe(false); // more than the whole never fits
  });
});

describe("the files a run's pages load for their pictures", () => {
  /** Previews that ask for every file at once, as a page loading its assets does. */
  const loadingAll = (seen: number[]) => ({
    render: async (files: readonly SiteFile[]) => {
      const bodies = await Promise.all(files.map((f) => f.read()));
      seen.push(...bodies.map((b) => b.length));
      return [];
    },
  });

  it("reads them within the run's budget even when the browser asks for all at once", async () => {
    const memory = memoryLimits({ answer: 1, runFiles: 1, process: 16 });
    const seen: number[] = [];
    const relay = relayWith(memory, { previews: loadingAll(seen) });
    let peak = 0;
    const read = service.readResultFile;
    service.readResultFile = async (...args) => {
      peak = Math.max(peak, memory.process.used);
      return read(...args);
    };
    await relayRun(relay, "site");
    // Six files of 250 KiB (341 KB as base64): three fit the run's 1 MiB at once.
    await endWith(relay, textFiles(6, 250 * 1024));
    expect(peak).toBeLessThanOrEqual(1024 * 1024);
    expect(seen.filter((n) => n > 0)).toHaveLength(3);
    expect(seen.filter((n) => n === 0)).toHaveLength(3);
    expect(memory.process.used).toBe(0);
  });

  it("gives back the share of a read that ends after the pictures were taken", async () => {
    const memory = memoryLimits({ answer: 1, runFiles: 1, process: 16 });
    let late: (() => void) | undefined;
    const slow = new Promise<void>((resolve) => (late = resolve));
    const relay = relayWith(memory, {
      // The page gives up on its file before it comes (a preview's time limit).
      previews: {
        render: async (files: readonly SiteFile[]) => {
          void files[0]?.read();
          return [];
        },
      },
    });
    const read = service.readResultFile;
    service.readResultFile = async (...args) => {
      await slow;
      return read(...args);
    };
    await relayRun(relay, "site");
    service.readResultFile = read; // the run's own files come at once
    const pending = endWith(relay, textFiles(1, 1000));
    await pending;
    late?.();
    await new Promise((r) => setTimeout(r, 20));
    expect(memory.process.used).toBe(0);
  });
});

describe("the pictures of a run's pages", () => {
  const site = (): FakeFile[] => [
    {
      file_id: "p",
      file_name: "index.html",
      file_path: "/w/index.html",
      file_type: "text/html",
      file_size: 40,
      content: "<title>Hi</title>",
      encoding: "utf-8",
    },
  ];
  async function deliver(
    memory: ReturnType<typeof memoryLimits>,
    previews: PagePreviews = new FakePagePreviews(),
  ) {
    const relay = relayWith(memory, { previews });
    await relayRun(relay, "site");
    await endWith(relay, site());
  }

  it("are held in the budgets until they go up with the files, then given back", async () => {
    const memory = memoryLimits({ answer: 1, runFiles: 1, process: 16 });
    await deliver(memory);
    expect(writer.uploads.map((u) => u.filename)).toEqual(["index.html", "index-preview.png"]);
    expect(memory.process.used).toBe(0);
  });

  it("are left out when the process has no room for them in time, and the run ends", async () => {
    const memory = { ...memoryLimits({ answer: 1, runFiles: 1, process: 16 }), fileWaitMs: 30 };
    // Room for the answer and the page's file, none for its 2 KB picture.
    expect(memory.process.tryTake(16 * MiB - 1100)).toBe(true);
    await deliver(memory, {
      render: async () => [{ filename: "tall.png", bytes: Buffer.alloc(2048), title: "Tall" }],
    });
    expect(writer.uploads.map((u) => u.filename)).toEqual(["index.html"]);
    expect(ended.map((e) => e.state)).toEqual(["completed"]);
    expect(memory.process.used).toBe(16 * MiB - 1100);
  });
});
