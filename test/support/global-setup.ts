/**
 * The test run's global setup: the Redis server and the Chromium the suites need, so that
 * `npm test` runs on a developer's machine what it runs in CI. Redis: TEST_REDIS_URL when set,
 * else a throwaway `redis-server` (if one is on PATH) on a free loopback port, stopped at the
 * end. Chromium: CHROMIUM_PATH when set, else `chromium` on PATH. What is missing is null, and
 * the suites needing it skip (test/support/needs.ts).
 */
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import type { TestProject } from "vitest/node";
import { RedisServer } from "./redis-server.ts";

/** The path of `command` on PATH, or undefined. */
function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, command), constants.X_OK);
      return join(dir, command);
    } catch {
      // not here
    }
  }
  return undefined;
}

function findChromium(): string | null {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) return configured;
  return onPath("chromium") ?? onPath("chromium-browser") ?? null;
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
