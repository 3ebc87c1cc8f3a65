/**
 * A run's files on their way into the thread: images keep (or get) the extension Slack shows
 * them inline by, and the pictures of its web pages go up beside them, once, even on resume.
 */
import { describe, expect, it } from "vitest";
import { deliverAnswer, uploadName } from "../../src/runs/file-delivery.ts";
import type { FakeFile } from "../support/fakes/task-service.ts";
import type { RelayedRun } from "../../src/store/types.ts";
import { createLogger } from "../../src/log.ts";
import { FakePagePreviews } from "../support/fakes/page-previews.ts";
import { FakeSlackWriter } from "../support/fakes/slack-writer.ts";
import { FakeTaskService } from "../support/fakes/task-service.ts";
import { memoryLimits } from "../../src/runs/memory.ts";

const text = (name: string, path: string, content: string, type?: string): FakeFile => ({
  file_id: `t:${path}`,
  file_name: name,
  file_path: path,
  file_type: type,
  content,
  encoding: "utf-8",
});

const SITE: FakeFile[] = [
  text("index.html", "/workspace/out/index.html", "<title>Hi</title>", "text/html"),
  text("style.css", "/workspace/out/style.css", "body{}", "text/css"),
];

const record = (uploads?: RelayedRun["uploads"]) =>
  ({
    key: { teamId: "T1", channelId: "C1", threadTs: "1.0" },
    ref: { projectId: "p1", threadId: "thr_1" },
    messageTs: ["2.0"],
    ...(uploads ? { uploads } : {}),
  }) as unknown as RelayedRun;

function context(writer: FakeSlackWriter, previews: FakePagePreviews, rec = record()) {
  const service = new FakeTaskService();
  service.files = SITE;
  return {
    writer,
    service,
    memory: memoryLimits(),
    record: rec,
    resumed: false,
    persist: async () => undefined,
    log: createLogger({ level: "silent" }),
    previews,
  };
}

describe("a run's files and their previews", () => {
  it("uploads images and videos under a name with their type's extension", () => {
    const png = { file_id: "1", file_name: "chart", file_type: "image/png" };
    expect(uploadName(png)).toBe("chart.png");
    expect(uploadName({ ...png, file_name: "clip", file_type: "video/mp4" })).toBe("clip.mp4");
    expect(uploadName({ ...png, file_name: "photo.jpeg" })).toBe("photo.jpeg");
    expect(uploadName({ ...png, file_type: null })).toBe("chart");
  });

  it("uploads a page's preview beside the run's files, from the pages and files it had", async () => {
    const writer = new FakeSlackWriter({ edits: "scheduled" });
    const previews = new FakePagePreviews();
    const { notes } = await deliverAnswer(context(writer, previews), "", SITE);
    expect(writer.uploads.map((u) => u.filename)).toEqual([
      "index.html",
      "style.css",
      "index-preview.png",
    ]);
    expect(writer.uploads[2]?.title).toBe("Preview of /workspace/out/index.html");
    expect(previews.calls[0]?.map((f) => f.path)).toEqual(SITE.map((f) => f.file_path));
    expect(notes.map((n) => n.name)).toEqual(["index.html", "style.css"]);
  });

  it("does not upload a preview twice when a resumed run finds it in the thread", async () => {
    const writer = new FakeSlackWriter({ edits: "scheduled" });
    const previews = new FakePagePreviews();
    await deliverAnswer(context(writer, previews), "", SITE);
    await deliverAnswer(context(writer, previews, record("started")), "", SITE);
    expect(writer.uploads).toHaveLength(3);
    // Once the uploads are recorded as done, nothing is rendered again.
    await deliverAnswer(context(writer, previews, record("done")), "", SITE);
    expect(previews.calls).toHaveLength(2);
  });
});
