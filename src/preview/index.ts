/**
 * Whether page previews are on (PAGE_PREVIEWS, a browser, playwright-core, the sandbox or
 * PREVIEW_ALLOW_NO_SANDBOX), and the previewer; playwright-core is loaded at the first page.
 */
import type { Logger } from "pino";
import type { PreviewConfig } from "../config/features.ts";
import type { PagePreviews } from "../runs/ports.ts";
import { ChromiumPreviews, heapMb } from "./chromium.ts";
import { findBrowser } from "./find-browser.ts";

export interface OpenPreviews {
  readonly previews: (PagePreviews & { close(): Promise<void> }) | undefined;
  /** Whether previews are on, and why not: said once started (a failed start says only why). */
  readonly announce: () => void;
}

/** Not as root, where Chromium refuses to start with its sandbox. */
export function sandboxAllowed(uid: number | undefined): boolean {
  return uid !== 0;
}

const NO_SANDBOX_OFF =
  "page previews are off: the app runs as root, where Chromium's sandbox cannot work, and a " +
  "generated page is untrusted. Run the app as a non-root user (as the Docker image does), or " +
  "set PREVIEW_ALLOW_NO_SANDBOX=1 to accept previews without the sandbox";

export function openPagePreviews(
  config: PreviewConfig,
  logger: Logger,
  uid: number | undefined = process.getuid?.(),
): OpenPreviews {
  const log = logger.child({ component: "page-previews" });
  const off = (say: () => void): OpenPreviews => ({ previews: undefined, announce: say });
  if (!config.enabled) return off(() => log.info("page previews are off (PAGE_PREVIEWS=off)"));
  const found = findBrowser(config.chromiumPath, config.searchPath);
  if ("missing" in found) return off(() => log.info(`page previews are off: ${found.missing}`));
  try {
    import.meta.resolve("playwright-core");
  } catch {
    return off(() =>
      log.warn(
        "page previews are off: playwright-core is not installed (npm ci installs it unless --omit=optional)",
      ),
    );
  }
  const sandbox = sandboxAllowed(uid);
  if (!sandbox && !config.allowNoSandbox) return off(() => log.warn(NO_SANDBOX_OFF));
  const facts = {
    browser: found.path,
    sandbox,
    maxPages: config.maxPages,
    memoryMb: config.memoryMb,
    heapMb: heapMb(config.memoryMb),
  };
  const limits = `a page's renderer up to ${config.memoryMb} MB, its JavaScript heap ${facts.heapMb} MB`;
  return {
    announce: () =>
      sandbox
        ? log.info(facts, `page previews are on (${found.path}, Chromium's sandbox on; ${limits})`)
        : log.warn(
            facts,
            `page previews are on WITHOUT Chromium's sandbox (${found.path}): the app runs as root and PREVIEW_ALLOW_NO_SANDBOX is set; ${limits}`,
          ),
    previews: new ChromiumPreviews({
      ...config,
      chromium: async () => (await import("playwright-core")).chromium,
      executablePath: found.path,
      sandbox,
      log,
    }),
  };
}
