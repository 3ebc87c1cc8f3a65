/**
 * Rate limits as the store keeps them (`consumeRate`), on every backend: a sliding window of
 * `limit` requests, one atomic operation per request for both of a request's limits, shared by
 * every instance, a refusal by one limit spending nothing of the other, records that lapse.
 * And the per-person and per-channel check costs one store operation per request, one command
 * to Redis, however busy the channel.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { createClient } from "@redis/client";
import { afterAll, describe, expect, it } from "vitest";
import { testRedisUrl } from "../support/needs.ts";
import { createMemoryStore, type MemoryMaps } from "../support/fakes/memory-store.ts";
import { createRedisStore } from "../../src/store/redis.ts";
import { createSqliteStore } from "../../src/store/sqlite.ts";
import type { ThreadStore } from "../../src/store/types.ts";
import { takeRateSlot } from "../../src/threads/access/checks.ts";

const dir = mkdtempSync(join(tmpdir(), "taskbot-rate-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const redisUrl = testRedisUrl();

let n = 0;
const unique = () => `T${process.pid}x${Date.now().toString(36)}x${n++}`;
const MINUTE = 60_000;

/** One backend: stores on it that share its state (instances), and its rate record's expiry. */
interface Backend {
  open(): ThreadStore;
  /** Ms until the record of `teamId`'s limit `name` lapses, read from the backend itself. */
  lapsesIn(namespace: string, teamId: string, name: string): Promise<number | undefined>;
}

function memoryBackend(): Backend {
  const maps: MemoryMaps = { records: new Map(), entries: new Map() };
  return {
    open: () => createMemoryStore({ maps }),
    lapsesIn: async (ns, teamId, name) => {
      const entry = maps.entries.get(`${ns}:rate:t:${teamId}:${name}`);
      return entry && entry.until - Date.now();
    },
  };
}

function sqliteBackend(): Backend {
  const path = join(dir, "rate.sqlite");
  return {
    open: () => createSqliteStore(path),
    lapsesIn: async (ns, teamId, name) => {
      const db = new DatabaseSync(path, { readOnly: true });
      try {
        const row = db
          .prepare("SELECT expires FROM keyv WHERE key = ?")
          .get(`${ns}:rate:t:${teamId}:${name}`) as { expires: number | null } | undefined;
        return row?.expires === null || row === undefined ? undefined : row.expires - Date.now();
      } finally {
        db.close();
      }
    },
  };
}

function redisBackend(url: string): Backend {
  return {
    open: () => createRedisStore(url),
    lapsesIn: async (ns, teamId, name) => {
      const client = createClient({ url });
      await client.connect();
      try {
        const ms = await client.pTTL(`${ns}:rate:t:${teamId}:${name}`);
        return ms >= 0 ? ms : undefined;
      } finally {
        await client.close();
      }
    },
  };
}

const backends: Array<[string, () => Backend]> = [
  ["memory", memoryBackend],
  ["embedded SQLite", sqliteBackend],
];
if (redisUrl) backends.push(["Redis", () => redisBackend(redisUrl)]);

describe.each(backends)("rate limits on %s", (_name, makeBackend) => {
  it("lets `limit` requests through in any minute, then says when a place frees", async () => {
    const store = makeBackend().open();
    const teamId = unique();
    const at = Date.now();
    const take = (t: number) =>
      store.consumeRate(teamId, [{ name: "user:U1", limit: 3 }], MINUTE, t);
    for (const t of [at, at + 1_000, at + 30_000]) expect(await take(t)).toEqual({ allowed: true });
    expect(await take(at + 45_000)).toEqual({
      allowed: false,
      refusedBy: "user:U1",
      retryAfterMs: 15_000,
    });
    // A sliding minute: one place frees as the first request leaves it, not three at once (a
    // fixed window starting at `at` would let three more through here, six in ~30 s).
    expect(await take(at + 60_000)).toEqual({ allowed: true });
    expect(await take(at + 60_500)).toEqual({
      allowed: false,
      refusedBy: "user:U1",
      retryAfterMs: 500,
    });
    expect(await take(at + 61_000)).toEqual({ allowed: true });
    expect(await take(at + 61_000)).toMatchObject({ allowed: false, retryAfterMs: 29_000 });
    await store.close();
  });

  it("counts a request refused by one limit in neither, and names the limit that frees last", async () => {
    const store = makeBackend().open();
    const teamId = unique();
    const at = Date.now();
    const take = (channel: string, t = at) =>
      store.consumeRate(
        teamId,
        [
          { name: "user:U1", limit: 2 },
          { name: `channel:${channel}`, limit: 1 },
        ],
        MINUTE,
        t,
      );
    expect(await take("C1")).toEqual({ allowed: true });
    // C1 is full: refused, and the person's second request of the minute is not spent.
    expect(await take("C1", at + 10_000)).toEqual({
      allowed: false,
      refusedBy: "channel:C1",
      retryAfterMs: 50_000,
    });
    expect(await take("C2", at + 20_000)).toEqual({ allowed: true });
    // The person's limit is full now, and so is C2's: the person's frees first (at + 60 s),
    // C2's last (at + 80 s), so the refusal names C2.
    expect(await take("C2", at + 30_000)).toEqual({
      allowed: false,
      refusedBy: "channel:C2",
      retryAfterMs: 50_000,
    });
    expect(await take("C3", at + 30_000)).toEqual({
      allowed: false,
      refusedBy: "user:U1",
      retryAfterMs: 30_000,
    });
    // Refused requests left nothing behind: C3 is empty, and the person has room at + 60 s.
    expect(await take("C3", at + 60_000)).toEqual({ allowed: true });
    await store.close();
  });

  it("lets exactly `limit` of many simultaneous requests from two instances through", async () => {
    const backend = makeBackend();
    const instances = [backend.open(), backend.open()];
    const teamId = unique();
    const at = Date.now();
    const limits = [
      { name: "user:U1", limit: 7 },
      { name: "channel:C1", limit: 9 },
    ];
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (instances[i % 2] as ThreadStore).consumeRate(teamId, limits, MINUTE, at + (i % 5)),
      ),
    );
    expect(answers.filter((a) => a.allowed)).toHaveLength(7);
    expect(answers.filter((a) => !a.allowed)).toHaveLength(33);
    // The channel counted only the 7 that passed: 2 more may start there.
    const other = [{ name: "channel:C1", limit: 9 }];
    for (let i = 0; i < 2; i++) {
      expect(await instances[0]?.consumeRate(teamId, other, MINUTE, at)).toEqual({
        allowed: true,
      });
    }
    expect(await instances[1]?.consumeRate(teamId, other, MINUTE, at)).toMatchObject({
      allowed: false,
    });
    await Promise.all(instances.map((s) => s.close()));
  });

  it("keeps workspaces apart, and its records lapse a window after the last request", async () => {
    const backend = makeBackend();
    const store = backend.open();
    const [a, b] = [unique(), unique()];
    const at = Date.now();
    const limits = [{ name: "channel:C1", limit: 1 }];
    expect(await store.consumeRate(a, limits, MINUTE, at)).toEqual({ allowed: true });
    expect(await store.consumeRate(a, limits, MINUTE, at)).toMatchObject({ allowed: false });
    expect(await store.consumeRate(b, limits, MINUTE, at)).toEqual({ allowed: true });
    const lapses = await backend.lapsesIn("taskbot", a, "channel:C1");
    expect(lapses).toBeGreaterThan(MINUTE - 5_000);
    expect(lapses).toBeLessThanOrEqual(MINUTE);
    await store.close();
  });

  it("refuses a call it cannot mean: no limit, a limit under 1, the same limit twice", async () => {
    const store = makeBackend().open();
    const at = Date.now();
    await expect(store.consumeRate("T1", [], MINUTE, at)).rejects.toThrow(RangeError);
    await expect(
      store.consumeRate("T1", [{ name: "user:U1", limit: 0 }], MINUTE, at),
    ).rejects.toThrow(/whole number ≥ 1/);
    const twice = [
      { name: "user:U1", limit: 2 },
      { name: "user:U1", limit: 3 },
    ];
    await expect(store.consumeRate("T1", twice, MINUTE, at)).rejects.toThrow(/names must differ/);
    await store.close();
  });

  it("checks a request against both limits with one store operation, however busy", async () => {
    const calls: string[] = [];
    const inner = makeBackend().open();
    const store = new Proxy(inner, {
      get: (target, prop, receiver) => {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          calls.push(String(prop));
          return Reflect.apply(value, target, args);
        };
      },
    });
    const limits = { perUserPerMinute: 10, perChannelPerMinute: 60 };
    const teamId = unique();
    const at = Date.now();
    for (let i = 0; i < 59; i++) {
      await takeRateSlot(store, limits, { teamId, channelId: "C1", userId: `U${i}` }, at);
    }
    // The channel's 60th and 61st requests of the minute: one operation each.
    for (const userId of ["U60", "U61"]) {
      calls.length = 0;
      await takeRateSlot(store, limits, { teamId, channelId: "C1", userId }, at);
      expect(calls).toEqual(["consumeRate"]);
    }
    calls.length = 0;
    const none = { perUserPerMinute: 0, perChannelPerMinute: 0 };
    expect(await takeRateSlot(store, none, { teamId, channelId: "C1", userId: "U1" }, at)).toBe(
      undefined,
    );
    expect(calls).toEqual([]);
    await inner.close();
  });
});

describe.runIf(redisUrl)("rate limits in Redis", () => {
  it("cost one command per request, however busy the channel", async () => {
    const url = redisUrl ?? "";
    const monitor = createClient({ url });
    const marker = createClient({ url });
    await Promise.all([monitor.connect(), marker.connect()]);
    const teamId = unique();
    // MONITOR shows every command Redis runs, a script's own calls marked `lua`.
    const lines: string[] = [];
    await monitor.monitor((line) => lines.push(line));
    // Redis runs commands in order: once it shows a marker, it showed every command before it.
    const mark = async (): Promise<number> => {
      const done = `mark-${unique()}`;
      await marker.echo(done);
      for (;;) {
        const at = lines.findIndex((l) => l.includes(done));
        if (at >= 0) return at;
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    /** The commands of this workspace Redis ran for `during` (not a script's own calls). */
    const sent = async (during: () => Promise<unknown>): Promise<string[]> => {
      const from = await mark();
      await during();
      const to = await mark();
      return lines.slice(from, to).filter((l) => l.includes(teamId) && !/\[\d+ lua\]/.test(l));
    };
    const store = createRedisStore(url);
    const limits = { perUserPerMinute: 10, perChannelPerMinute: 60 };
    const at = Date.now();
    const ask = (userId: string) =>
      takeRateSlot(store, limits, { teamId, channelId: "C1", userId }, at);
    for (let i = 0; i < 59; i++) await ask(`U${i}`);
    const sixtieth = await sent(() => ask("U60"));
    const refused = await sent(() => ask("U61"));
    expect(sixtieth).toHaveLength(1);
    expect(sixtieth[0]).toMatch(/"EVAL"/i);
    expect(refused).toHaveLength(1);
    await store.close();
    await Promise.all([monitor.close(), marker.close()]);
  });
});
