/**
 * Auto streaming's choice on its own, with the scheduler's loads given: a run alone edits, runs
 * go where their share of the budgets is larger, a run that chose to edit counts as editing
 * until its edits show in the scheduler, and a stream counts until it is stopped or Slack has
 * ended it (five minutes).
 */
import { describe, expect, it } from "vitest";
import { type LaneLoad, StreamChoice } from "../../src/slack/scheduler/index.ts";
import { FakeClock } from "../support/fake-clock.ts";

/** Per minute after the safety margin: chat.update 45, chat.appendStream 90, stops 18. */
function loads(editing = 0, stopsWaiting = 0) {
  const load = (perMinute: number, extra: Partial<LaneLoad> = {}): LaneLoad => ({
    perMinute,
    waiting: 0,
    editing: 0,
    ...extra,
  });
  const byMethod: Record<string, LaneLoad> = {
    "chat.update": load(45, { editing }),
    "chat.appendStream": load(90),
    "chat.stopStream": load(18, { waiting: stopsWaiting }),
  };
  return { load: (_team: string, method: string) => byMethod[method] ?? load(1) };
}

const settle = async () => undefined;

describe("auto streaming's choice", () => {
  it("edits a run alone, and streams the next one while edits are shared", () => {
    const choice = new StreamChoice(loads(), "T1", new FakeClock());
    expect(choice.stream()).toBe(false);
    choice.edited();
    expect(choice.stream()).toBe(true);
  });

  it("counts a run that chose to edit for two seconds, until its edits show in the scheduler", async () => {
    const clock = new FakeClock();
    const choice = new StreamChoice(loads(), "T1", clock);
    choice.edited();
    await clock.advance(1999, settle);
    expect(choice.stream()).toBe(true);
    await clock.advance(1, settle);
    expect(choice.stream()).toBe(false);
  });

  it("counts an open stream until it is stopped, or until Slack has ended it", async () => {
    const clock = new FakeClock();
    // One run edits: a stream's share is half of 90 over the streams, an edit's 45 / 2.
    const choice = new StreamChoice(loads(1), "T1", clock);
    choice.opened("s1");
    expect(choice.stream()).toBe(true); // half of 90 / 2 = 22.5
    choice.opened("s2");
    expect(choice.stream()).toBe(false); // half of 90 / 3 = 15
    choice.closed("s2");
    expect(choice.stream()).toBe(true);
    choice.opened("s2");
    // Five minutes on, Slack has ended both streams.
    await clock.advance(5 * 60_000, settle);
    expect(choice.stream()).toBe(true);
  });

  it("starts no stream while a stop waits (stops go whenever the window has room)", () => {
    const choice = new StreamChoice(loads(1, 1), "T1", new FakeClock());
    expect(choice.stream()).toBe(false);
    expect(choice.stopsKeepUp()).toBe(false);
    expect(new StreamChoice(loads(1, 0), "T1", new FakeClock()).stream()).toBe(true);
  });
});
