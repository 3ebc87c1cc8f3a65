/**
 * Which attachments go to the service: the service's limits applied to Slack's metadata, in the
 * order people attached the files, before anything is downloaded.
 */
import fc from "fast-check";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { gatherAttachments, selectAttachments } from "../../src/threads/attachments.ts";
import { TaskCoordinator } from "../../src/threads/coordinator.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import { LIMITS } from "../../src/service/limits.ts";
import { FakeFiles } from "../support/fakes/file-source.ts";
import { FakeRelay } from "../support/fakes/recording-relay.ts";
import { FakeTaskService } from "../support/fakes/task-service.ts";
import { FakeSlackWriter } from "../support/fakes/slack-writer.ts";
import { oneWorkspace } from "../support/fakes/workspaces.ts";

const MB = 2 ** 20;
const file = (name: string, size?: number) => ({
  id: `F_${name}`,
  name,
  ...(size === undefined ? {} : { size }),
});

describe("choosing the attachments that can go", () => {
  it("keeps every file within the service's limits, in order, and names each one left out", () => {
    const arbFile = fc.record({
      name: fc.constantFrom("a.png", "b.pdf", "c.exe", "d", "e.CSV", "f.zip"),
      size: fc.option(fc.integer({ min: 0, max: 80 * MB }), { nil: undefined }),
      mode: fc.option(fc.constantFrom("hosted", "external", "tombstone", "snippet"), {
        nil: undefined,
      }),
    });
    fc.assert(
      fc.property(fc.array(arbFile, { maxLength: 25 }), (raw) => {
        const files = raw.map((f, i) => ({ id: `F${i}`, ...f }));
        const { chosen, leftOut } = selectAttachments(files);
        expect(chosen.length).toBeLessThanOrEqual(LIMITS.maxFiles);
        expect(chosen.length + leftOut.length).toBe(files.length);
        const total = chosen.reduce((n, f) => n + (f.size ?? 0), 0);
        expect(total).toBeLessThanOrEqual(LIMITS.maxTotalBytes);
        for (const f of chosen) {
          expect(f.size ?? 0).toBeLessThanOrEqual(LIMITS.maxFileBytes);
          expect(f.name).toMatch(/\.(png|pdf|csv|zip)$/i);
          expect(["external", "tombstone"]).not.toContain(f.mode);
        }
        // Order is kept: the chosen files appear as they were attached.
        const order = chosen.map((f) => files.indexOf(f as (typeof files)[number]));
        expect(order).toEqual([...order].sort((a, b) => a - b));
        for (const l of leftOut) expect(l.reason).not.toBe("");
      }),
    );
  });

  it("takes the first files that fit when the total would pass 200 MB, and smaller ones after", () => {
    const files = [
      file("a.zip", 45 * MB),
      file("b.zip", 45 * MB),
      file("c.zip", 45 * MB),
      file("d.zip", 45 * MB),
      file("e.zip", 45 * MB),
      file("f.txt", 1),
    ];
    const { chosen, leftOut } = selectAttachments(files);
    expect(chosen.map((f) => f.name)).toEqual(["a.zip", "b.zip", "c.zip", "d.zip", "f.txt"]);
    expect(leftOut).toEqual([
      { name: "e.zip", reason: "the files of one message may add up to at most 200.0 MB" },
    ]);
  });
});

describe("opening the attachments", () => {
  it("names a file whose download fails and sends the others", async () => {
    const slack = new FakeFiles();
    const ok = slack.add("ok.txt", "fine");
    const broken = slack.add(
      "broken.txt",
      "x",
      "it could not be downloaded from Slack (ECONNRESET)",
    );
    const got = await gatherAttachments(slack, "T1", [ok, broken]);
    expect(got.files.map((f) => f.name)).toEqual(["ok.txt"]);
    expect(got.leftOut).toEqual([
      { name: "broken.txt", reason: "it could not be downloaded from Slack (ECONNRESET)" },
    ]);
  });

  it("checks a size Slack did not give once the file is opened, and drops the download", async () => {
    const slack = new FakeFiles();
    const big = { ...slack.add("big.zip", { size: 51 * MB }), size: undefined };
    const got = await gatherAttachments(slack, "T1", [big]);
    expect(got.files).toEqual([]);
    expect(got.leftOut[0]?.reason).toBe("it is 51.0 MB; each file may be at most 50.0 MB");
    expect(slack.cancelled).toEqual(["big.zip"]);
  });
});

describe("a file that stops coming from Slack while the task is sent", () => {
  it("shows in the thread which file broke the request, not a service failure", async () => {
    const files = new FakeFiles();
    const writer = new FakeSlackWriter();
    const coordinator = new TaskCoordinator({
      workspaces: oneWorkspace(writer, new FakeTaskService()),
      store: createMemoryStore(),
      relay: new FakeRelay(),
      files,
      logger: pino({ level: "silent" }),
    });
    const sheet = files.add("sheet.csv", "a,b\n1,2\n");
    files.breaksHalfway.add("sheet.csv");
    await coordinator.handleMessage({
      teamId: "T1",
      channelId: "D1",
      userId: "U1",
      text: "Chart this",
      ts: "1800000000.000001",
      files: [sheet],
      startsTask: true,
      surface: "dm",
    });
    expect(writer.thread("1800000000.000001").at(-1)).toContain(
      '"sheet.csv" could not be read from Slack (Slack stopped sending it), so nothing was sent to the task service.',
    );
  });
});
