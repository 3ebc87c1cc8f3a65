/**
 * The playground in a real browser (Debian's chromium driven by playwright-core): a /task streams
 * to completion, Stop stops a run, a thread reply continues, generated files get download links.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Playground, startPlayground } from "../../tools/playground/server.ts";
import { createLogger } from "../../src/log.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
/** The README's screenshot is rewritten only when asked, so a test run leaves the tree clean. */
const UPDATE_SCREENSHOT = process.env.UPDATE_SCREENSHOT === "1";
const SCREENSHOT = join(import.meta.dirname, "../../docs/playground.png");
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const TITLE = hasChromium
  ? "the playground in a browser"
  : `the playground in a browser (SKIPPED: no chromium binary at ${CHROMIUM}; apt-get install chromium)`;
if (!hasChromium) process.stderr.write(`${TITLE}\n`);

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

describe.skipIf(!hasChromium)(TITLE, () => {
  let playground: Playground;
  let context: BrowserContext;
  let page: Page;
  let profile: string;

  beforeAll(async () => {
    playground = await startPlayground({ logger: createLogger({ level: "silent" }) });
    profile = mkdtempSync(join(tmpdir(), "playground-chromium-"));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport: { width: 1280, height: 800 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(playground.url);
  }, 30_000);

  afterAll(async () => {
    await context?.close();
    await playground?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  /** Types into the channel's composer and sends. */
  async function type(text: string): Promise<void> {
    await page.locator("#text").fill(text);
    await page.locator("#composer button[type=submit]").click();
  }

  /** Opens the thread of the bot's message that quotes `fragment`. */
  async function openThreadOf(fragment: string): Promise<void> {
    const parent = page.locator("#messages .msg", { hasText: fragment });
    await parent.locator(".replies").click({ timeout: 15_000 });
    await expect.poll(() => page.locator("#thread").isVisible()).toBe(true);
  }

  const thread = () => page.locator("#thread-messages");

  it("streams a /task answer to completion in its thread", async () => {
    await type("/task Write a short note about rivers");
    await openThreadOf("Write a short note about rivers");
    await thread().locator(".context", { hasText: "Completed in" }).waitFor({ timeout: 20_000 });
    const answer = await thread().locator(".md").first().innerText();
    expect(answer.trim().length).toBeGreaterThan(20);
  }, 40_000);

  it("continues the conversation with a reply in the thread", async () => {
    await page.locator("#thread-text").fill("Now make it shorter");
    await page.locator("#thread-composer button[type=submit]").click();
    await thread().locator(".msg", { hasText: "Now make it shorter" }).waitFor();
    await expect
      .poll(() => thread().locator(".context", { hasText: "Completed in" }).count(), {
        timeout: 20_000,
      })
      .toBe(2);
  }, 40_000);

  it("takes 👍 under a finished answer and says privately that it counted", async () => {
    await type("/task Write a two-line poem about tea");
    await openThreadOf("Write a two-line poem about tea");
    await thread().locator(".context", { hasText: "Completed in" }).waitFor({ timeout: 20_000 });
    await thread().locator(".feedback button", { hasText: "👍" }).last().click();
    await page
      .locator("#messages .ephemeral", { hasText: "your feedback" })
      .first()
      .waitFor({ timeout: 10_000 });
  }, 40_000);

  it("stops a running task with the Stop button", async () => {
    await type("/task Tell a very long story [sim:delay=400] [sim:length=6000]");
    await openThreadOf("Tell a very long story");
    const stop = thread().getByRole("button", { name: "Stop" });
    await stop.click({ timeout: 15_000 });
    await thread().locator(".context", { hasText: "Stopped by @you" }).waitFor({ timeout: 15_000 });
    expect(await thread().locator(".context", { hasText: "Completed in" }).count()).toBe(0);
  }, 40_000);

  it("shows generated files with download links, and takes the README's screenshot", async () => {
    await type("/task Build a landing page [sim:files=2]");
    await openThreadOf("Build a landing page");
    await thread().locator(".context", { hasText: "Completed in" }).waitFor({ timeout: 20_000 });
    const links = thread().locator(".file a[download]");
    await expect.poll(() => links.count(), { timeout: 10_000 }).toBe(2);
    const download = await fetch(
      new URL((await links.first().getAttribute("href")) ?? "", playground.url),
    );
    expect(download.status).toBe(200);
    expect((await download.arrayBuffer()).byteLength).toBeGreaterThan(0);
    const png = await page.screenshot();
    expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    // The IHDR chunk holds the image's width and height: the page's viewport.
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 800]);
    if (UPDATE_SCREENSHOT) writeFileSync(SCREENSHOT, png);
  }, 40_000);

  it("answers a mention in #general and a DM with an attached file", async () => {
    await type("@Task Agent Summarize our rivers");
    const mention = page.locator("#messages .msg", { hasText: "@Task Agent Summarize our rivers" });
    await mention.locator(".replies").click({ timeout: 15_000 });
    await thread().locator(".context", { hasText: "Completed in" }).waitFor({ timeout: 20_000 });

    await page.locator("#dms li", { hasText: "Task Agent" }).click();
    await page.locator("#file").setInputFiles({
      name: "brief.txt",
      mimeType: "text/plain",
      buffer: Buffer.from("Rivers flow downhill."),
    });
    await type("Read my brief");
    const dm = page.locator("#messages .msg", { hasText: "Read my brief" });
    await dm.locator(".replies").click({ timeout: 15_000 });
    await thread().locator(".context", { hasText: "Completed in" }).waitFor({ timeout: 20_000 });
    await dm.locator(".attached", { hasText: "brief.txt" }).waitFor();
    // The DM reached the service as a task of its own, with the file attached in the browser.
    const run = playground.sim.runs().find((r) => r.promptText.includes("Read my brief"));
    expect(run?.request.files.map((f) => [f.name, f.size])).toEqual([
      ["brief.txt", "Rivers flow downhill.".length],
    ]);
    await page.locator("#channels li", { hasText: "general" }).click();
  }, 60_000);

  it("opens the New task form from /task, shows what to fix, and starts the task it describes", async () => {
    await page.locator("#channels li", { hasText: "general" }).click();
    await type("/task");
    const form = page.locator("#overlay form.modal");
    await form.waitFor({ timeout: 10_000 });
    await expect(form.locator("header").textContent()).resolves.toBe("New task");
    // Nothing written: the app answers inside the form.
    await form.locator("button[type=submit]").click();
    await form.locator(".error", { hasText: "Write what the agent should do" }).waitFor();
    await form.locator("textarea").fill("Draw a lighthouse [sim:length=200]");
    await form.locator("select[data-block=effort]").selectOption("high");
    await form.locator("input[type=checkbox][value=thinking]").check();
    await form.locator("input[type=file]").setInputFiles({
      name: "sketch.txt",
      mimeType: "text/plain",
      buffer: Buffer.from("a tall tower"),
    });
    await form.locator("button[type=submit]").click();
    await page.locator("#overlay").waitFor({ state: "hidden" });
    const run = await playground.slack.waitFor(
      () => playground.sim.runs().find((r) => r.promptText === "Draw a lighthouse"),
      { description: "the form's task on the service" },
    );
    expect(run.request).toMatchObject({ reasoningEffort: "high", enableThinking: true });
    expect(run.request.files.map((f) => f.name)).toEqual(["sketch.txt"]);
  }, 40_000);

  it("shows the bot's private answers as only visible to you", async () => {
    await type("/task help");
    await page
      .locator("#messages .ephemeral .only", { hasText: "Only visible to you" })
      .first()
      .waitFor({ timeout: 10_000 });
  }, 20_000);
});
