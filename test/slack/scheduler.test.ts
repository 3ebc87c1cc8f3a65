/**
 * The Slack write scheduler on a fake clock: minutes of simulated traffic run in milliseconds and
 * every assertion is exact (no sleeps). The Redis part (two instances, one budget) runs when
 * the test run has a Redis (test/support/needs.ts).
 */
import { randomUUID } from "node:crypto";
import { WebAPIPlatformError, WebAPIRateLimitedError } from "@slack/web-api";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { testRedisUrl } from "../support/needs.ts";
import {
  BudgetWaitExceeded,
  budgetsWith,
  createSlackScheduler,
  DEFAULT_BUDGETS,
  type EditResult,
  rateLimitedRetryAfter,
  type SchedulerOptions,
  SlackScheduler,
} from "../../src/slack/scheduler/index.ts";
import { MemoryTokenBuckets, type TokenBuckets } from "../../src/slack/scheduler/token-buckets.ts";
import { FakeClock } from "../support/fake-clock.ts";

const T0 = 1_700_000_000_000;
const MINUTE = 60_000;

interface Sent {
  readonly team: string;
  readonly method: string;
  readonly key: string;
  readonly at: number;
  readonly payload?: number;
}

function setup(options: SchedulerOptions = {}) {
  const clock = new FakeClock(T0);
  const scheduler = new SlackScheduler({ clock, ...options });
  const settle = () => scheduler.settled();
  return {
    clock,
    scheduler,
    advance: (ms: number) => clock.advance(ms, settle),
    advanceTo: (at: number) => clock.advanceTo(at, settle),
  };
}

/** Edits of team T1 that record, in `order`, each text as it is sent ("C1:3 final@1200"). */
function orderedEdits(scheduler: SlackScheduler, stamp: () => string = () => "") {
  const order: string[] = [];
  const edit = (key: string, final = false) =>
    scheduler.scheduleEdit(
      "T1",
      key,
      async () => {
        order.push(`${key}${final ? " final" : ""}${stamp()}`);
      },
      { final },
    );
  return { order, edit };
}

/** Calls `fn` every `everyMs` on the fake clock until `until` (first call after one period). */
function every(clock: FakeClock, everyMs: number, until: number, fn: () => void): void {
  const tick = () => {
    if (clock.now() > until) return;
    fn();
    clock.setTimeout(tick, everyMs);
  };
  clock.setTimeout(tick, everyMs);
}

/** The most calls in any half-open window of `windowMs` (how Slack counts a tier's minute). */
function maxInWindow(times: readonly number[], windowMs = MINUTE): number {
  const sorted = [...times].sort((a, b) => a - b);
  let max = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while ((sorted[end] ?? 0) - (sorted[start] ?? 0) >= windowMs) start++;
    max = Math.max(max, end - start + 1);
  }
  return max;
}

function gaps(times: readonly number[]): number[] {
  return times.slice(1).map((t, i) => t - (times[i] ?? 0));
}

/** Slack's allowance with the safety margin: what any sliding minute may hold. */
function allowed(perMinute: number, safety = 0.9): number {
  return Math.floor(perMinute * safety);
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = out.get(k);
    if (group) group.push(item);
    else out.set(k, [item]);
  }
  return out;
}

describe("SlackScheduler budgets", () => {
  it("never exceeds any method's budget in any sliding minute, per team, channel and method", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          messages: fc.integer({ min: 1, max: 40 }),
          editEveryMs: fc.integer({ min: 50, max: 3000 }),
          postEveryMs: fc.integer({ min: 100, max: 3000 }),
          deleteEveryMs: fc.integer({ min: 100, max: 3000 }),
          streamEveryMs: fc.integer({ min: 200, max: 5000 }),
        }),
        async (load) => {
          const { clock, scheduler, advanceTo } = setup();
          const end = T0 + 3 * MINUTE;
          const sent: Sent[] = [];
          for (const team of ["T1", "T2"]) {
            for (let m = 0; m < load.messages; m++) {
              const key = `C1:${m}`;
              every(clock, load.editEveryMs, end, () => {
                void scheduler.scheduleEdit(team, key, async () => {
                  sent.push({ team, method: "chat.update", key, at: clock.now() });
                });
              });
            }
            for (const channel of ["C1", "C2", "C3"]) {
              every(clock, load.postEveryMs, end, () => {
                void scheduler.schedule(
                  team,
                  "chat.postMessage",
                  async () =>
                    sent.push({ team, method: "chat.postMessage", key: channel, at: clock.now() }),
                  { key: channel },
                );
              });
            }
            for (const method of ["chat.delete", "chat.startStream"]) {
              every(
                clock,
                method === "chat.delete" ? load.deleteEveryMs : load.streamEveryMs,
                end,
                () => {
                  void scheduler.schedule(team, method, async () => {
                    sent.push({ team, method, key: "", at: clock.now() });
                  });
                },
              );
            }
          }
          await advanceTo(end);
          // Still queued work is simply dropped with the fake clock.

          for (const [lane, calls] of groupBy(sent, (s) => `${s.team} ${s.method}`)) {
            const method = lane.split(" ")[1] ?? "";
            const perMinute = DEFAULT_BUDGETS[method]?.perMinute ?? 0;
            expect(maxInWindow(calls.map((c) => c.at)), lane).toBeLessThanOrEqual(
              allowed(perMinute),
            );
          }
          const posts = sent.filter((s) => s.method === "chat.postMessage");
          for (const [channel, calls] of groupBy(posts, (s) => `${s.team} ${s.key}`)) {
            expect(maxInWindow(calls.map((c) => c.at)), channel).toBeLessThanOrEqual(allowed(60));
          }
          for (const [message, calls] of groupBy(
            sent.filter((s) => s.method === "chat.update"),
            (s) => `${s.team} ${s.key}`,
          )) {
            for (const gap of gaps(calls.map((c) => c.at))) {
              expect(gap, message).toBeGreaterThanOrEqual(1000);
            }
          }
          // When demand exceeds the edit budget, the budget is used, not just respected: 45 in
          // any minute (0.9 × 50), less what is kept for the runs' final edits (windows.ts; for
          // runs going on for these three minutes, about half a call a run on average).
          const demandPerMinute = (load.messages * MINUTE) / Math.max(load.editEveryMs, 1000);
          if (demandPerMinute >= 100) {
            const edits = sent.filter((s) => s.team === "T1" && s.method === "chat.update");
            const kept = Math.min(45, 0.5 * load.messages);
            expect(edits.length).toBeGreaterThanOrEqual(3 * (42 - kept));
          }
        },
      ),
      { numRuns: 6 },
    );
  });

  it("takes a channel's token and the team's together: a busy channel does not hold others back", async () => {
    const { clock, scheduler, advance } = setup();
    const posted: { channel: string; at: number }[] = [];
    const post = (channel: string) =>
      scheduler.schedule(
        "T1",
        "chat.postMessage",
        async () => {
          posted.push({ channel, at: clock.now() });
          return channel;
        },
        { key: channel },
      );
    const c1 = Array.from({ length: 10 }, () => post("C1"));
    const c2 = post("C2");
    await advance(0);
    expect(await c2).toBe("C2");
    // C1: its burst of 3 at once (one after another), C2 right away, then C1 at its channel
    // rate (~0.85/s).
    expect(posted.slice(0, 4).map((p) => p.at)).toEqual([T0, T0, T0, T0]);
    expect(posted.slice(0, 4).map((p) => p.channel)).toEqual(["C1", "C2", "C1", "C1"]);
    await advance(MINUTE);
    await Promise.all(c1);
    const c1Times = posted.filter((p) => p.channel === "C1").map((p) => p.at);
    expect(
      gaps(c1Times)
        .slice(2)
        .every((g) => g >= 1000 && g <= 1200),
    ).toBe(true);
  });

  it("sends a channel's posts one at a time, in line (Slack orders them as they arrive); other channels' go on", async () => {
    const { scheduler } = setup();
    const started: string[] = [];
    let answer = () => {};
    const post = (name: string, channel: string, slow = false) =>
      scheduler.schedule(
        "T1",
        "chat.postMessage",
        async () => {
          started.push(name);
          if (slow) await new Promise<void>((resolve) => (answer = resolve));
          return name;
        },
        { key: channel },
      );
    const [a, b, c] = [post("a", "C1", true), post("b", "C1"), post("c", "C2")];
    expect(await c).toBe("c");
    expect(started).toEqual(["a", "c"]);
    answer();
    expect(await Promise.all([a, b])).toEqual(["a", "b"]);
    expect(started).toEqual(["a", "c", "b"]);
  });

  it("lets a channel's next post go 30 s after one that never answers", async () => {
    const { clock, scheduler } = setup();
    const started: number[] = [];
    const post = (answers: boolean) =>
      scheduler.schedule(
        "T1",
        "chat.postMessage",
        () => {
          started.push(clock.now() - T0);
          return answers ? Promise.resolve() : new Promise<void>(() => {});
        },
        { key: "C1" },
      );
    void post(false);
    const next = post(true);
    const microtasks = () => new Promise<void>((resolve) => setImmediate(resolve));
    await clock.advance(29_999, microtasks);
    expect(started).toEqual([0]);
    await clock.advance(1, microtasks);
    await next;
    expect(started).toEqual([0, 30_000]);
  });

  it("asks an empty workspace bucket once per refill, not once per queued channel", async () => {
    const memory = new MemoryTokenBuckets();
    let questions = 0;
    const buckets: TokenBuckets = {
      shared: false,
      take: (specs, now) => {
        questions += 1;
        return memory.take(specs, now);
      },
      close: () => memory.close(),
    };
    // A workspace cap of 60/min: 200 channels are far more than one minute's budget.
    const { clock, scheduler, advance } = setup({
      buckets,
      budgets: {
        "chat.postMessage": { perMinute: 60, burst: 5, perKey: { perMinute: 60, burst: 3 } },
      },
    });
    const posted: string[] = [];
    for (let c = 0; c < 200; c++) {
      void scheduler.schedule(
        "T1",
        "chat.postMessage",
        async () => void posted.push(`C${c}@${clock.now() - T0}`),
        { key: `C${c}` },
      );
      await advance(10);
    }
    await advance(MINUTE - 2000);
    // In arrival order: the burst of 5 as they came, then the window's calls paced (the
    // workspace's 0.9 × 60 = 54 in any minute): almost all of the minute's within it.
    expect(posted.length).toBeGreaterThanOrEqual(50);
    expect(posted.length).toBeLessThanOrEqual(54);
    expect(posted.map((p) => p.split("@")[0])).toEqual(
      Array.from({ length: posted.length }, (_, i) => `C${i}`),
    );
    const at = posted.map((p) => Number(p.split("@")[1]));
    expect(at.slice(0, 5)).toEqual([0, 10, 20, 30, 40]);
    expect(at[5]).toBeGreaterThan(40);
    // One refused question per refill at most, whatever the queue's length.
    expect(questions).toBeLessThanOrEqual(2 * posted.length);
    expect(scheduler.metrics().queued).toBe(200 - posted.length);
  });

  it("forgets an uninstalled workspace's budgets once no request for them is on its way; its queued calls fail", async () => {
    const memory = new MemoryTokenBuckets();
    let answer = () => {};
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const forgotten: string[] = [];
    // A budget store whose first answer is on its way until `answer()`.
    const buckets: TokenBuckets = {
      shared: false,
      take: async (specs, now) => {
        await answered;
        return memory.take(specs, now);
      },
      forget: async (prefix) => {
        forgotten.push(prefix);
        await memory.forget(prefix);
      },
      close: () => memory.close(),
    };
    const { scheduler } = setup({ buckets });
    const sent: string[] = [];
    const first = scheduler.schedule("T1", "chat.delete", async () => void sent.push("first"));
    const second = scheduler.schedule("T1", "chat.delete", async () => void sent.push("second"));
    const other = scheduler.schedule("T2", "chat.delete", async () => void sent.push("T2"));
    let done = false;
    const forgetting = scheduler.forgetTeam("T1").then(() => (done = true));
    await expect(first).rejects.toThrow(/uninstalled/);
    await expect(second).rejects.toThrow(/uninstalled/);
    // The answer on its way would write T1's budget again: it is forgotten only after that.
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    expect(forgotten).toEqual([]);
    answer();
    await forgetting;
    expect(forgotten).toEqual(["{T1}:"]);
    await other;
    expect(sent).toEqual(["T2"]);
  });

  it("rejects unknown methods and budgets that cannot hold their safety margin", async () => {
    const { scheduler } = setup();
    await expect(scheduler.schedule("T1", "chat.nope", async () => 1)).rejects.toThrow(
      /no Slack rate budget for chat.nope/,
    );
    expect(
      () => new SlackScheduler({ budgets: { "chat.update": { perMinute: 0, burst: 1 } } }),
    ).toThrow(/call a minute/);
    expect(
      () => new SlackScheduler({ budgets: { "chat.update": { perMinute: 5, burst: 0 } } }),
    ).toThrow(/burst/);
    // A channel's bucket keeps its margin: its burst must stay below 0.9 of its minute.
    const post = { perMinute: 300, burst: 10, perKey: { perMinute: 5, burst: 5 } };
    expect(() => new SlackScheduler({ budgets: { "chat.postMessage": post } })).toThrow(/burst/);
    expect(() => new SlackScheduler({ safety: 1.5 })).toThrow(/safety/);
  });

  it("takes a budget of one call a minute (SLACK_RATE_LIMITS): never two in a sliding minute", async () => {
    const { clock, scheduler, advance } = setup({
      budgets: budgetsWith({ "conversations.replies": 1 }),
    });
    const at: number[] = [];
    const calls = [1, 2, 3].map(() =>
      scheduler.schedule("T1", "conversations.replies", async () => {
        at.push(clock.now() - T0);
      }),
    );
    await advance(4 * MINUTE);
    await Promise.all(calls);
    expect(at).toHaveLength(3);
    for (let i = 1; i < at.length; i++) {
      expect((at[i] ?? 0) - (at[i - 1] ?? 0)).toBeGreaterThan(MINUTE);
    }
  });
});

describe("SlackScheduler edits", () => {
  it("keeps room for the final edits of the runs in progress: they all go at once when the runs end", async () => {
    const { clock, scheduler, advance } = setup();
    const { order, edit } = orderedEdits(scheduler, () => `@${clock.now() - T0}`);
    // 30 runs streaming: each asks for an interim edit every 200 ms for 20 s.
    const runs = Array.from({ length: 30 }, (_, m) => `C1:${m}`);
    every(clock, 200, T0 + 20_000, () => runs.forEach((key) => void edit(key)));
    await advance(20_000);
    const interim = order.length;
    // The window (45 a minute) kept room for the finals expected before its first calls leave
    // it (30 runs of 20 s: about 30 × 41 / 61 of them, windows.ts reserveOf): interim edits had
    // only the rest.
    expect(interim).toBeGreaterThan(3);
    expect(interim).toBeLessThanOrEqual(45 - 20);
    // The runs end together: the finals go at once, as many as that room holds, the others as
    // soon as the first interim edits leave the window.
    runs.forEach((key) => void edit(key, true));
    await advance(0);
    const atOnce = order.slice(interim).filter((f) => f.endsWith(" final@20000"));
    expect(atOnce.length).toBeGreaterThanOrEqual(45 - interim);
    await advance(MINUTE);
    expect(order.slice(interim)).toHaveLength(30);
  });

  it("spends a stream's waiting append at once when its run ends (hurry)", async () => {
    const { clock, scheduler, advance } = setup();
    const sent: string[] = [];
    const append = (unit: string, text: string, last = false) =>
      scheduler.schedule(
        "T1",
        "chat.appendStream",
        async () => void sent.push(`${text}@${clock.now() - T0}`),
        { pace: { unit, last } },
      );
    // Ten streams of a second each, far more appends than their spare calls: a queue forms.
    for (let i = 0; i < 30; i++) void append(`s${i % 10}`, `${i}`);
    await advance(1000);
    const before = sent.length;
    expect(before).toBeLessThan(30);
    const waiting = ["9", "19", "29"].filter((t) => !sent.some((x) => x.startsWith(`${t}@`)));
    expect(waiting.length).toBeGreaterThan(0);
    // Stream s9's run ends: its waiting appends carry its end now, and go before the others.
    scheduler.hurry("T1", "chat.appendStream", "s9");
    await advance(0);
    expect(sent.slice(before)).toEqual(waiting.map((t) => `${t}@1000`));
  });

  it.each([10, 50])(
    "serves %i continuously updating messages fairly: all get edits, longest waiting first, bounded gaps",
    async (n) => {
      const { clock, scheduler, advanceTo } = setup();
      const end = T0 + 6 * MINUTE;
      const pendingSince = new Map<number, number>();
      const lastSent = new Map<number, number>();
      const sendTimes = new Map<number, number[]>();
      const violations: string[] = [];
      for (let m = 0; m < n; m++) {
        every(clock, 200, end, () => {
          if (!pendingSince.has(m)) pendingSince.set(m, clock.now());
          void scheduler.scheduleEdit("T1", `C1:${m}`, async () => {
            const now = clock.now();
            const mine = pendingSince.get(m) ?? now;
            // Longest waiting first, among the messages whose 1 s interval has passed.
            for (const [other, since] of pendingSince) {
              const eligible = now - (lastSent.get(other) ?? -Infinity) >= 1000;
              if (other !== m && eligible && since < mine) {
                violations.push(
                  `${m} (since ${mine - T0}) went before ${other} (since ${since - T0})`,
                );
              }
            }
            pendingSince.delete(m);
            lastSent.set(m, now);
            sendTimes.set(m, [...(sendTimes.get(m) ?? []), now]);
          });
        });
      }
      await advanceTo(end);

      expect(violations).toEqual([]);
      expect(sendTimes.size).toBe(n);
      // Round robin: between two edits of a message, each other message gets one, no more.
      const all = [...sendTimes.values()];
      const everyEdit = all.flat().sort((a, b) => a - b);
      for (const times of all) {
        for (let i = 1; i < times.length; i++) {
          const between = everyEdit.filter((t) => t > (times[i - 1] ?? 0) && t < (times[i] ?? 0));
          expect(between.length).toBeLessThanOrEqual(n);
        }
      }
      // Edits of one burst go at the same moment, in any order among themselves: a message may
      // be a burst or two ahead of another at the end.
      const counts = all.map((t) => t.length);
      expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(3);
      // The budget is used, not just respected: at most 45 in any minute, and every call but
      // those kept for the n runs' final edits (windows.ts: n × 61 / (age + 61) of them, about
      // n × 0.4 on average over these six minutes; at most 45).
      expect(maxInWindow(all.flat())).toBeLessThanOrEqual(allowed(50));
      const kept = Math.min(allowed(50), 0.4 * n);
      expect(everyEdit.length).toBeGreaterThanOrEqual(6 * (allowed(50) - kept) - 10);
    },
  );

  it("gives each of a few messages an edit every second (the per-message interval), no more", async () => {
    const { clock, scheduler, advanceTo } = setup({
      budgets: { "chat.update": { perMinute: 6000, burst: 5 } },
    });
    const end = T0 + 10_000;
    const times = new Map<number, number[]>();
    for (let m = 0; m < 3; m++) {
      every(clock, 50, end, () => {
        void scheduler.scheduleEdit("T1", `C1:${m}`, async () => {
          times.set(m, [...(times.get(m) ?? []), clock.now()]);
        });
      });
    }
    await advanceTo(end + 2000);
    for (const t of times.values()) {
      expect(t.length).toBeGreaterThanOrEqual(10);
      for (const gap of gaps(t)) {
        expect(gap).toBeGreaterThanOrEqual(1000);
        expect(gap).toBeLessThanOrEqual(1050);
      }
    }
  });

  it("applies the interval per run when edits carry a runId", async () => {
    const { clock, scheduler, advance } = setup({
      budgets: { "chat.update": { perMinute: 6000, burst: 5 } },
    });
    const times: number[] = [];
    const send = async () => {
      times.push(clock.now());
    };
    void scheduler.scheduleEdit("T1", "C1:1", send, { runId: "r1" });
    void scheduler.scheduleEdit("T1", "C1:2", send, { runId: "r1" });
    void scheduler.scheduleEdit("T1", "C1:3", send, { runId: "r2" });
    await advance(5000);
    expect(times.map((t) => t - T0)).toEqual([0, 0, 1000]);
  });

  it("sends owed edits before interim ones however long those waited; interim ones oldest first", async () => {
    const { scheduler, advance } = setup();
    const { order, edit } = orderedEdits(scheduler);
    // More interim edits than a minute's calls, queued at once (45 in any minute, with the margin).
    for (let m = 0; m < 60; m++) void edit(`C1:${m}`);
    await advance(40_000);
    const before = order.length;
    expect(before).toBeGreaterThan(3);
    expect(before).toBeLessThan(45);
    // Final edits now: they go at once, before the interim edits that have waited 40 s.
    for (let m = 0; m < 5; m++) void edit(`C9:${m}`, true);
    await advance(0);
    expect(order.slice(before)).toEqual(
      ["C9:0", "C9:1", "C9:2", "C9:3", "C9:4"].map((k) => `${k} final`),
    );
    await advance(3 * MINUTE);
    // The interim edits then went on in the order they were asked for.
    const interim = order.filter((k) => k.startsWith("C1:"));
    expect(interim).toEqual(Array.from({ length: 60 }, (_, m) => `C1:${m}`));
  });

  it("sends a final edit before interim ones that waited longer, and not held by the interval", async () => {
    const { clock, scheduler, advance } = setup();
    const { order, edit } = orderedEdits(scheduler, () => `@${clock.now() - T0}`);
    for (let m = 0; m < 20; m++) void edit(`C1:${m}`);
    await advance(0); // the burst of 3 goes at once
    expect(order).toEqual(["C1:0@0", "C1:1@0", "C1:2@0"]);
    await advance(100);
    // C1:1 was edited 100 ms ago; its final does not wait for the 1 s interval, nor for the
    // 17 interim edits queued before it, nor for the pace of interim edits: it goes at once.
    const final = edit("C1:1", true);
    await advance(0);
    expect(order[3]).toBe("C1:1 final@100");
    expect(await final).toBe("sent");
    await advance(MINUTE);
    expect(order.slice(4, 6).map((o) => o.split("@")[0])).toEqual(["C1:3", "C1:4"]);
  });

  it("coalesces: 100 updates to a paused message end in one send of the last text", async () => {
    const { scheduler, advance } = setup();
    const sent: number[] = [];
    let failFirst = true;
    const edit = (payload: number) =>
      scheduler.scheduleEdit("T1", "C1:1", async () => {
        if (failFirst) {
          failFirst = false;
          throw new WebAPIRateLimitedError(30);
        }
        sent.push(payload);
      });
    const results: Promise<EditResult>[] = [edit(0)];
    await advance(0); // the first send is answered 429: chat.update is paused for 30 s
    for (let i = 1; i <= 100; i++) {
      results.push(edit(i));
      await advance(100);
    }
    expect(sent).toEqual([]);
    await advance(30_000);
    expect(sent).toEqual([100]);
    const settled = await Promise.all(results);
    expect(settled.filter((r) => r === "superseded")).toHaveLength(100);
    expect(settled.at(-1)).toBe("sent");
    expect(scheduler.metrics()).toMatchObject({
      superseded: 100,
      calls: { "chat.update": 2 },
      rateLimited: { "chat.update": 1 },
      queued: 0,
    });
    // Queue wait of the delivered text counts from the message's first unsent text.
    expect(scheduler.metrics().queueWait["chat.update"]?.maxMs).toBe(30_000);
  });

  it("a 429 pauses that method for that team only; the latest text arrives when the pause ends", async () => {
    const { clock, scheduler, advance } = setup();
    const log: Sent[] = [];
    let limitNext = false;
    const edit = (team: string, payload: number) =>
      scheduler.scheduleEdit(team, "C1:1", async () => {
        if (team === "T1" && limitNext) {
          limitNext = false;
          throw new WebAPIRateLimitedError(20);
        }
        log.push({ team, method: "chat.update", key: "C1:1", at: clock.now(), payload });
      });
    const del = (team: string) =>
      scheduler.schedule(team, "chat.delete", async () => {
        log.push({ team, method: "chat.delete", key: "", at: clock.now() });
      });

    limitNext = true;
    void edit("T1", 0);
    await advance(0);
    const pausedAt = clock.now();
    for (let i = 1; i <= 10; i++) {
      void edit("T1", i);
      void edit("T2", i);
      void del("T1");
      await advance(1500);
    }
    await advance(20_000);
    const t1Updates = log.filter((l) => l.team === "T1" && l.method === "chat.update");
    expect(t1Updates.map((l) => [l.at - pausedAt, l.payload])).toEqual([[20_000, 10]]);
    // The other team's edits and this team's other methods went on during the pause.
    const during = (l: Sent) => l.at < pausedAt + 20_000;
    expect(log.filter((l) => l.team === "T2" && during(l)).length).toBeGreaterThanOrEqual(9);
    expect(log.filter((l) => l.method === "chat.delete" && during(l))).toHaveLength(10);
    expect(scheduler.metrics().rateLimited).toEqual({ "chat.update": 1 });
  });

  it("retries a 429ed call after Retry-After, in its place in line, and resolves with its value", async () => {
    const { clock, scheduler, advance } = setup();
    const calls: string[] = [];
    let limited = false;
    const post = (name: string) =>
      scheduler.schedule(
        "T1",
        "chat.postMessage",
        async () => {
          calls.push(`${name}@${clock.now() - T0}`);
          if (name === "a" && !limited) {
            limited = true;
            throw new WebAPIRateLimitedError(5);
          }
          return `ts-${name}`;
        },
        { key: "C1" },
      );
    const a = post("a");
    await advance(0);
    const b = post("b");
    await advance(10_000);
    expect(await a).toBe("ts-a");
    expect(await b).toBe("ts-b");
    expect(calls).toEqual(["a@0", "a@5000", "b@5000"]);
  });

  it("refuses a call with maxWaitMs that the budget or a 429's pause holds past it; others go on", async () => {
    const { clock, scheduler, advance } = setup({
      budgets: { "conversations.replies": { perMinute: 2, burst: 1 } },
    });
    const calls: string[] = [];
    const read = (name: string, maxWaitMs?: number, team = "T1") =>
      scheduler.schedule(
        team,
        "conversations.replies",
        async () => {
          calls.push(`${name}@${clock.now() - T0}`);
          if (name === "b") throw new WebAPIRateLimitedError(60);
          return name;
        },
        maxWaitMs === undefined ? {} : { maxWaitMs },
      );
    const a = read("a", 1000);
    const late = read("late", 1000).catch((err: unknown) => err);
    const patient = read("patient");
    await advance(1000);
    expect(await a).toBe("a");
    // The budget's next token comes ~70 s later: the call with a 1 s limit is refused at 1 s.
    expect(await late).toBeInstanceOf(BudgetWaitExceeded);
    expect(await late).toMatchObject({ method: "conversations.replies" });
    await advance(2 * MINUTE);
    expect(await patient).toBe("patient");
    // A 429 pauses the method: a call with a limit shorter than the pause is refused after one try.
    const b = read("b", 5000, "T2").catch((err: unknown) => err);
    await advance(10_000);
    expect(await b).toBeInstanceOf(BudgetWaitExceeded);
    expect(calls.filter((c) => c.startsWith("b@"))).toHaveLength(1);
    expect(calls.filter((c) => c.startsWith("late@"))).toEqual([]);
  });

  it("gives up after ten 429s in a row, and passes other errors on; the rest keeps going", async () => {
    const { scheduler, advance } = setup();
    let attempts = 0;
    const stuck = scheduler.schedule("T1", "chat.delete", async () => {
      attempts += 1;
      throw new WebAPIRateLimitedError(1);
    });
    const refused = scheduler.scheduleEdit("T1", "C1:1", async () => {
      throw new WebAPIPlatformError({ ok: false, error: "message_not_found" });
    });
    const fine = scheduler.scheduleEdit("T1", "C1:2", async () => {});
    const stuckResult = stuck.catch((err: unknown) => err);
    const refusedResult = refused.catch((err: unknown) => err);
    await advance(30_000);
    expect(rateLimitedRetryAfter(await stuckResult)).toBe(1);
    expect(attempts).toBe(11);
    expect(await refusedResult).toBeInstanceOf(WebAPIPlatformError);
    expect(await fine).toBe("sent");
    expect(scheduler.metrics()).toMatchObject({
      rateLimited: { "chat.delete": 11 },
      failed: { "chat.update": 1 },
    });
  });

  it("drops a waiting edit when its run ends: never sent, resolved superseded, the final goes first", async () => {
    const { clock, scheduler, advance } = setup();
    const { order, edit } = orderedEdits(scheduler, () => `@${clock.now() - T0}`);
    for (let m = 0; m < 10; m++) void edit(`C1:${m}`);
    await advance(0); // the burst of 3
    // C1:0 gets a newer interim text (parked by its interval), C1:5 waits for the budget.
    const parked = edit("C1:0");
    const waiting = edit("C1:5");
    expect(scheduler.cancelEdit("T1", "C1:0")).toBe(true);
    expect(scheduler.cancelEdit("T1", "C1:5")).toBe(true);
    expect(scheduler.cancelEdit("T1", "C1:5")).toBe(false); // nothing left to drop
    expect(scheduler.cancelEdit("T1", "C9:9")).toBe(false);
    expect(await parked).toBe("superseded");
    expect(await waiting).toBe("superseded");
    const final = edit("C1:5", true);
    await advance(MINUTE);
    expect(await final).toBe("sent");
    const sent = order.map((o) => o.split("@")[0]);
    expect(sent.slice(3, 4)).toEqual(["C1:5 final"]);
    expect(sent.filter((o) => o === "C1:5")).toEqual([]);
    expect(sent.filter((o) => o === "C1:0")).toEqual(["C1:0"]); // only its first edit
    // C1:5's first text was replaced by its second (1), then both waiting texts dropped (2).
    expect(scheduler.metrics()).toMatchObject({
      queued: 0,
      superseded: 3,
      calls: { "chat.update": 10 },
    });
  });

  it("does not drop an edit being sent; one queued behind it is dropped", async () => {
    const { clock, scheduler } = setup({
      budgets: { "chat.update": { perMinute: 6000, burst: 5 } },
    });
    const advance = (ms: number) => clock.advance(ms, async () => {});
    const events: string[] = [];
    let release: (() => void) | undefined;
    const first = scheduler.scheduleEdit("T1", "C1:1", async () => {
      events.push("start 1");
      await new Promise<void>((resolve) => (release = resolve));
    });
    await advance(0);
    const second = scheduler.scheduleEdit("T1", "C1:1", async () => {
      events.push("start 2");
    });
    expect(scheduler.cancelEdit("T1", "C1:1")).toBe(true);
    expect(await second).toBe("superseded");
    expect(scheduler.cancelEdit("T1", "C1:1")).toBe(false);
    release?.();
    await advance(5000);
    expect(await first).toBe("sent");
    expect(events).toEqual(["start 1"]);
    // The message can be edited again afterwards.
    const third = scheduler.scheduleEdit("T1", "C1:1", async () => {
      events.push("start 3");
    });
    await advance(5000);
    expect(await third).toBe("sent");
    expect(events).toEqual(["start 1", "start 3"]);
  });

  it("never runs two edits of one message at once: a newer text waits for the one in flight", async () => {
    const { clock, scheduler } = setup({
      budgets: { "chat.update": { perMinute: 6000, burst: 5 } },
    });
    // The first send hangs until released, so settled() would wait for it: flush only.
    const advance = (ms: number) => clock.advance(ms, async () => {});
    const events: string[] = [];
    let release: (() => void) | undefined;
    const first = scheduler.scheduleEdit("T1", "C1:1", async () => {
      events.push(`start 1@${clock.now() - T0}`);
      await new Promise<void>((resolve) => (release = resolve));
      events.push("end 1");
    });
    await advance(0);
    const second = scheduler.scheduleEdit("T1", "C1:1", async () => {
      events.push(`start 2@${clock.now() - T0}`);
    });
    await advance(5000);
    expect(events).toEqual(["start 1@0"]);
    release?.();
    await advance(0);
    expect(events).toEqual(["start 1@0", "end 1", "start 2@5000"]);
    expect([await first, await second]).toEqual(["sent", "sent"]);
  });

  it("sends high-priority calls before normal ones that waited longer", async () => {
    const { scheduler, advance } = setup();
    const order: string[] = [];
    const del = (name: string, priority: "high" | "normal") =>
      scheduler.schedule("T1", "chat.delete", async () => void order.push(name), { priority });
    // Owed calls go while the window has room: 45 at once, three wait for the window.
    for (let i = 0; i < 48; i++) void del(`n${i}`, "normal");
    await advance(100);
    expect(order).toHaveLength(45);
    void del("h", "high");
    await advance(2 * MINUTE);
    expect(order.slice(45)).toEqual(["h", "n45", "n46", "n47"]);
  });

  it("close() rejects what is queued and clears its timers", async () => {
    const { clock, scheduler, advance } = setup();
    const queued = Array.from({ length: 5 }, (_, i) =>
      scheduler.scheduleEdit("T1", `C1:${i}`, async () => {}),
    );
    await advance(0);
    await scheduler.close();
    const results = await Promise.allSettled(queued);
    expect(results.map((r) => r.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "fulfilled",
      "rejected",
      "rejected",
    ]);
    expect(clock.pendingTimers).toBe(0);
    await expect(scheduler.schedule("T1", "chat.delete", async () => 1)).rejects.toThrow(/closed/);
  });
});

const redisUrl = testRedisUrl();

describe.skipIf(!redisUrl)("SlackScheduler with Redis buckets (two instances, one budget)", () => {
  const instances: SlackScheduler[] = [];
  afterAll(async () => {
    await Promise.all(instances.map((s) => s.close()));
  });

  it("keeps two instances' edits of one workspace together within the budget", async () => {
    const redisPrefix = `test-slack-rl:${randomUUID()}:`;
    const errors: unknown[] = [];
    const clock = new FakeClock(T0);
    for (let i = 0; i < 2; i++) {
      // Two schedulers, two Redis clients, the same bucket keys: two app instances.
      instances.push(
        await createSlackScheduler({
          clock,
          redisUrl,
          redisPrefix,
          onError: (err) => errors.push(err),
        }),
      );
    }
    const settle = async () => {
      await Promise.all(instances.map((s) => s.settled()));
    };
    const end = T0 + 3 * MINUTE;
    const sent: { instance: number; at: number }[] = [];
    instances.forEach((scheduler, instance) => {
      for (let m = 0; m < 20; m++) {
        every(clock, 500, end, () => {
          void scheduler.scheduleEdit("T1", `C${instance}:${m}`, async () => {
            sent.push({ instance, at: clock.now() });
          });
        });
      }
    });
    await clock.advanceTo(end, settle);

    expect(errors).toEqual([]);
    // Alone, each instance would send up to 45 a minute; together they still send at most 45.
    expect(maxInWindow(sent.map((s) => s.at))).toBeLessThanOrEqual(allowed(50));
    // ...and use the shared budget: the window allows 45 a minute, 135 over three minutes, less
    // what each instance keeps for its 20 runs' final edits (windows.ts).
    expect(sent.length).toBeGreaterThanOrEqual(100);
    // Both get their turns (contending instances win tokens about equally often).
    for (const instance of [0, 1]) {
      expect(sent.filter((s) => s.instance === instance).length).toBeGreaterThanOrEqual(40);
    }
  });
});
