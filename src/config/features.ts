/** Settings of the optional features: page previews, a mention's thread, suggested prompts. */
import type { z } from "zod";
import { suggestedPrompts } from "./prompts.ts";
import { choice, flag, intFrom, optionalString } from "./values.ts";

export const featuresShape = {
  /** `auto` (default): previews when a Chromium is found; `off`: never. */
  PAGE_PREVIEWS: choice(["auto", "off"], "auto"),
  /** The browser to drive; else chromium, chromium-browser or google-chrome on PATH. */
  CHROMIUM_PATH: optionalString,
  PREVIEW_MAX_PAGES: intFrom(1, 20, 3),
  PREVIEW_PAGE_TIMEOUT_MS: intFrom(1000, 120_000, 10_000),
  PREVIEW_RUN_TIMEOUT_MS: intFrom(1000, 600_000, 30_000),
  PREVIEW_CONCURRENCY: intFrom(1, 16, 2),
  PREVIEW_MAX_HEIGHT: intFrom(800, 16_000, 4000),
  /** Previews without Chromium's sandbox (which fails as root): off unless the operator accepts it. */
  PREVIEW_ALLOW_NO_SANDBOX: flag,
  /** Memory (MB) one page's renderer may hold; its JavaScript heap gets half of it. */
  PREVIEW_MEMORY_MB: intFrom(128, 8192, 512),
  /** `on` (default) or `off`: a mention in a thread sends the thread to the agent. */
  THREAD_CONTEXT: choice(["on", "off"], "on"),
  THREAD_CONTEXT_MESSAGES: intFrom(1, 1000, 50),
  THREAD_CONTEXT_CHARS: intFrom(100, 200_000, 20_000),
  /** How long a mention waits for the conversations.replies budget before it goes alone. */
  THREAD_CONTEXT_WAIT_MS: intFrom(0, 60_000, 5000),
  TASK_SUGGESTED_PROMPTS: suggestedPrompts,
};

export type PreviewConfig = Readonly<ReturnType<typeof featuresFrom>["preview"]>;
export type ThreadContextConfig = Readonly<ReturnType<typeof featuresFrom>["threadContext"]>;

/** `path`: PATH, the directories searched for a browser when CHROMIUM_PATH is not set. */
export function featuresFrom(
  v: z.infer<z.ZodObject<typeof featuresShape>>,
  path: string | undefined,
) {
  return {
    suggestedPrompts: v.TASK_SUGGESTED_PROMPTS,
    preview: {
      enabled: v.PAGE_PREVIEWS === "auto",
      chromiumPath: v.CHROMIUM_PATH,
      searchPath: (path ?? "").split(":").filter((d) => d !== ""),
      maxPages: v.PREVIEW_MAX_PAGES,
      pageTimeoutMs: v.PREVIEW_PAGE_TIMEOUT_MS,
      runTimeoutMs: v.PREVIEW_RUN_TIMEOUT_MS,
      concurrency: v.PREVIEW_CONCURRENCY,
      maxHeight: v.PREVIEW_MAX_HEIGHT,
      allowNoSandbox: v.PREVIEW_ALLOW_NO_SANDBOX,
      memoryMb: v.PREVIEW_MEMORY_MB,
    },
    threadContext: {
      enabled: v.THREAD_CONTEXT === "on",
      maxMessages: v.THREAD_CONTEXT_MESSAGES,
      maxChars: v.THREAD_CONTEXT_CHARS,
      waitMs: v.THREAD_CONTEXT_WAIT_MS,
    },
  };
}
