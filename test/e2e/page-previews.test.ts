/**
 * Generated web pages shown as images: a run that builds a site gets a screenshot of its page
 * uploaded beside the files, titled after the page; the page loads its own CSS and image from
 * memory and nothing from the network (an outside server counts the requests: zero). As root
 * (this machine and CI), Chromium's sandbox cannot be kept: previews run only with the
 * operator's PREVIEW_ALLOW_NO_SANDBOX, and without it the app says so once and goes on without.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SlackFile } from "../../tools/local-slack/index.ts";
import { CHANNEL, Harness } from "../support/harness.ts";
import { chromiumPath, storeBackends } from "../support/needs.ts";

const CHROMIUM = chromiumPath() ?? "";
const hasChromium = CHROMIUM !== "";
const TITLE = "page previews";
const ROOT = process.getuid?.() === 0;
/** As root, the opt-in previews need there (a non-root run keeps the sandbox, and needs none). */
const ALLOW_NO_SANDBOX = { PREVIEW_ALLOW_NO_SANDBOX: "1" };

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A PNG's width and height (its IHDR chunk). */
function pngSize(bytes: Buffer): { width: number; height: number } {
  expect(bytes.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

/** The log lines of the previews made, as JSON. */
function previewLogs(h: Harness): Array<{ page: string; served: number; refused: number }> {
  return h.logLines
    .filter((l) => l.includes('"page preview made"'))
    .map((l) => JSON.parse(l) as { page: string; served: number; refused: number });
}

/** An outside web server that only counts what reaches it. */
async function countingServer(): Promise<{ server: Server; url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    res.end("outside");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, hits };
}

describe.skipIf(!hasChromium).each(storeBackends())(`${TITLE} with %s`, (_name, redis) => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({
      redisUrl: redis,
      env: { CHROMIUM_PATH: CHROMIUM, ...ALLOW_NO_SANDBOX },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const threadFiles = (threadTs: string): SlackFile[] =>
    h.slack.files().filter((f) => f.thread_ts === threadTs && f.completed);

  it("uploads a screenshot of a generated page beside its files, titled after the page", async () => {
    await h.command("Build a landing page for a bakery [sim:site] [sim:files=2]");
    const threadTs = await h.waitForTaskThread("landing page for a bakery");
    await h.waitForFinal(threadTs, 1, 60_000);
    const files = threadFiles(threadTs);
    const names = files.map((f) => f.name).sort();
    expect(names).toEqual(
      [
        "chart.png",
        "index-full-page.png",
        "index-preview.png",
        "index.html",
        "logo.png",
        "report.md",
        "style.css",
      ].sort(),
    );
    const preview = files.find((f) => f.name === "index-preview.png");
    expect(preview?.title).toBe("Landing page: Build a landing page for a bakery");
    expect(pngSize(preview?.bytes ?? Buffer.alloc(0))).toEqual({ width: 1280, height: 800 });
    const full = files.find((f) => f.name === "index-full-page.png");
    expect(full?.title).toBe("Landing page: Build a landing page for a bakery (full page)");
    const size = pngSize(full?.bytes ?? Buffer.alloc(0));
    expect(size.width).toBe(1280);
    expect(size.height).toBeGreaterThan(800);
    expect(size.height).toBeLessThanOrEqual(4000);
    // The page got its stylesheet and its image from memory, and asked for nothing else.
    expect(previewLogs(h).at(-1)).toMatchObject({ served: 3, refused: 0 });
    // The service's own image goes up under its name, typed by it, so Slack shows it inline.
    expect(files.find((f) => f.name === "chart.png")?.title).toBe("chart.png");
    // The previews went up with the run's files: one share, in the thread.
    const uploads = h.slack.calls.filter(
      (c) => c.method === "files.completeUploadExternal" && c.args.thread_ts === threadTs,
    );
    expect(uploads).toHaveLength(1);
    expect(h.slack.validationErrors).toEqual([]);
  });

  it("renders a page that reaches out to another server without it: the server gets no request", async () => {
    const outside = await countingServer();
    try {
      await h.command(`Make a page that phones home [sim:site=${outside.url}]`);
      const threadTs = await h.waitForTaskThread("page that phones home");
      await h.waitForFinal(threadTs, 1, 60_000);
      const preview = threadFiles(threadTs).find((f) => f.name === "index-preview.png");
      expect(preview?.title).toBe("Landing page: Make a page that phones home");
      expect(pngSize(preview?.bytes ?? Buffer.alloc(0)).width).toBe(1280);
      const made = previewLogs(h).at(-1);
      expect(made?.served).toBe(3);
      // Stylesheet, script, image, frame, fetch, beacon: each refused (WebSocket and pop-up too).
      expect(made?.refused).toBeGreaterThanOrEqual(5);
      expect(outside.hits).toEqual([]);
    } finally {
      outside.server.close();
    }
  });
});

describe("page previews without a browser", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ env: { CHROMIUM_PATH: "/nonexistent/chromium" } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("says once at start-up that previews are off, and still uploads the page itself", async () => {
    const off = h.logLines.filter((l) => l.includes("page previews are off"));
    expect(off).toHaveLength(1);
    expect(off[0]).toContain("CHROMIUM_PATH (/nonexistent/chromium) is not an executable file");
    await h.command("A page without a preview [sim:site]");
    const threadTs = await h.waitForTaskThread("page without a preview");
    await h.waitForFinal(threadTs);
    const names = h.slack
      .files()
      .filter((f) => f.thread_ts === threadTs)
      .map((f) => f.name);
    expect(names.sort()).toEqual(["index.html", "logo.png", "style.css"]);
    expect(h.slack.thread(CHANNEL, threadTs).length).toBeGreaterThan(1);
  });
});

describe.skipIf(!hasChromium || !ROOT)(
  "page previews as root without PREVIEW_ALLOW_NO_SANDBOX",
  () => {
    let h: Harness;
    beforeAll(async () => {
      h = await Harness.start({ env: { CHROMIUM_PATH: CHROMIUM } });
    });
    afterAll(async () => {
      await h?.close();
    });

    it("are off: one warning at start-up says why and how to fix it, and the page itself still goes up", async () => {
      const lines = h.logLines.filter((l) => l.includes("page previews are"));
      expect(lines).toHaveLength(1);
      const line = JSON.parse(lines[0] ?? "{}") as { level: number; msg: string };
      expect(line.level).toBe(40);
      expect(line.msg).toContain("page previews are off: the app runs as root");
      expect(line.msg).toContain("PREVIEW_ALLOW_NO_SANDBOX=1");
      await h.command("A page as root [sim:site]");
      const threadTs = await h.waitForTaskThread("page as root");
      await h.waitForFinal(threadTs);
      const names = h.slack
        .files()
        .filter((f) => f.thread_ts === threadTs)
        .map((f) => f.name);
      expect(names.sort()).toEqual(["index.html", "logo.png", "style.css"]);
    });
  },
);
