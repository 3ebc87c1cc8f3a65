/**
 * The per-person throttle: `limit` uses a window per key, the wait until the next window when
 * past it, and a bounded memory however many people click.
 */
import { describe, expect, it } from "vitest";
import { PerKeyThrottle } from "../../src/util/throttle.ts";

describe("PerKeyThrottle", () => {
  it("allows `limit` uses per key and window, then says how long until the next window", () => {
    let now = 120_000; // the start of a window
    const throttle = new PerKeyThrottle(3, 60_000, () => now);
    expect([1, 2, 3].map(() => throttle.take("T1:U1"))).toEqual([undefined, undefined, undefined]);
    now += 15_000;
    expect(throttle.take("T1:U1")).toBe(45_000);
    expect(throttle.take("T1:U2")).toBeUndefined(); // another person
    now += 45_000;
    expect(throttle.take("T1:U1")).toBeUndefined();
  });

  it("keeps at most 10,000 people, forgetting past windows first, then the oldest", () => {
    let now = 0;
    const throttle = new PerKeyThrottle(1, 60_000, () => now);
    for (let i = 0; i < 10_000; i++) throttle.take(`U${i}`);
    expect(throttle.take("U0")).toBeGreaterThan(0);
    now = 60_000; // a new window: the past ones are swept when the map is full
    for (let i = 10_000; i < 20_000; i++) expect(throttle.take(`U${i}`)).toBeUndefined();
    // Full within one window: the oldest entry makes room, the newest keep their count.
    expect(throttle.take("U20000")).toBeUndefined();
    expect(throttle.take("U10000")).toBeUndefined(); // forgotten to make room: counted afresh
    expect(throttle.take("U19999")).toBeGreaterThan(0);
  });
});
