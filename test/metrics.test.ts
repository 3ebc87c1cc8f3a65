/**
 * The metrics an operator reaches for first, read from the Prometheus text a scrape gets: which
 * version runs, how long runs take by how they ended, how many Slack calls wait for their
 * budget, and what this instance relayed. Labels are bounded sets (methods, states, the
 * version), never a workspace, channel, user or thread.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createPrometheusMetrics } from "../src/metrics.ts";
import { RelayCounters } from "../src/runs/relay-metrics.ts";
import { SlackScheduler } from "../src/slack/scheduler/index.ts";
import { FakeClock } from "./support/fake-clock.ts";

/** The value of one sample line (`name{labels} value`), or undefined when it is not there. */
function sample(text: string, name: string, labels = ""): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

const scrape = (metrics: ReturnType<typeof createPrometheusMetrics>) => metrics.render();
const plain = () => createPrometheusMetrics({ defaultMetrics: false });

describe("the operator's metrics", () => {
  it("say which version of the app runs, on which Node", async () => {
    const { version } = JSON.parse(
      readFileSync(new URL("../package.json", import.meta.url), "utf8"),
    ) as { version: string };
    const text = await scrape(plain());
    const labels = `{version="${version}",node_version="${process.versions.node}"}`;
    expect(sample(text, "taskbot_build_info", labels)).toBe(1);
  });

  it("time each run from its request to its final state, by that state", async () => {
    const metrics = plain();
    const counters = new RelayCounters(metrics);
    counters.ended("completed", 90_000);
    counters.ended("completed", 4000);
    counters.ended("stopped", 700_000);
    const text = await scrape(metrics);
    const run = "taskbot_run_duration_seconds";
    expect(sample(text, `${run}_count`, '{state="completed"}')).toBe(2);
    expect(sample(text, `${run}_sum`, '{state="completed"}')).toBe(94);
    expect(sample(text, `${run}_bucket`, '{le="5",state="completed"}')).toBe(1);
    expect(sample(text, `${run}_bucket`, '{le="120",state="completed"}')).toBe(2);
    expect(sample(text, `${run}_bucket`, '{le="600",state="stopped"}')).toBe(0);
    expect(sample(text, `${run}_bucket`, '{le="1200",state="stopped"}')).toBe(1);
    expect(sample(text, "taskbot_runs_ended_total", '{state="completed"}')).toBe(2);
  });

  it("count the runs this instance handed over to another, beside those it started and ended", async () => {
    const metrics = plain();
    const counters = new RelayCounters(metrics);
    counters.started();
    counters.resumed();
    counters.handedOver();
    const text = await scrape(metrics);
    expect(sample(text, "taskbot_runs_handed_over_total")).toBe(1);
    expect(sample(text, "taskbot_runs_started_total", '{how="new"}')).toBe(1);
    expect(sample(text, "taskbot_runs_started_total", '{how="resumed"}')).toBe(1);
  });

  it("show the Slack calls waiting for their budget by method, every workspace together, and their wait", async () => {
    const clock = new FakeClock();
    const metrics = plain();
    const scheduler = new SlackScheduler({
      clock,
      metrics,
      // One call a minute (two, less the safety margin): posts go while the window has room.
      budgets: { "chat.postMessage": { perMinute: 2, burst: 1 } },
    });
    metrics.countQueuedSlackCalls(() => scheduler.queueDepth());
    const calls: Promise<unknown>[] = [];
    for (const team of ["T1", "T2", "T3"]) {
      for (let i = 0; i < 4; i++) {
        calls.push(scheduler.schedule(team, "chat.postMessage", async () => undefined));
      }
    }
    await scheduler.settled();
    const waiting = await scrape(metrics);
    // One call per workspace went at once (its minute's one); the others wait, in one figure.
    expect(sample(waiting, "taskbot_slack_queue_depth", '{method="chat.postMessage"}')).toBe(9);
    expect(waiting).not.toMatch(/taskbot_slack_queue_depth\{[^}]*team/);
    await clock.advance(4 * 61_000, () => scheduler.settled());
    await Promise.all(calls);
    const drained = await scrape(metrics);
    expect(sample(drained, "taskbot_slack_queue_depth", '{method="chat.postMessage"}')).toBe(0);
    const wait = "taskbot_slack_queue_wait_seconds";
    expect(sample(drained, `${wait}_count`, '{method="chat.postMessage"}')).toBe(12);
    expect(sample(drained, `${wait}_sum`, '{method="chat.postMessage"}')).toBeGreaterThan(0);
    await scheduler.close();
  });
});
