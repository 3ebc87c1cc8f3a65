/**
 * Many tasks at once in one channel, and a result stream the service refuses: the work
 * reaches the service at once whatever Slack's posting budget, the messages follow in the
 * order the tasks were asked, and a refused stream falls back to polling.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { comparable, Harness, markdownOf, NO_MESSAGE, statusOf } from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";

const TASKS = 6;

describe.each(storeBackends())("a burst of tasks in one channel with %s", (_name, redis) => {
  let h: Harness;
  beforeAll(async () => {
    // About two posts a second in the channel (Slack's is about one): twelve posts take a while.
    h = await Harness.start({ redisUrl: redis, rateLimits: { "chat.postMessage": 120 } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("reaches the service with every task at once, then posts them in the order they were asked", async () => {
    const labels = Array.from({ length: TASKS }, (_, i) => `Burst task ${i} of the meeting`);
    const from = h.slack.calls.length;
    const createdAt = new Map<string, number>();
    const onRun = (info: { id: string }) => createdAt.set(info.id, Date.now());
    h.sim.events.on("run", onRun);
    for (const label of labels) {
      expect((await h.command(`${label} [sim:length=200] [sim:delay=5]`)).status).toBe(200);
    }
    // The channel's budget lets the last prompt out about 4.5 s after the first: more than
    // the default wait, so the wait is as long as the answers'.
    const threads = await Promise.all(labels.map((l) => h.waitForTaskThread(l, 30_000)));
    await Promise.all(threads.map((ts) => h.waitForFinal(ts, 1, 30_000)));

    h.sim.events.off("run", onRun);
    const runs = labels.map((l) => h.sim.runs().find((r) => r.promptText.includes(l)));
    const created = runs.map((r) => createdAt.get(r?.id ?? "") ?? Infinity);
    const posts = h.slack.calls
      .slice(from)
      .filter((c) => c.method === "chat.postMessage" && c.response.ok);
    // Every task reached the service before the channel's budget let its last prompt out.
    const prompts = labels.map(
      (l) =>
        posts.find((c) => c.args.thread_ts === undefined && JSON.stringify(c.args).includes(l))
          ?.at ?? 0,
    );
    const lastPrompt = Math.max(...prompts);
    for (const at of created) expect(at).toBeLessThan(lastPrompt);
    // First come, first served: each task's prompt and working message before the next's.
    const order = posts.map((c) => {
      const parent =
        c.args.thread_ts === undefined ? String(c.response.ts) : String(c.args.thread_ts);
      return threads.indexOf(parent);
    });
    const firstOfEach = threads.map((_, i) => order.indexOf(i));
    expect([...firstOfEach].sort((a, b) => a - b)).toEqual(firstOfEach);
    // All complete, with the whole answer.
    for (const [i, ts] of threads.entries()) {
      const [answer] = h.botReplies(ts);
      expect(statusOf(answer ?? NO_MESSAGE)).toMatch(/Completed in/);
      expect(comparable(markdownOf(answer ?? NO_MESSAGE))).toBe(
        comparable(runs[i]?.content ?? "x"),
      );
    }
    expect(h.slack.rateLimited).toBe(0);
  });

  it.each([404, 405, 501])(
    "shows the whole answer by polling when the service refuses the result stream with %i",
    async (status) => {
      const label = `Stream refused ${status}`;
      h.sim.injectFault({ endpoint: "stream", status, times: 1 });
      await h.command(`${label} [sim:length=300]`);
      const threadTs = await h.waitForTaskThread(label);
      const [answer] = await h.waitForFinal(threadTs, 1, 30_000);
      const run = h.sim.runs().find((r) => r.promptText.includes(label));
      expect(statusOf(answer ?? NO_MESSAGE)).toMatch(/Completed in/);
      expect(comparable(markdownOf(answer ?? NO_MESSAGE))).toBe(comparable(run?.content ?? "x"));
      const asked = h.sim.requests.filter((q) => q.path.includes(String(run?.threadId)));
      expect(asked.some((q) => q.query.realtime === "true" && q.status === status)).toBe(true);
      expect(asked.some((q) => q.query.realtime !== "true" && q.status === 200)).toBe(true);
    },
  );
});
