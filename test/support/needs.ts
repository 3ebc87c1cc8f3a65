/**
 * What a test file needs from the machine beyond Node: a Redis server and Chromium. The run's
 * global setup (test/support/global-setup.ts) finds or starts them and provides them here; a
 * file that asks for one the machine lacks is marked, and the run's last line
 * (test/support/skipped-reporter.ts) names it with how to enable it.
 */
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
 * The stores the end-to-end suites run on: the embedded one always, Redis when the test run has
 * one (testRedisUrl): [name, REDIS_URL or undefined].
 */
export function storeBackends(): Array<[string, string | undefined]> {
  const redisUrl = testRedisUrl();
  return [
    ["the embedded store", undefined],
    ...(redisUrl ? [["Redis", redisUrl] as [string, string]] : []),
  ];
}
