/**
 * The real previewer on Debian's chromium: a page that never finishes is cut at its time limit
 * and the browser still serves the next page; a browser that died is launched again; a run's
 * pages are capped; two renders at once share one browser; a page that allocates far past its
 * memory cap fails fast (V8's heap limit for its objects, the renderer cap for the rest) while
 * another page renders beside it.
 */
import { execFileSync } from "node:child_process";
import { Writable } from "node:stream";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChromiumPreviews, PAGE_BYTES_MAX } from "../../src/preview/chromium.ts";
import { createLogger } from "../../src/log.ts";
import { chromiumPath } from "../support/needs.ts";

const CHROMIUM = chromiumPath() ?? "";
const hasChromium = CHROMIUM !== "";

const page = (path: string, html: string) => ({
  path,
  read: async () => Buffer.from(html),
  type: "text/html",
});
const GOOD = page("/w/index.html", "<title>Good</title><h1>Hello</h1>");

/** The browsers this process launched (its children running chromium), by pid. */
function childBrowsers(): number[] {
  const out = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], {
    encoding: "utf8",
  });
  return out
    .split("\n")
    .filter((l) => /chrom/i.test(l))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

describe.skipIf(!hasChromium)("the Chromium previewer", () => {
  let previews: ChromiumPreviews;
  beforeAll(() => {
    previews = new ChromiumPreviews({
      chromium: async () => chromium,
      executablePath: CHROMIUM,
      sandbox: process.getuid?.() !== 0,
      maxPages: 2,
      // The app's default: a page's limit covers launching the browser, which a loaded CI
      // machine can take seconds for (3 s left a good page little room); the stuck page waits it out.
      pageTimeoutMs: 10_000,
      runTimeoutMs: 20_000,
      concurrency: 1,
      maxHeight: 2000,
      memoryMb: 512,
      log: createLogger({ level: "silent" }),
    });
  });
  afterAll(async () => {
    await previews?.close();
  });

  it("gives up on a page that never finishes loading, and shows the next page", async () => {
    const stuck = page("/w/index.html", "<title>Stuck</title><script>for (;;) {}</script>");
    expect(await previews.render([stuck])).toEqual([]);
    expect(previews.stats.failed).toBe(1);
    const shots = await previews.render([GOOD]);
    expect(shots.map((s) => s.title)).toEqual(["Good"]);
  });

  it("launches the browser again after it died", async () => {
    await previews.render([GOOD]);
    const launches = previews.stats.launches;
    const pids = childBrowsers();
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) process.kill(pid, "SIGKILL");
    await expect.poll(() => childBrowsers().filter((p) => pids.includes(p))).toEqual([]);
    const shots = await previews.render([GOOD]);
    expect(shots.map((s) => s.title)).toEqual(["Good"]);
    expect(previews.stats.launches).toBe(launches + 1);
  });

  it(`hands a page at most ${PAGE_BYTES_MAX / 2 ** 20} MiB of the run's files, however often it asks`, async () => {
    // Each body crosses to the browser as base64 in a JSON message: several copies in memory.
    const big = {
      path: "/w/big.png",
      read: async () => Buffer.alloc(10 * 2 ** 20),
      type: "image/png",
    };
    const asks = page(
      "/w/index.html",
      '<title>Asks</title><img src="big.png?1"><img src="big.png?2"><img src="big.png?3">',
    );
    const refused = previews.stats.refused;
    const shots = await previews.render([asks, big]);
    expect(shots.map((s) => s.title)).toEqual(["Asks"]);
    // The first 10 MiB is handed over; the next two would pass the page's 16 MiB.
    expect(previews.stats.refused - refused).toBe(2);
  });

  it("shows at most the run's page limit, and serves two runs at once from one browser", async () => {
    const pages = ["a", "b", "c"].map((n) => page(`/w/${n}.html`, `<title>${n}</title>x`));
    const launches = previews.stats.launches;
    const [one, two] = await Promise.all([previews.render(pages), previews.render([GOOD])]);
    expect(one.map((s) => s.title)).toEqual(["a", "b"]);
    expect(two.map((s) => s.title)).toEqual(["Good"]);
    expect(previews.stats.launches).toBe(launches);
  });
});

/**
 * Scripts that allocate 1.5 GB, then hold it and spin (the test machine's own bound: far past
 * the caps, short of hurting the machine). Without a cap such a page holds it all until its time
 * limit; with one it crashes first.
 */
const HOG_LIMIT_MB = 1536;
const hog = (title: string, allocate: string) =>
  page(
    `/w/${title}.html`,
    `<title>${title}</title><script>const kept = []; let mb = 0;
      while (mb < ${HOG_LIMIT_MB}) { ${allocate} }
      for (;;) {}</script>`,
  );
/** JavaScript objects: arrays of numbers, ~0.8 MB each (V8's heap). */
const OBJECTS = hog("objects", "kept.push(new Array(100000).fill(mb)); mb += 0.8;");
/** ArrayBuffers, written so that their pages are resident: outside V8's heap. */
const BUFFERS = hog("buffers", "kept.push(new Uint8Array(16 << 20).fill(1)); mb += 16;");

describe.skipIf(!hasChromium)("a page that allocates without end", () => {
  // Room for a loaded machine to reach the cap; without one the page times out at this limit.
  const PAGE_TIMEOUT_MS = 20_000;
  const lines: string[] = [];
  const log = createLogger({
    level: "warn",
    destination: new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  });
  const open = (memory: "heap cap only" | "heap and renderer caps") =>
    new ChromiumPreviews({
      chromium: async () => chromium,
      executablePath: CHROMIUM,
      sandbox: process.getuid?.() !== 0,
      maxPages: 2,
      pageTimeoutMs: PAGE_TIMEOUT_MS,
      runTimeoutMs: PAGE_TIMEOUT_MS,
      concurrency: 2,
      maxHeight: 2000,
      memoryMb: 512,
      // No process table: only V8's heap limit can end the page.
      ...(memory === "heap cap only" ? { processes: undefined } : {}),
      log,
    });
  /** Why the page's preview failed, as logged. */
  const failures = () =>
    lines
      .map((l) => JSON.parse(l) as { msg: string; err?: { message: string } })
      .filter((l) => l.msg === "page preview failed")
      .map((l) => l.err?.message ?? "");

  /** Renders the hog beside a good page, at once: the pictures of each. */
  function beside(previews: ChromiumPreviews, hogPage: typeof OBJECTS) {
    lines.length = 0;
    return Promise.all([previews.render([hogPage]), previews.render([GOOD])]);
  }

  it("crashes a page whose script keeps allocating objects at V8's heap limit, before its time limit", async () => {
    const previews = open("heap cap only");
    try {
      const [bad, good] = await beside(previews, OBJECTS);
      expect(bad).toEqual([]);
      // Crashed, not timed out: the heap limit ended it (1.5 GB would have held till the end).
      expect(failures()).toEqual([expect.stringMatching(/crashed/i)]);
      expect(good.map((s) => s.title)).toEqual(["Good"]);
      // The browser lives on: the next page is shown by the same one.
      const launches = previews.stats.launches;
      expect((await previews.render([GOOD])).map((s) => s.title)).toEqual(["Good"]);
      expect(previews.stats.launches).toBe(launches);
    } finally {
      await previews.close();
    }
  }, 60_000);

  it("ends a renderer whose page holds ArrayBuffers past PREVIEW_MEMORY_MB, and only that one", async () => {
    const previews = open("heap and renderer caps");
    try {
      const [bad, good] = await beside(previews, BUFFERS);
      expect(bad).toEqual([]);
      expect(previews.endedForMemory).toBe(1);
      expect(failures()).toEqual([expect.stringMatching(/crashed/i)]);
      expect(lines.some((l) => l.includes("held more than PREVIEW_MEMORY_MB (512 MB)"))).toBe(true);
      expect(good.map((s) => s.title)).toEqual(["Good"]);
      const launches = previews.stats.launches;
      expect((await previews.render([GOOD])).map((s) => s.title)).toEqual(["Good"]);
      expect(previews.stats.launches).toBe(launches);
    } finally {
      await previews.close();
    }
  }, 60_000);
});
