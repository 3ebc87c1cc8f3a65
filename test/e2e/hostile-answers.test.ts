/**
 * An answer written to hurt: a 300,000-character line of "[" (what a member gets by asking
 * for it, or a broken service sends). While it streams, other people's commands and the
 * health check keep answering within Slack's 3-second deadline (before, each interim render
 * of its first 60,000 characters took seconds, and the whole process waited); when it ends,
 * the thread has every character of it: the messages show its head, `answer.md` all of it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Harness, markdownOf, NO_MESSAGE, OTHER, statusOf } from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";
import { until } from "../support/until.ts";

/** Slack's deadline for an answer to a slash command; the health check gets no more. */
const DEADLINE_MS = 3000;

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

describe.each(storeBackends())("a hostile answer with %s", (_name, redis) => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ redisUrl: redis });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("leaves others' tasks and /healthz answering in time, and attaches every character as answer.md", async () => {
    const prompt = "Print brackets [sim:hostile=brackets] [sim:length=300000]";
    await h.command(`${prompt} [sim:chunk=1000] [sim:delay=15]`);
    const threadTs = await h.waitForTaskThread("Print brackets");
    const run = () => h.sim.runs().find((r) => r.promptText.startsWith("Print brackets"));
    // The thread is posted before the task exists on the service: probe once it runs.
    await until("the hostile run to start", () => run() !== undefined);
    // While it streams (300 events, at least 4.5 s), the health check and another person's
    // task are served; both are asked at once, so neither waits for the other.
    const health: number[] = [];
    const probing = (async () => {
      while (run()?.status === "running") {
        const probe = await timed(() => fetch(`http://127.0.0.1:${h.app.port}/healthz`));
        expect(probe.value.status).toBe(200);
        health.push(probe.ms);
      }
    })();
    const other = await timed(() => h.command("Write a haiku [sim:length=200]", { user: OTHER }));
    await probing;
    expect(health.length).toBeGreaterThan(3);
    expect(Math.max(...health)).toBeLessThan(DEADLINE_MS);
    expect(other.value.status).toBe(200);
    expect(other.ms).toBeLessThan(DEADLINE_MS);
    await h.waitForFinal(await h.waitForTaskThread("Write a haiku"));

    const replies = await h.waitForFinal(threadTs, 1, 60_000);
    const answer = run()?.content ?? "missing";
    expect(answer).toBe("[".repeat(300_000));
    // The messages stay within Slack's limits and say where the rest is…
    for (const m of replies) expect(markdownOf(m).length).toBeLessThanOrEqual(10_000);
    expect(statusOf(replies.at(-1) ?? NO_MESSAGE)).toMatch(/Completed/);
    expect(replies.map(markdownOf).join("")).toContain("all of it is in `answer.md`");
    // …and the file in the thread is the whole answer, byte for byte.
    const files = h.slack.files().filter((f) => f.thread_ts === threadTs && f.completed);
    expect(files.map((f) => f.name)).toEqual(["answer.md"]);
    expect(files[0]?.bytes.toString("utf8")).toBe(answer);
    expect(h.slack.validationErrors).toEqual([]);
  });

  it("attaches an answer just past 60,000 characters whole, and none to a shorter one", async () => {
    await h.command("Write the long handbook [sim:length=60010] [sim:chunk=2000] [sim:delay=2]");
    const threadTs = await h.waitForTaskThread("Write the long handbook");
    await h.waitForFinal(threadTs, 1, 30_000);
    const run = h.sim.runs().find((r) => r.promptText.startsWith("Write the long handbook"));
    const file = h.slack.files().find((f) => f.thread_ts === threadTs && f.name === "answer.md");
    expect(run?.content.length).toBeGreaterThan(60_000);
    expect(file?.bytes.toString("utf8")).toBe(run?.content);

    await h.command("Write the short handbook [sim:length=59000] [sim:chunk=2000] [sim:delay=2]");
    const shortTs = await h.waitForTaskThread("Write the short handbook");
    await h.waitForFinal(shortTs, 1, 30_000);
    expect(h.slack.files().filter((f) => f.thread_ts === shortTs)).toEqual([]);
  });
});
