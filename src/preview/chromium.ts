/**
 * PagePreviews on a headless Chromium (playwright-core). The pages are untrusted: each opens in a
 * fresh context with no network (the run's files served from memory), no downloads, pop-ups,
 * dialogs or permissions, and a time limit. One browser per process, launched on first use,
 * relaunched after it died, closed when idle.
 */
import { randomUUID } from "node:crypto";
import { lookup } from "mime-types";
import type { Logger } from "pino";
import type {
  Browser,
  BrowserContext,
  BrowserContextOptions,
  BrowserType,
  Page,
  Route,
} from "playwright-core";
import type { PreviewConfig } from "../config/features.ts";
import type { PagePreviews, SiteFile, UploadItem } from "../runs/ports.ts";
import { ByteBudget } from "../util/byte-budget.ts";
import { withDeadline } from "../util/deadline.ts";
import { type ProcessTable, procTable, RendererMemoryCap } from "./renderer-memory.ts";
import {
  fileFor,
  pagesOf,
  pageUrl,
  previewNames,
  previewTitle,
  type Site,
  siteOf,
  sitePath,
} from "./site.ts";

const VIEWPORT = { width: 1280, height: 800 } as const;

// Run before a page's scripts: Playwright keeps a page's console messages (200 of them, whatever
// their size) in this process, so its console says nothing.
const SILENT_CONSOLE = `for (const k of Object.keys(console)) {
  if (typeof console[k] === "function") console[k] = () => undefined;
}`;

/** The most bytes of the run's files one page is handed, all its requests together. */
export const PAGE_BYTES_MAX = 16 * 1024 * 1024;

/** The browser (and its memory) goes after this long without a page. */
const IDLE_CLOSE_MS = 5 * 60_000;

/**
 * Chromium's own switches: nothing in the background, and a network that goes nowhere for
 * whatever routing does not see (WebRTC, prefetches): every connection goes to a proxy on a
 * closed port, loopback included, and no host name resolves.
 */
const ARGS = [
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--no-first-run",
  "--no-default-browser-check",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-default-apps",
  "--disable-extensions",
  "--disable-sync",
  "--disable-breakpad",
  "--mute-audio",
  "--proxy-server=http://127.0.0.1:9",
  "--proxy-bypass-list=<-loopback>",
  "--host-resolver-rules=MAP * ~NOTFOUND",
  "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
];

/** `memoryMb`: what one page's renderer may hold; V8's heap in it is capped at half of it. */
export interface ChromiumPreviewOptions extends Pick<
  PreviewConfig,
  "memoryMb" | "maxPages" | "pageTimeoutMs" | "runTimeoutMs" | "concurrency" | "maxHeight"
> {
  /** playwright-core's `chromium`, loaded when the first page is shown (it takes ~80 MB). */
  readonly chromium: () => Promise<Pick<BrowserType, "launch">>;
  readonly executablePath: string;
  /** Chromium's sandbox: off only as root, with PREVIEW_ALLOW_NO_SANDBOX. */
  readonly sandbox: boolean;
  /** Default /proc; none: only the heap cap holds. */
  readonly processes?: ProcessTable | undefined;
  readonly log: Logger;
}

export class ChromiumPreviews implements PagePreviews {
  readonly #o: ChromiumPreviewOptions;
  /** One unit per page being shown. */
  readonly #slots: ByteBudget;
  #browser: Promise<Browser> | undefined;
  #idle: NodeJS.Timeout | undefined;
  #closed = false;
  /** For the memory cap to find this previewer's renderers. */
  readonly #marker = `--task-agent-previews=${randomUUID()}`;
  readonly #memory: RendererMemoryCap;
  /** What the browser did (`refused`: requests for what is not one of the run's files). */
  readonly stats = { launches: 0, pages: 0, failed: 0, refused: 0 };

  constructor(options: ChromiumPreviewOptions) {
    this.#o = options;
    this.#slots = new ByteBudget(options.concurrency);
    this.#memory = new RendererMemoryCap({
      marker: this.#marker,
      capMb: options.memoryMb,
      table: "processes" in options ? options.processes : procTable(),
      log: options.log,
    });
  }

  get endedForMemory(): number {
    return this.#memory.ended;
  }

  async render(files: readonly SiteFile[]): Promise<UploadItem[]> {
    const site = siteOf(files);
    const pages = pagesOf(site, this.#o.maxPages);
    const out: UploadItem[] = [];
    const until = Date.now() + this.#o.runTimeoutMs;
    for (const page of pages) {
      const left = until - Date.now();
      const log = this.#o.log.child({ page: sitePath(page.path) });
      if (left <= 0 || this.#closed) {
        log.warn("no page preview: the run's preview time is used up");
        break;
      }
      try {
        if (!(await this.#slots.take(1, left))) {
          throw new Error(`no browser slot free within ${left} ms`);
        }
        this.#memory.watch();
        try {
          const ms = Math.min(this.#o.pageTimeoutMs, until - Date.now());
          out.push(...(await this.#shoot(site, page, ms)));
          this.stats.pages += 1;
        } finally {
          this.#slots.give(1);
          this.#armIdle();
        }
      } catch (err) {
        this.stats.failed += 1;
        log.warn({ err }, "page preview failed");
      }
    }
    return out;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#idle);
    this.#memory.rest();
    await this.#closeBrowser();
  }

  /** Within `ms`; the context goes whatever happens. */
  async #shoot(site: Site, page: SiteFile, ms: number): Promise<UploadItem[]> {
    const until = Date.now() + ms;
    const late = () => new Error(`the page took longer than ${ms} ms`);
    // Launching the browser counts too; a context that comes too late is closed unused.
    const opening = this.#newContext();
    let context: BrowserContext;
    try {
      context = await withDeadline(opening, ms, late);
    } catch (err) {
      void opening.then((c) => c.close()).catch(ignore);
      throw err;
    }
    try {
      const left = until - Date.now();
      return await withDeadline(this.#capture(context, site, page, left), left, late);
    } finally {
      await withDeadline(context.close(), 5000, () => new Error("closing the page hung")).catch(
        async (err: unknown) => {
          // A renderer that cannot even be closed: start again with a new browser.
          this.#o.log.warn({ err }, "page preview: restarting the browser");
          await this.#closeBrowser();
        },
      );
    }
  }

  /** A browser found dead (not yet known to be) is replaced once. */
  async #newContext(): Promise<BrowserContext> {
    const options: BrowserContextOptions = {
      viewport: VIEWPORT,
      acceptDownloads: false,
      serviceWorkers: "block",
      permissions: [],
      locale: "en-US",
      colorScheme: "light",
    };
    const browser = await this.#launch();
    try {
      return await browser.newContext(options);
    } catch (err) {
      if (browser.isConnected()) throw err;
      if (this.#browser) await this.#closeBrowser();
      return (await this.#launch()).newContext(options);
    }
  }

  async #capture(
    context: BrowserContext,
    site: Site,
    page: SiteFile,
    ms: number,
  ): Promise<UploadItem[]> {
    const requests = { served: 0, refused: 0, bytes: 0 };
    await context.addInitScript(SILENT_CONSOLE);
    await context.route("**/*", (route) => this.#serve(route, site, page, requests));
    await context.routeWebSocket(
      () => true,
      (ws) => void ws.close().catch(ignore),
    );
    const tab = await context.newPage();
    // Pop-ups and new windows are closed at once; dialogs dismissed; downloads cancelled.
    context.on("page", (p: Page) => {
      if (p !== tab) void p.close().catch(ignore);
    });
    tab.on("dialog", (d) => void d.dismiss().catch(ignore));
    tab.on("download", (d) => void d.cancel().catch(ignore));
    await tab.goto(pageUrl(page), { waitUntil: "load", timeout: ms });
    const title = previewTitle(await tab.title(), page);
    const names = previewNames(page);
    const shot = { type: "png", timeout: ms, animations: "disabled", caret: "hide" } as const;
    const items: UploadItem[] = [
      { filename: names.viewport, bytes: await tab.screenshot(shot), title },
    ];
    const height = await tab.evaluate(
      "Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)",
    );
    if (typeof height === "number" && Number.isFinite(height) && height > VIEWPORT.height) {
      const clip = {
        x: 0,
        y: 0,
        width: VIEWPORT.width,
        height: Math.min(height, this.#o.maxHeight),
      };
      const full = await tab.screenshot({ ...shot, fullPage: true, clip });
      items.push({ filename: names.full, bytes: full, title: `${title} (full page)` });
    }
    this.#o.log.info({ page: sitePath(page.path), ...requests }, "page preview made");
    return items;
  }

  async #serve(
    route: Route,
    site: Site,
    page: SiteFile,
    requests: { served: number; refused: number; bytes: number },
  ): Promise<void> {
    const file = fileFor(site, page, route.request().url());
    try {
      const body = file ? await file.read() : undefined;
      // Each body crosses to the browser as base64 in JSON (several copies in memory).
      if (!file || !body || requests.bytes + body.length > PAGE_BYTES_MAX) {
        this.stats.refused += 1;
        requests.refused += 1;
        await route.abort("blockedbyclient");
        return;
      }
      requests.served += 1;
      requests.bytes += body.length;
      await route.fulfill({
        status: 200,
        body,
        contentType: file.type ?? (lookup(file.path) || "application/octet-stream"),
        headers: { "cache-control": "no-store" },
      });
    } catch {
      // The page (or its context) is gone already.
    }
  }

  #launch(): Promise<Browser> {
    clearTimeout(this.#idle);
    if (this.#closed) return Promise.reject(new Error("page previews are closed"));
    if (this.#browser) return this.#browser;
    const launching = this.#o
      .chromium()
      .then((chromium) =>
        chromium.launch({
          executablePath: this.#o.executablePath,
          headless: true,
          chromiumSandbox: this.#o.sandbox,
          args: [
            ...ARGS,
            // V8's old-space limit per page (MB): a script that keeps allocating crashes there.
            `--js-flags=--max-old-space-size=${heapMb(this.#o.memoryMb)}`,
            this.#marker,
          ],
          timeout: 30_000,
          // The app handles its signals, and closes the browser as it stops.
          handleSIGINT: false,
          handleSIGTERM: false,
          handleSIGHUP: false,
        }),
      )
      .then(
        (browser) => {
          this.stats.launches += 1;
          browser.on("disconnected", () => {
            if (this.#browser !== launching) return;
            this.#browser = undefined;
            this.#o.log.info("page preview browser is gone; the next page starts a new one");
          });
          return browser;
        },
        (err: unknown) => {
          if (this.#browser === launching) this.#browser = undefined;
          throw err;
        },
      );
    this.#browser = launching;
    return launching;
  }

  async #closeBrowser(): Promise<void> {
    const browser = this.#browser;
    this.#browser = undefined;
    if (!browser) return;
    const b = await browser.catch(() => undefined);
    await b?.close().catch(ignore);
  }

  #armIdle(): void {
    clearTimeout(this.#idle);
    if (this.#slots.used > 0) return;
    this.#memory.rest();
    this.#idle = setTimeout(() => void this.#closeBrowser(), IDLE_CLOSE_MS);
    this.#idle.unref();
  }
}

/** The JavaScript heap's share of a renderer's memory cap: half, so V8 ends a script first. */
export function heapMb(memoryMb: number): number {
  return Math.floor(memoryMb / 2);
}

function ignore(): void {}
