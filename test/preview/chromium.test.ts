/**
 * The real previewer on Debian's chromium: a page that never finishes is cut at its time limit
 * and the browser still serves the next page; a browser that died is launched again; a run's
 * pages are capped; two renders at once share one browser.
 */
import { execFileSync } from "node:child_process";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChromiumPreviews } from "../../src/preview/chromium.ts";
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

  it("shows at most the run's page limit, and serves two runs at once from one browser", async () => {
    const pages = ["a", "b", "c"].map((n) => page(`/w/${n}.html`, `<title>${n}</title>x`));
    const launches = previews.stats.launches;
    const [one, two] = await Promise.all([previews.render(pages), previews.render([GOOD])]);
    expect(one.map((s) => s.title)).toEqual(["a", "b"]);
    expect(two.map((s) => s.title)).toEqual(["Good"]);
    expect(previews.stats.launches).toBe(launches);
  });
});
