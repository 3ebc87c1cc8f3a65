/**
 * Token buckets: the arithmetic in memory, and the Redis script giving exactly the same answers,
 * atomically across clients (the Redis part runs when the test run has a Redis: test/support/needs.ts).
 */
import { randomUUID } from "node:crypto";
import { createClient } from "@redis/client";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { testRedisUrl } from "../support/needs.ts";
import {
  type BucketSpec,
  connectRedisBuckets,
  MemoryTokenBuckets,
  RedisTokenBuckets,
  type ScriptClient,
  type TokenBuckets,
} from "../../src/slack/scheduler/token-buckets.ts";

/** The wait a take answers (0: taken). */
const take = async (b: TokenBuckets, specs: readonly BucketSpec[], now: number) =>
  (await b.take(specs, now)).wait;

const T0 = 1_700_000_000_000;
/** 1 token per second, 3 at once. */
const spec = (key: string): BucketSpec => ({ key, ratePerMs: 1 / 1000, burst: 3 });

describe("MemoryTokenBuckets", () => {
  it("lets a burst out, then one token per refill interval", async () => {
    const b = new MemoryTokenBuckets();
    const s = [spec("a")];
    expect([await take(b, s, T0), await take(b, s, T0), await take(b, s, T0)]).toEqual([0, 0, 0]);
    expect(await take(b, s, T0)).toBe(1000);
    expect(await take(b, s, T0 + 400)).toBe(600);
    expect(await take(b, s, T0 + 1000)).toBe(0);
    expect(await take(b, s, T0 + 1000)).toBe(1000);
    // A quiet spell refills up to the burst, not beyond.
    for (let i = 0; i < 3; i++) expect(await take(b, s, T0 + 60_000)).toBe(0);
    expect(await take(b, s, T0 + 60_000)).toBe(1000);
  });

  it("forgets a workspace's buckets: they are full again, others keep their state", async () => {
    const b = new MemoryTokenBuckets();
    const a = [spec("{T0A}:chat.update")];
    const other = [spec("{T0B}:chat.update")];
    for (let i = 0; i < 3; i++) await take(b, [...a, ...other], T0);
    await b.forget("{T0A}:");
    expect(await take(b, a, T0)).toBe(0);
    expect(await take(b, other, T0)).toBe(1000);
  });

  it("takes from several buckets all or nothing", async () => {
    const b = new MemoryTokenBuckets();
    const team: BucketSpec = { key: "team", ratePerMs: 1 / 1000, burst: 1 };
    expect(await take(b, [team, spec("c1")], T0)).toBe(0);
    // The team bucket is empty: c2's bucket is not spent on a refused call.
    expect(await take(b, [team, spec("c2")], T0)).toBe(1000);
    for (let i = 0; i < 3; i++) expect(await take(b, [spec("c2")], T0)).toBe(0);
    expect(await take(b, [spec("c2")], T0)).toBe(1000);
  });
});

const redisUrl = testRedisUrl();

describe.skipIf(!redisUrl)("RedisTokenBuckets", () => {
  const url = redisUrl ?? "";
  const opened: { close(): Promise<void> }[] = [];
  const connect = async (prefix: string, onError?: (err: unknown) => void) => {
    const b = await connectRedisBuckets(url, onError ? { prefix, onError } : { prefix });
    opened.push(b);
    return b;
  };
  afterAll(async () => {
    await Promise.all(opened.map((b) => b.close()));
  });

  it("answers exactly what the memory buckets answer, for any sequence of takes", async () => {
    const redis = await connect(`test-buckets:${randomUUID()}:`);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            advanceMs: fc.integer({ min: 0, max: 3000 }),
            keys: fc.subarray(["a", "b", "c"], { minLength: 1 }),
          }),
          { minLength: 1, maxLength: 40 },
        ),
        async (steps) => {
          run += 1;
          const memory = new MemoryTokenBuckets();
          const rates: Record<string, BucketSpec> = {
            a: { key: `${run}:a`, ratePerMs: 50 / 60_000, burst: 3 },
            b: { key: `${run}:b`, ratePerMs: 0.7 / 1000, burst: 5 },
            c: { key: `${run}:c`, ratePerMs: 16 / 60_000, burst: 2 },
          };
          let now = T0;
          for (const step of steps) {
            now += step.advanceMs;
            const specs = step.keys.map((k) => rates[k] ?? spec(k));
            expect(await take(redis, specs, now)).toBe(await take(memory, specs, now));
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  it("is atomic: two clients racing for one bucket get exactly its tokens between them", async () => {
    const prefix = `test-buckets:${randomUUID()}:`;
    const [one, two] = await Promise.all([connect(prefix), connect(prefix)]);
    if (!one || !two) throw new Error("not connected");
    const s = [{ key: "shared", ratePerMs: 1 / 60_000, burst: 5 }];
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => take(i % 2 === 0 ? one : two, s, T0)),
    );
    expect(answers.filter((w) => w === 0)).toHaveLength(5);
  });

  it("forgets a workspace's buckets (it uninstalled the app) and no other's", async () => {
    const prefix = `test-buckets:${randomUUID()}:`;
    const b = await connect(prefix);
    const keys = [
      "{T0A}:chat.update",
      "{T0A}:chat.postMessage:C1",
      "{T0AB}:chat.update",
      "{T0B}:x",
    ];
    await take(
      b,
      keys.map((k) => spec(k)),
      Date.now(),
    );
    const client = createClient({ url });
    await client.connect();
    try {
      await b.forget("{T0A}:");
      const left: string[] = [];
      for await (const batch of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 100 })) {
        left.push(...batch.map((k) => k.slice(prefix.length)));
      }
      expect(left.sort()).toEqual(["{T0AB}:chat.update", "{T0B}:x"]);
    } finally {
      await client.close();
    }
  });

  it("lets idle buckets expire once they would be full again", async () => {
    const prefix = `test-buckets:${randomUUID()}:`;
    const b = await connect(prefix);
    const client = createClient({ url });
    await client.connect();
    try {
      await take(b, [{ key: "k", ratePerMs: 1 / 1000, burst: 3 }], Date.now());
      const ttl = await client.pTTL(`${prefix}k`);
      // One token to refill (1 s) plus a second of margin.
      expect(ttl).toBeGreaterThan(1000);
      expect(ttl).toBeLessThanOrEqual(2000);
    } finally {
      await client.close();
    }
  });

  it("sends the script in full when Redis does not know it, and falls back to memory when Redis is gone", async () => {
    const client = createClient({ url });
    await client.connect();
    const errors: unknown[] = [];
    // As after a Redis restart (no SCRIPT FLUSH here: other suites share this Redis).
    let cached = false;
    const evals: string[] = [];
    const scripts: ScriptClient = {
      evalSha: async (sha, options) => {
        evals.push("evalSha");
        if (!cached) throw new Error("NOSCRIPT No matching script. Please use EVAL.");
        return client.evalSha(sha, options);
      },
      eval: async (script, options) => {
        evals.push("eval");
        cached = true;
        return client.eval(script, options);
      },
      on: (event, listener) => client.on(event, listener),
      get isOpen() {
        return client.isOpen;
      },
      close: () => client.close(),
    };
    const b = new RedisTokenBuckets(scripts, {
      prefix: `test-buckets:${randomUUID()}:`,
      onError: (err) => errors.push(err),
    });
    const s = [{ key: "k", ratePerMs: 1 / 1000, burst: 1 }];
    expect(await take(b, s, T0)).toBe(0);
    expect(evals).toEqual(["evalSha", "eval"]);
    expect(await take(b, s, T0)).toBe(1000);
    expect(evals).toEqual(["evalSha", "eval", "evalSha"]);
    client.destroy();
    // Memory keeps a budget of its own meanwhile; the outage is reported once.
    expect(await take(b, s, T0)).toBe(0);
    expect(await take(b, s, T0)).toBe(1000);
    expect(errors).toHaveLength(1);
  });
});
