/**
 * A workspace's sliding window (the budget Slack counts): at most its calls in any window, a
 * burst at once, the rest paced so they never run dry, and the Redis script answering exactly
 * what memory answers, atomically (the Redis part runs when the test run has a Redis).
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
  type TokenBuckets,
} from "../../src/slack/scheduler/token-buckets.ts";
import { paceHorizon, reserveOf, type WindowSpec } from "../../src/slack/scheduler/windows.ts";

/** The wait a take answers (0: taken). */
const take = async (b: TokenBuckets, specs: readonly BucketSpec[], now: number) =>
  (await b.take(specs, now)).wait;

const T0 = 1_700_000_000_000;
const MINUTE = 60_000;

/**
 * chat.update after the margin, for paced calls of ten runs a second old: 45 in any 61 s, 3 at
 * once, the rest over √(1 s × 61 s × 42 / 10) = 16 s at first.
 */
const update = (key = "{T1}:chat.update"): WindowSpec => ({
  kind: "window",
  key,
  limit: 45,
  windowMs: 61_000,
  burst: 3,
  units: 10,
  ageMs: 1000,
});

/**
 * Takes as soon as allowed until `end`: the times the window let calls go. A spec given as a
 * function is asked at each take (runs that age).
 */
async function greedy(
  b: MemoryTokenBuckets,
  spec: BucketSpec | ((now: number) => BucketSpec),
  from: number,
  end: number,
) {
  const sent: number[] = [];
  for (let now = from; now < end;) {
    const wait = await take(b, [typeof spec === "function" ? spec(now) : spec], now);
    if (wait === 0) sent.push(now);
    else now += wait;
  }
  return sent;
}

function maxInWindow(times: readonly number[], windowMs: number): number {
  let max = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while ((times[end] ?? 0) - (times[start] ?? 0) >= windowMs) start++;
    max = Math.max(max, end - start + 1);
  }
  return max;
}

describe("a workspace's sliding window", () => {
  it("lets the burst go at once, then paces the rest: most of a minute's calls go within seconds", async () => {
    const sent = await greedy(new MemoryTokenBuckets(), update(), T0, T0 + 12_000);
    expect(sent.slice(0, 3)).toEqual([T0, T0, T0]);
    // A token bucket of the same tier (3 at once, then 42 a minute) allows 11 in 12 s.
    expect(sent.length).toBeGreaterThanOrEqual(18);
    expect(sent.length).toBeLessThan(45);
  });

  it("never runs dry within a minute, and never exceeds its calls in any window", async () => {
    // Ten runs started at T0, streaming for five minutes.
    const aging = (now: number): WindowSpec => ({ ...update(), ageMs: Math.max(1000, now - T0) });
    const sent = await greedy(new MemoryTokenBuckets(), aging, T0, T0 + 5 * MINUTE);
    expect(maxInWindow(sent, 61_000)).toBeLessThanOrEqual(45);
    // Sustained demand gets the window's whole rate: 45 each 61 s (less the first minute's pace).
    // (and the young runs' first minute, when their finals are kept for).
    expect(sent.length).toBeGreaterThanOrEqual(Math.floor((5 * MINUTE * 45) / 61_000) - 10);
    // Paced, never stopped: the longest gap between two calls stays far below the minute.
    const gaps = sent.slice(1).map((t, i) => t - (sent[i] ?? t));
    expect(Math.max(...gaps)).toBeLessThan(15_000);
  });

  it("lets owed calls go back to back while the window has room, and no further", async () => {
    const b = new MemoryTokenBuckets();
    const owed: WindowSpec = { ...update(), units: 0 };
    for (let i = 0; i < 45; i++) expect(await take(b, [owed], T0 + i)).toBe(0);
    expect(await take(b, [owed], T0 + 100)).toBe(61_000 - 100);
  });

  it("keeps room for the runs' finals until the window frees it: a burst keeps a call a run, steady runs none", async () => {
    const b = new MemoryTokenBuckets();
    // Forty runs a second old: nothing leaves the window for a minute, so about a call a run
    // (40 × 61 / 62) is kept, and paced calls get what is left; as the first calls' leaving
    // nears, fewer finals can come before it (40 × 11 / 12 = 36.7 at 50 s).
    const burst: WindowSpec = { ...update(), units: 40 };
    expect(reserveOf(burst, [], T0)).toBeCloseTo((40 * 61_000) / 62_000, 9);
    const sent = await greedy(b, burst, T0, T0 + 50_000);
    expect(sent.length).toBeGreaterThanOrEqual(3);
    expect(sent.length).toBeLessThanOrEqual(45 - 36);
    // The owed calls still find their room: the rest of the window goes at once.
    const owed: WindowSpec = { ...update(), units: 0 };
    for (let i = sent.length; i < 45; i++) expect(await take(b, [owed], T0 + 50_000)).toBe(0);
    expect(await take(b, [owed], T0 + 50_000)).toBe(11_000);
    // Runs of ten minutes, in a window whose 45 calls leave one every 1.36 s: their finals come
    // slower than calls leave (40 / 600 s against 45 / 61 s), so nothing is kept.
    const steady = Array.from({ length: 45 }, (_, i) => T0 + Math.round((i * 61_000) / 45));
    const now = T0 + 61_000 - 1;
    expect(reserveOf({ ...update(), units: 40, ageMs: 600_000 }, steady, now)).toBeLessThan(0.01);
    // Young runs in the same window: the finals of the next seconds outrun the leaves.
    expect(reserveOf({ ...update(), units: 40, ageMs: 2000 }, steady, now)).toBeGreaterThan(10);
  });

  it("spreads spare calls over a horizon that grows with the runs' age and share of calls", () => {
    const spec = (units: number, ageMs: number) => ({ ...update(), units, ageMs });
    // A run just started spends at once; ten runs of a second, 42 spare calls: over 16 s.
    expect(paceHorizon(spec(10, 0), 42)).toBe(0);
    const tenRunsOfASecond = paceHorizon(spec(10, 1000), 42);
    expect(Math.round(tenRunsOfASecond)).toBe(16_006);
    // Older runs, or fewer sharing the spare calls, spread them longer: at most the window.
    expect(paceHorizon(spec(10, 4000), 42) / tenRunsOfASecond).toBeCloseTo(2, 9);
    expect(paceHorizon(spec(1, 1000), 42) / tenRunsOfASecond).toBeCloseTo(Math.sqrt(10), 9);
    expect(paceHorizon(spec(10, 60_000), 42)).toBe(61_000);
  });

  it("holds the (limit + 1)-th call until the window's oldest call has left it", async () => {
    const b = new MemoryTokenBuckets();
    const all: WindowSpec = { ...update(), units: 0 };
    for (let i = 0; i < 45; i++) expect(await take(b, [all], T0 + i)).toBe(0);
    expect(await take(b, [all], T0 + 100)).toBe(61_000 - 100);
    expect(await take(b, [all], T0 + 61_000)).toBe(0);
  });

  it("takes from a window and a channel's bucket all or nothing", async () => {
    const b = new MemoryTokenBuckets();
    const team: WindowSpec = { ...update("team"), limit: 1, units: 0 };
    const channel = (key: string): BucketSpec => ({ key, ratePerMs: 1 / 1000, burst: 1 });
    expect(await take(b, [team, channel("c1")], T0)).toBe(0);
    // The window is full: c2's token is not spent on a refused call.
    expect(await b.take([team, channel("c2")], T0 + 10)).toEqual({
      wait: 61_000 - 10,
      firstWait: 61_000 - 10,
    });
    expect(await take(b, [channel("c2")], T0 + 10)).toBe(0);
  });

  it("forgets a workspace's windows: they are empty again, others keep theirs", async () => {
    const b = new MemoryTokenBuckets();
    const mine = { ...update("{T0A}:chat.update"), limit: 1, units: 0 };
    const other = { ...update("{T0B}:chat.update"), limit: 1, units: 0 };
    await take(b, [mine, other], T0);
    await b.forget("{T0A}:");
    expect(await take(b, [mine], T0)).toBe(0);
    expect(await take(b, [other], T0)).toBeGreaterThan(0);
  });
});

const redisUrl = testRedisUrl();

describe.skipIf(!redisUrl)("a workspace's sliding window in Redis", () => {
  const url = redisUrl ?? "";
  const opened: { close(): Promise<void> }[] = [];
  const connect = async (prefix: string) => {
    const b = await connectRedisBuckets(url, { prefix });
    opened.push(b);
    return b;
  };
  afterAll(async () => {
    await Promise.all(opened.map((b) => b.close()));
  });

  it("counts every call, when calls of instances whose clocks differ reach it out of order", async () => {
    const redis = await connect(`test-windows:${randomUUID()}:`);
    const memory = new MemoryTokenBuckets();
    const four: WindowSpec = { ...update("four"), limit: 4, burst: 4 };
    // A call stamped 61000 after one stamped 61001 removed older calls: it must not take the
    // place of the earlier call stamped 61000 (the same time and the same count).
    const stamps = [0, 1, 1, 61_000, 61_001, 61_000, 61_002, 61_002, 61_002, 61_003];
    const taken: number[] = [];
    for (const at of stamps) {
      const answer = await take(redis, [four], T0 + at);
      expect(answer).toBe(await take(memory, [four], T0 + at));
      if (answer === 0) taken.push(at);
    }
    expect(
      maxInWindow(
        [...taken].sort((a, b) => a - b),
        61_000,
      ),
    ).toBeLessThanOrEqual(4);
  });

  it("answers exactly what memory answers, windows and buckets mixed, for any sequence", async () => {
    const redis = await connect(`test-windows:${randomUUID()}:`);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            // Backwards too: instances whose clocks differ share one window.
            advanceMs: fc.integer({ min: -50, max: 4000 }),
            // One window asked as a paced call, one with a reserve or as an owed call.
            keys: fc.oneof(
              fc.subarray(["w", "s", "c"], { minLength: 1 }),
              fc.subarray(["r", "s", "c"], { minLength: 1 }),
              fc.subarray(["o", "s", "c"], { minLength: 1 }),
            ),
          }),
          { minLength: 1, maxLength: 60 },
        ),
        async (steps) => {
          run += 1;
          const memory = new MemoryTokenBuckets();
          const specs: Record<string, BucketSpec> = {
            w: { ...update(`${run}:w`), limit: 6, burst: 2, units: 3, ageMs: 700 },
            r: { ...update(`${run}:w`), limit: 6, burst: 2, units: 5, ageMs: 2500 },
            o: { ...update(`${run}:w`), limit: 6, burst: 2, units: 0 },
            s: { ...update(`${run}:s`), limit: 4, windowMs: 10_000, burst: 4 },
            c: { key: `${run}:c`, ratePerMs: 1 / 1000, burst: 3 },
          };
          let now = T0;
          for (const step of steps) {
            now += step.advanceMs;
            const taken = step.keys.flatMap((k) => specs[k] ?? []);
            expect(await redis.take(taken, now)).toEqual(await memory.take(taken, now));
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  it("is atomic: two clients racing for one window get exactly its burst between them", async () => {
    const prefix = `test-windows:${randomUUID()}:`;
    const [one, two] = await Promise.all([connect(prefix), connect(prefix)]);
    if (!one || !two) throw new Error("not connected");
    const s = [{ ...update("shared"), burst: 5 }];
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => take(i % 2 === 0 ? one : two, s, T0)),
    );
    expect(answers.filter((w) => w === 0)).toHaveLength(5);
  });

  it("forgets a workspace's windows and channel buckets, and only that workspace's", async () => {
    const prefix = `test-windows:${randomUUID()}:`;
    const errors: unknown[] = [];
    const b = await connectRedisBuckets(url, { prefix, onError: (err) => errors.push(err) });
    opened.push(b);
    const client = createClient({ url });
    await client.connect();
    try {
      const channel = { key: "{T0A}:chat.postMessage:C1", ratePerMs: 1 / 1000, burst: 1 };
      expect(await take(b, [update("{T0A}:chat.update"), channel], Date.now())).toBe(0);
      expect(await take(b, [update("{T0B}:chat.update")], Date.now())).toBe(0);
      expect(errors).toEqual([]);
      await b.forget("{T0A}:");
      const left: string[] = [];
      for await (const batch of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 100 })) {
        left.push(...batch.map((k) => k.slice(prefix.length)));
      }
      expect(left).toEqual(["{T0B}:chat.update"]);
    } finally {
      await client.close();
    }
  });

  it("lets an idle window expire with its last call", async () => {
    const prefix = `test-windows:${randomUUID()}:`;
    const b = await connect(prefix);
    const client = createClient({ url });
    await client.connect();
    try {
      await take(b, [update("k")], Date.now());
      const ttl = await client.pTTL(`${prefix}k`);
      // The window's 61 s and a second, less the time the test took since the take.
      expect(ttl).toBeGreaterThan(55_000);
      expect(ttl).toBeLessThanOrEqual(62_000);
    } finally {
      await client.close();
    }
  });
});
