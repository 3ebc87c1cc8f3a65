/**
 * Fairness limits: a person, and a channel, may start only so many tasks and follow-ups in any
 * minute; the refusal says when to try again, which is when the oldest of them is a minute old.
 */
import { describe, expect, it } from "vitest";
import { takeRateSlot } from "../../src/threads/access/checks.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";

const limits = { perUserPerMinute: 3, perChannelPerMinute: 5 };
const at = 1_800_000_000_000; // a minute boundary
const req = (userId: string, channelId = "C1") => ({ teamId: "T1", channelId, userId });

describe("per person and per channel limits", () => {
  it("refuses a person's fourth task in a minute, saying when to try again", async () => {
    const store = createMemoryStore();
    for (let i = 0; i < 3; i++)
      expect(await takeRateSlot(store, limits, req("U1"), at + i)).toBeUndefined();
    expect(await takeRateSlot(store, limits, req("U1"), at + 15_000)).toBe(
      "You have started 3 tasks or follow-ups in the last minute, the most one person may. Please try again in 45 s.",
    );
    // Someone else in the same channel still can; the next minute starts afresh.
    expect(await takeRateSlot(store, limits, req("U2"), at + 15_000)).toBeUndefined();
    expect(await takeRateSlot(store, limits, req("U1"), at + 60_000)).toBeUndefined();
  });

  it("refuses a busy channel's sixth task in a minute, whoever asks", async () => {
    const store = createMemoryStore();
    for (let i = 0; i < 5; i++)
      expect(await takeRateSlot(store, limits, req(`U${i}`), at)).toBeUndefined();
    expect(await takeRateSlot(store, limits, req("U9"), at)).toMatch(
      /^5 tasks or follow-ups were started in this channel/,
    );
    expect(await takeRateSlot(store, limits, req("U9", "C2"), at)).toBeUndefined();
  });

  it("counts any minute, not the clock's: three just before a minute starts leave no room after", async () => {
    const store = createMemoryStore();
    for (let i = 0; i < 3; i++)
      expect(await takeRateSlot(store, limits, req("U1"), at - 1_000 + i)).toBeUndefined();
    // A fixed window would start afresh at `at` and let three more through within a second.
    expect(await takeRateSlot(store, limits, req("U1"), at)).toBe(
      "You have started 3 tasks or follow-ups in the last minute, the most one person may. Please try again in 59 s.",
    );
    expect(await takeRateSlot(store, limits, req("U1"), at + 59_000)).toBeUndefined();
  });

  it("spends nothing of a person's limit on a request the channel's limit refused", async () => {
    const store = createMemoryStore();
    for (let i = 0; i < 5; i++) await takeRateSlot(store, limits, req(`U${i}`), at);
    for (let i = 0; i < 3; i++)
      expect(await takeRateSlot(store, limits, req("U9"), at + 1_000)).toMatch(/this channel/);
    // U9 was refused three times in C1, yet still has the three tasks of their minute.
    for (let i = 0; i < 3; i++)
      expect(await takeRateSlot(store, limits, req("U9", "C2"), at + 2_000)).toBeUndefined();
    expect(await takeRateSlot(store, limits, req("U9", "C2"), at + 2_000)).toMatch(/^You have/);
  });

  it("names, of two full limits, the one that frees last, with its time", async () => {
    const store = createMemoryStore();
    for (let i = 0; i < 3; i++) await takeRateSlot(store, limits, req("U1", "C2"), at);
    for (let i = 0; i < 5; i++) await takeRateSlot(store, limits, req(`U${i + 2}`), at + 20_000);
    // U1's own limit frees at + 60 s, C1's at + 80 s: trying in 45 s would still be refused.
    expect(await takeRateSlot(store, limits, req("U1"), at + 35_000)).toBe(
      "5 tasks or follow-ups were started in this channel in the last minute, the most it takes. Please try again in 45 s.",
    );
  });

  it("counts once across instances racing for the last slot", async () => {
    const store = createMemoryStore();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => takeRateSlot(store, limits, req("U1"), at)),
    );
    expect(results.filter((r) => r === undefined)).toHaveLength(3);
  });

  it("has no limit at 0", async () => {
    const store = createMemoryStore();
    const none = { perUserPerMinute: 0, perChannelPerMinute: 0 };
    for (let i = 0; i < 50; i++)
      expect(await takeRateSlot(store, none, req("U1"), at)).toBeUndefined();
  });
});
