import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cluster } from "../support/cluster.ts";
import { testRedisUrl } from "../support/needs.ts";
import { RedisServer } from "../support/redis-server.ts";
import { comparable, markdownOf, NO_MESSAGE, OWNER, statusOf } from "../support/harness.ts";

// This suite runs its own server (persisting to disk, so a restart keeps the data) to stop it.
const haveRedis = testRedisUrl() !== undefined;
const OUTAGE_MS = 30_000;

describe.skipIf(!haveRedis)("Redis outage", () => {
  const redis = new RedisServer({ persist: true });
  let c: Cluster;

  beforeAll(async () => {
    await redis.start();
    c = await Cluster.start({
      redisUrl: redis.url,
      instances: 2,
      // As in cluster.test.ts: a lease an instance starved of CPU for a moment still renews in
      // time (with 2 s, another instance could take a live run over before the outage).
      leaseTtlMs: 6000,
      scanIntervalMs: 300,
    });
  }, 60_000);

  afterAll(async () => {
    await c?.close();
    await redis.close();
  });

  const ready = (id: string) =>
    fetch(`http://127.0.0.1:${c.instance(id).port}/readyz`).then((r) => r.status);
  const healthy = (id: string) =>
    fetch(`http://127.0.0.1:${c.instance(id).port}/healthz`).then((r) => r.status);

  it("answers clearly while Redis is down for 30 s, keeps running, and recovers by itself", async () => {
    // Before: an old thread, and a run streaming when Redis goes away.
    await c.target("i1").command("Old thread [sim:length=200]");
    const oldThread = await c.waitForTaskThread("Old thread");
    await c.waitForFinal(oldThread, 1, 20_000);
    await c.target("i2").command("Through the outage [sim:delay=100] [sim:length=6000]");
    const runThread = await c.waitForTaskThread("Through the outage");
    await c.slack.waitFor(() => c.botReplies(runThread).find((m) => markdownOf(m).length > 200), {
      description: "streaming before the outage",
    });
    expect(await ready("i1")).toBe(200);

    await redis.stop();
    const downAt = Date.now();

    // Meanwhile: probes tell the truth (alive: a restart would not bring Redis back; not ready,
    // and why); people get a clear message, not silence.
    expect(await healthy("i1")).toBe(200);
    expect(await ready("i1")).toBe(503);
    const readiness = await fetch(`http://127.0.0.1:${c.instance("i2").port}/readyz`);
    expect(await readiness.json()).toEqual({ ok: false, running: true, slack: true, store: false });
    expect(await healthy("i2")).toBe(200);
    const before = c.sim.requests.length;
    await c.target("i1").command("During the outage");
    const refusal = await c.slack.waitFor(
      () =>
        c.slack.responseUrlPosts.find((p) =>
          JSON.stringify(p.body).includes("temporarily unavailable"),
        ),
      { timeoutMs: 10_000, description: "an ephemeral 'temporarily unavailable'" },
    );
    expect(JSON.stringify(refusal.body)).toContain("ephemeral");
    expect(c.sim.requests.filter((r) => r.method === "POST").length).toBe(
      before === 0 ? 0 : c.sim.requests.slice(0, before).filter((r) => r.method === "POST").length,
    );
    await c.target("i2").reply(oldThread, "Reply during the outage", { user: OWNER });
    await c.slack.waitFor(
      () =>
        c.slack
          .ephemerals(undefined, OWNER)
          .find((e) => e.thread_ts === oldThread && /temporarily unavailable/.test(e.text)),
      { timeoutMs: 10_000, description: "the reply answered with 'temporarily unavailable'" },
    );
    // The instances stay up.
    expect(c.instance("i1").exitCode).toBeUndefined();
    expect(c.instance("i2").exitCode).toBeUndefined();

    // Redis comes back after 30 s.
    await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - downAt))));
    await redis.start();

    // Recovery, with no help: ready again, the run finished in its message, threads work.
    await c.slack.waitFor(() => false, { timeoutMs: 1 }).catch(() => undefined);
    for (const id of ["i1", "i2"]) {
      const until = Date.now() + 15_000;
      while ((await ready(id)) !== 200) {
        if (Date.now() > until) throw new Error(`${id} never became ready again`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    const replies = await c.waitForFinal(runThread, 1, 30_000);
    const run = c.sim.runs().find((r) => r.promptText.includes("Through the outage"));
    expect(replies).toHaveLength(1);
    expect(comparable(markdownOf(replies[0] ?? NO_MESSAGE))).toBe(comparable(run?.content ?? "x"));
    expect(statusOf(replies[0] ?? NO_MESSAGE)).toMatch(/Completed/);

    await c.target("i1").reply(oldThread, "Reply after the outage [sim:length=100]");
    await c.waitForFinal(oldThread, 2, 20_000);
    await c.target("i2").command("After the outage [sim:length=100]");
    const fresh = await c.waitForTaskThread("After the outage");
    await c.waitForFinal(fresh, 1, 20_000);
    expect(c.slack.validationErrors).toEqual([]);
  }, 120_000);
});
