/**
 * The Home tab publisher: publishes at once when asked, and refreshes after task changes at most
 * once per interval per person, coalescing the changes meanwhile into one publish (fake clock).
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { TaskCoordinator } from "../../src/threads/coordinator.ts";
import { HomeTab } from "../../src/slack/home-tab.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import { validateView } from "../../tools/local-slack/index.ts";
import { FakeClock } from "../support/fake-clock.ts";

function setUp() {
  const store = createMemoryStore();
  const published: Array<{ user_id: string; view: Record<string, unknown> }> = [];
  const clock = new FakeClock();
  const logger = pino({ level: "silent" });
  const coordinator = new TaskCoordinator({
    store,
    logger,
    workspaces: {} as never,
    relay: { onEnded: () => undefined } as never,
    files: {} as never,
  });
  const home = new HomeTab({
    client: {
      views: {
        publish: async (args: { user_id: string; view: Record<string, unknown> }) => {
          published.push(args);
          return { ok: true };
        },
      },
    } as never,
    preferences: coordinator.preferences,
    logger,
    tokens: { botToken: async () => "xoxb-test" },
    teamUrl: async () => "https://acme.slack.com/",
    clock,
    intervalMs: 10_000,
  });
  const settle = async () => {
    for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
  };
  return { store, published, clock, home, settle };
}

describe("the Home tab publisher", () => {
  it("refreshes at once, then at most once per interval, coalescing the changes in between", async () => {
    const { published, clock, home, settle, store } = setUp();
    home.taskChanged("T1", "U1");
    await settle();
    expect(published).toHaveLength(1);
    expect(validateView(published[0]?.view)).toBeUndefined();
    await store.putRecentTask("T1", "U1", {
      channelId: "C1",
      threadTs: "1700000000.000100",
      prompt: "Build a shop",
      status: "completed",
      // The store's time, not the publisher's: a task older than the retention is not listed.
      startedAt: Date.now(),
      updatedAt: Date.now(),
    });
    // Three more runs end within the interval: one publish at its end, showing the latest.
    home.taskChanged("T1", "U1");
    await clock.advance(3_000, settle);
    home.taskChanged("T1", "U1");
    home.taskChanged("T1", "U1");
    await clock.advance(6_999, settle);
    expect(published).toHaveLength(1);
    await clock.advance(1, settle);
    expect(published).toHaveLength(2);
    expect(JSON.stringify(published[1]?.view)).toContain("Build a shop");
    // Another person is not held back by the first one's interval.
    home.taskChanged("T1", "U2");
    await settle();
    expect(published.map((p) => p.user_id)).toEqual(["U1", "U1", "U2"]);
    // After a quiet interval, the next change is shown at once again.
    await clock.advance(20_000, settle);
    home.taskChanged("T1", "U1");
    await settle();
    expect(published).toHaveLength(4);
    home.close();
  });

  it("publishes at once when asked (the tab opened, defaults saved), whatever the interval", async () => {
    const { published, home, settle } = setUp();
    home.taskChanged("T1", "U1");
    await settle();
    await home.publish("T1", "U1");
    await home.publish("T1", "U1");
    expect(published).toHaveLength(3);
    home.close();
  });
});
