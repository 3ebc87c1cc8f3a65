import { describe, expect, it } from "vitest";
import { Slots } from "../../src/preview/slots.ts";

describe("browser slots", () => {
  it("lets N in at once; the next waits for a release, in order", async () => {
    const slots = new Slots(1);
    const first = await slots.take(1000);
    const order: string[] = [];
    const second = slots.take(60_000).then((release) => {
      order.push("second");
      return release;
    });
    expect(slots.busy).toBe(1);
    order.push("released");
    first();
    first(); // twice is once
    (await second)();
    expect(order).toEqual(["released", "second"]);
    expect(slots.busy).toBe(0);
  });

  it("gives up waiting after the time given, without taking a slot", async () => {
    const slots = new Slots(1);
    const held = await slots.take(1000);
    await expect(slots.take(10)).rejects.toThrow(/no browser slot free within 10 ms/);
    held();
    expect(slots.busy).toBe(0);
    (await slots.take(10))();
  });
});
