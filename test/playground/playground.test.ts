/**
 * The playground in a real browser (Debian's chromium driven by playwright-core): a /task streams
 * to completion, Stop stops a run, a thread reply continues, generated files get download links;
 * and it behaves like Slack where a first look notices: a form keeps what you typed when it
 * shows what to fix, private messages sit in time order and can be dismissed, views show
 * mrkdwn as Slack does, the page says where answers come from, and it has a favicon.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Playground, startPlayground } from "../../tools/playground/server.ts";
import { createLogger } from "../../src/log.ts";
import type { Simulator } from "../../tools/simulator/server.ts";
import { chromiumPath } from "../support/needs.ts";

const CHROMIUM = chromiumPath();
const hasChromium = CHROMIUM !== undefined;
/** The README's screenshot is rewritten only when asked, so a test run leaves the tree clean. */
const UPDATE_SCREENSHOT = process.env.UPDATE_SCREENSHOT === "1";
const SCREENSHOT = join(import.meta.dirname, "../../docs/playground.png");
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const TITLE = "the playground in a browser";

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
  let sim: Simulator;
  let context: BrowserContext;
  let page: Page;
  let profile: string;

  beforeAll(async () => {
    playground = await startPlayground({
      logger: createLogger({ level: "silent" }),
      browser: {
        PATH: "",
        ...(CHROMIUM ? { CHROMIUM_PATH: CHROMIUM } : {}),
        // This machine and CI run as root, where previews need the operator's opt-in.
        PREVIEW_ALLOW_NO_SANDBOX: "1",
      },
    });
    if (!playground.sim) throw new Error("the playground started without its simulator");
    sim = playground.sim;
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
    // A reply's button answers privately in its thread, as Slack shows it.
    await thread()
      .locator(".ephemeral", { hasText: "your feedback" })
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

  it("runs the text as Workflow Builder's Run a task step and shows the step's outputs", async () => {
    await page.locator("#text").fill("Weekly digest [sim:length=80]");
    await page.getByRole("button", { name: "Run as a workflow step" }).click();
    await openThreadOf("Weekly digest");
    await thread().locator(".context", { hasText: "Completed in" }).waitFor({ timeout: 20_000 });
    const step = page.locator("#steps li", { hasText: "✅ completed: Weekly digest" });
    await step.locator("summary").click({ timeout: 15_000 });
    // The answer as the step passes it on, after its status and the thread's link.
    await expect.poll(() => step.locator("dd").nth(2).textContent()).toContain("Weekly digest");
    expect(await step.locator("dt").allTextContents()).toEqual(["status", "thread_link", "answer"]);
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

  it("shows a generated page's preview inline in the thread, titled after the page", async () => {
    await type("/task Build a bakery site [sim:site]");
    await openThreadOf("Build a bakery site");
    await thread().locator(".context", { hasText: "Completed in" }).waitFor({ timeout: 30_000 });
    const preview = thread().locator('img.inline-image[alt="Landing page: Build a bakery site"]');
    await preview.waitFor({ timeout: 10_000 });
    // The browser loaded the screenshot itself: a 1280-pixel-wide image.
    await expect
      .poll(() => preview.evaluate((img) => (img as { naturalWidth: number }).naturalWidth))
      .toBe(1280);
    // The page itself is offered for download only, never shown from the playground's origin.
    expect(await thread().locator('img.inline-image[alt="index.html"]').count()).toBe(0);
  }, 60_000);

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
    const run = sim.runs().find((r) => r.promptText.includes("Read my brief"));
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
      () => sim.runs().find((r) => r.promptText === "Draw a lighthouse"),
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

  it("keeps what you entered in the New task form when it shows what to fix", async () => {
    await page.locator("#channels li", { hasText: "general" }).click();
    await type("/task");
    const form = page.locator("#overlay form.modal");
    await form.waitFor({ timeout: 10_000 });
    const prompt = form.locator("textarea");
    const model = form.locator("input[data-block=model]");
    await prompt.fill("[efort=high] Paint a harbour");
    await model.fill("sonnet-mini");
    await form.locator("input[type=checkbox][value=thinking]").check();
    await form.locator("button[type=submit]").click();
    await form.locator(".error", { hasText: "Unknown option" }).waitFor({ timeout: 10_000 });
    // As in Slack after `response_action: errors`: every input still holds what was entered.
    expect(await prompt.inputValue()).toBe("[efort=high] Paint a harbour");
    expect(await model.inputValue()).toBe("sonnet-mini");
    expect(await form.locator("input[value=thinking]").isChecked()).toBe(true);
    // Only the misspelling needs fixing; the rest goes as it was kept.
    await prompt.fill("[effort=high] Paint a harbour [sim:length=100]");
    await form.locator("button[type=submit]").click();
    await page.locator("#overlay").waitFor({ state: "hidden" });
    const run = await playground.slack.waitFor(
      () => sim.runs().find((r) => r.promptText === "Paint a harbour"),
      { description: "the corrected form's task on the service" },
    );
    expect(run.request).toMatchObject({
      modelName: "sonnet-mini",
      reasoningEffort: "high",
      enableThinking: true,
    });
  }, 40_000);

  /** The channel's messages as shown, top to bottom ("P:" marks one only you see). */
  const shown = () =>
    page
      .locator("#messages > .msg")
      .evaluateAll((els) =>
        els.map(
          (el) =>
            `${el.classList.contains("ephemeral") ? "P: " : ""}${el.querySelector(".body")?.textContent?.trim() ?? ""}`,
        ),
      );
  /** What follows the last message that reads exactly `text`. */
  const after = async (text: string, count: number) => {
    const all = await shown();
    const at = all.lastIndexOf(text);
    return at < 0 ? [] : all.slice(at + 1, at + 1 + count).map((t) => t.slice(0, 9));
  };

  it("shows private messages in time order, the bare mention's usage included, and dismisses them", async () => {
    await page.locator("#channels li", { hasText: "general" }).click();
    await type("@Task Agent");
    await expect.poll(() => after("@Task Agent", 1), { timeout: 10_000 }).toEqual(["P: Usage:"]);
    await type("Thanks, noted");
    await expect
      .poll(() => after("@Task Agent", 2), { timeout: 10_000 })
      .toEqual(["P: Usage:", "Thanks, n"]);
    // A slash command's private answer also sits where it came, not under later messages.
    await type("/task help");
    await expect
      .poll(async () => (await shown()).at(-1)?.slice(0, 9), { timeout: 10_000 })
      .toBe("P: Usage:");
    await type("One more thing");
    await expect
      .poll(async () => (await shown()).slice(-2).map((t) => t.slice(0, 9)), { timeout: 10_000 })
      .toEqual(["P: Usage:", "One more "]);

    const usage = page.locator("#messages > .msg").filter({
      has: page.locator(".body", { hasText: "Usage" }),
    });
    const before = await usage.count();
    await page
      .locator("#messages > .msg", { hasText: "Thanks, noted" })
      .locator("xpath=preceding-sibling::div[1]")
      .getByRole("button", { name: "Dismiss message" })
      .click();
    await expect.poll(() => after("@Task Agent", 1)).toEqual(["Thanks, n"]);
    expect(await usage.count()).toBe(before - 1);
    // Gone for good: a reload does not bring it back.
    await page.reload();
    await page.locator("#messages .msg", { hasText: "Thanks, noted" }).waitFor();
    expect(await after("@Task Agent", 1)).toEqual(["Thanks, n"]);
  }, 40_000);

  it("shows Slack's mrkdwn in the History view: emoji, no escapes left, fenced code as code", async () => {
    await page.locator("#channels li", { hasText: "general" }).click();
    await type("/task");
    const form = page.locator("#overlay form.modal");
    await form.waitFor({ timeout: 10_000 });
    await form
      .locator("textarea")
      .fill("Compare a > b & c\n```\nconst x = 1 < 2;\n```\n[sim:length=150]");
    await form.locator("button[type=submit]").click();
    await page.locator("#overlay").waitFor({ state: "hidden" });
    await openThreadOf("Compare a");
    await thread().locator(".context", { hasText: "Completed in" }).waitFor({ timeout: 20_000 });
    await thread().getByRole("button", { name: "History" }).last().click();
    const history = page.locator("#overlay form.modal", { hasText: "The agent" });
    await history.waitFor({ timeout: 15_000 });
    const text = await history.innerText();
    expect(text).toContain("\u{1F916} The agent"); // :robot_face:
    expect(text).toContain("\u{1F464} You asked"); // :bust_in_silhouette:
    expect(text).not.toMatch(/:robot_face:|:bust_in_silhouette:/);
    expect(text).toContain("Compare a > b & c");
    expect(text).not.toMatch(/&gt;|&lt;|&amp;/);
    expect(await history.locator("pre code").first().textContent()).toBe("const x = 1 < 2;");
    await history.getByRole("button", { name: "Close" }).click();
    await page.locator("#overlay").waitFor({ state: "hidden" });
  }, 40_000);

  it("says the answers come from the simulator, and how to connect the real service", async () => {
    const note = page.locator("#service-note");
    await expect.poll(() => note.isVisible()).toBe(true);
    const text = await note.innerText();
    expect(text).toContain("simulator");
    expect(text).toContain("TASK_API_URL=");
    expect(text).toContain("TASK_API_KEY=");
  });

  it("loads with a favicon and nothing missing", async () => {
    const fresh = await context.newPage();
    const failed: string[] = [];
    fresh.on("response", (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
    });
    await fresh.goto(playground.url);
    await fresh.locator("#channels li", { hasText: "general" }).waitFor();
    const href = await fresh.locator("link[rel=icon]").getAttribute("href");
    for (const path of [href ?? "", "/favicon.ico"]) {
      const icon = await fetch(new URL(path, playground.url));
      expect(icon.status, path).toBe(200);
      expect(icon.headers.get("content-type"), path).toBe("image/svg+xml");
      expect(await icon.text(), path).toContain("<svg");
    }
    expect(failed).toEqual([]);
    await fresh.close();
  });
});
