/**
 * What a test file needs from the machine beyond Node: a Redis server and Chromium. The run's
 * global setup (test/support/global-setup.ts) finds or starts them and provides them here; a
 * file that asks for one the machine lacks is marked, and the run's last line
 * (test/support/skipped-reporter.ts) names it with how to enable it.
 */
import { relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { inject, TestRunner } from "vitest";

export type Need = "redis" | "chromium";

declare module "vitest" {
  export interface ProvidedContext {
    /** TEST_REDIS_URL, or the throwaway redis-server the run started; null without either. */
    redisUrl: string | null;
    /** CHROMIUM_PATH, or a chromium found on PATH; null without either. */
    chromiumPath: string | null;
  }
  export interface TaskMeta {
    /** What this file asked for and the machine lacks (its parts needing them are skipped). */
    missing?: Need[];
  }
}

/** Marks the test file being collected as having skipped what needs `need`. */
function markMissing(need: Need): void {
  const meta = TestRunner.getCurrentSuite().file.meta;
  if (!meta.missing?.includes(need)) meta.missing = [...(meta.missing ?? []), need];
}

/** The Redis server the Redis variants run on, or undefined (they are skipped). */
export function testRedisUrl(): string | undefined {
  const url = inject("redisUrl");
  if (url === null) markMissing("redis");
  return url ?? undefined;
}

/** The Chromium the browser tests drive, or undefined (they are skipped). */
export function chromiumPath(): string | undefined {
  const path = inject("chromiumPath");
  if (path === null) markMissing("chromium");
  return path ?? undefined;
}

/**
 * The end-to-end files whose stories depend on the store, each with why: they run on the
 * embedded store and on Redis. Every other end-to-end file runs once, on the embedded store (the
 * default): what it shows is the same on both, and each store's own operations are proved on
 * both by the contract tests under test/store/. (test/e2e/cluster.test.ts and
 * redis-outage.test.ts need Redis itself, and restart.test.ts is the embedded store's restart.)
 */
export const BOTH_STORES: Readonly<Record<string, string>> = {
  "test/e2e/bursts.test.ts":
    "a channel's posting budget is a token bucket in the store (Redis: shared by instances)",
  "test/e2e/edit-budget.test.ts":
    "the chat.update budget is a sliding window in the store (Redis: shared by instances)",
  "test/e2e/stream-budgets.test.ts":
    "the stream budgets live in the store, and another instance finishes a crashed stream",
  "test/e2e/token-refresh.test.ts":
    "a rotating token is refreshed once across two instances: the store holds the single flight",
  "test/e2e/uninstall-workspaces.test.ts":
    "forgetting a workspace finds every record of it in the store's own keys, raw keys checked",
  "test/e2e/workflow-step.test.ts":
    "killed instances: the step is ended once, by the instance that resumes its run from the store",
};

const REPO = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The stores the calling end-to-end file runs on, as [name, REDIS_URL or undefined]: the embedded
 * one always; Redis too when BOTH_STORES names the file and the test run has one (testRedisUrl).
 */
export function storeBackends(): Array<[string, string | undefined]> {
  const embedded: [string, undefined] = ["the embedded store", undefined];
  const file = relative(REPO, TestRunner.getCurrentSuite().file.filepath).split(sep).join("/");
  if (!(file in BOTH_STORES)) return [embedded];
  const redisUrl = testRedisUrl();
  return [embedded, ...(redisUrl ? [["Redis", redisUrl] as [string, string]] : [])];
}
