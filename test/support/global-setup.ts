/**
 * The test run's global setup: the Redis server and the Chromium the suites need, so that
 * `npm test` runs on a developer's machine what it runs in CI. Redis: TEST_REDIS_URL when set,
 * else a throwaway `redis-server` (if one is on PATH) on a free loopback port, stopped at the
 * end. Chromium: CHROMIUM_PATH when set, else the browser the app would find on PATH. What is missing is null, and
 * the suites needing it skip (test/support/needs.ts).
 */
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import type { TestProject } from "vitest/node";
import { findBrowser } from "../../src/preview/find-browser.ts";
import { RedisServer } from "./redis-server.ts";

const searchPath = (): string[] => (process.env.PATH ?? "").split(delimiter).filter((d) => d);

/** The path of `command` on PATH, or undefined. */
function onPath(command: string): string | undefined {
  for (const dir of searchPath()) {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return join(dir, command);
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The browser the app itself would drive (src/preview/find-browser.ts), or null. */
function findChromium(): string | null {
  const found = findBrowser(process.env.CHROMIUM_PATH || undefined, searchPath());
  return "path" in found ? found.path : null;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let server: RedisServer | undefined;
  let redisUrl = process.env.TEST_REDIS_URL || null;
  if (redisUrl === null && onPath("redis-server")) {
    // A free port may be taken between finding it and redis-server binding it: try another.
    for (let attempt = 1; server === undefined; attempt++) {
      const candidate = new RedisServer();
      try {
        await candidate.start();
        server = candidate;
      } catch (err) {
        await candidate.close();
        if (attempt === 3) throw err;
      }
    }
    redisUrl = server.url;
  }
  project.provide("redisUrl", redisUrl);
  project.provide("chromiumPath", findChromium());
  return async () => {
    await server?.close();
  };
}
