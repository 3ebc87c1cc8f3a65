/**
 * Opening the Redis store at start-up: it waits for Redis a bounded time and says why it gave
 * up (nothing listening, or a server that accepts connections and never answers).
 */
import { once } from "node:events";
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testRedisUrl } from "../support/needs.ts";
import { openRedisStore, RedisUnreachableError } from "../../src/store/redis.ts";
import { freePort } from "../support/cluster.ts";

const redisUrl = testRedisUrl();

const PASSWORD = "redis-pass-never-printed";

/** Opens the store and returns how it failed, and how long that took. */
async function failureOf(url: string, connectTimeoutMs: number) {
  const started = performance.now();
  const error = await openRedisStore(url, () => {}, { connectTimeoutMs }).then(
    async (store) => {
      await store.close();
      throw new Error("expected the store not to open");
    },
    (err: unknown) => err,
  );
  return { error, ms: performance.now() - started };
}

describe("opening the Redis store at start-up", () => {
  let silent: Server;
  const sockets = new Set<Socket>();
  let silentPort: number;

  beforeAll(async () => {
    // Accepts every connection, reads what it is sent, never answers.
    silent = createServer((socket) => {
      socket.resume();
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    silentPort = (silent.address() as { port: number }).port;
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    silent.close();
    await once(silent, "close");
  });

  it("gives up within its timeout when nothing listens, naming Redis and where, never the password", async () => {
    const port = await freePort();
    const { error, ms } = await failureOf(`redis://:${PASSWORD}@127.0.0.1:${port}`, 600);
    expect(error).toBeInstanceOf(RedisUnreachableError);
    const message = (error as Error).message;
    expect(message).toBe(
      `Cannot connect to Redis at 127.0.0.1:${port} within 600 ms (ECONNREFUSED): check REDIS_URL, that Redis runs and is reachable from here, and its password.`,
    );
    expect(message).not.toContain(PASSWORD);
    // Retried until the deadline (Redis may still be starting), not a moment longer.
    expect(ms).toBeGreaterThanOrEqual(590);
    expect(ms).toBeLessThan(3000);
  });

  it("gives up within its timeout on a server that accepts the connection and never answers", async () => {
    const { error, ms } = await failureOf(
      `redis://user:${PASSWORD}@127.0.0.1:${silentPort}/0`,
      500,
    );
    expect(error).toBeInstanceOf(RedisUnreachableError);
    const message = (error as Error).message;
    expect(message).toContain(`Redis at 127.0.0.1:${silentPort} within 500 ms`);
    expect(message).toContain("it accepted the connection but never answered");
    expect(message).not.toContain(PASSWORD);
    expect(message).not.toContain("user");
    expect(ms).toBeLessThan(3000);
    // The client was dropped: it does not keep the connection open behind the error.
    await expect.poll(() => sockets.size, { timeout: 2000 }).toBe(0);
  });

  it.skipIf(!redisUrl)("opens at once when Redis answers", async () => {
    const store = await openRedisStore(redisUrl ?? "", () => {}, {
      connectTimeoutMs: 2000,
    });
    expect(await store.ping()).toBe(true);
    await store.close();
  });
});
