/**
 * A run at the edge of the chat.update budget: when its stream ends while an interim edit is
 * still waiting for a token, that edit is dropped and the final edit takes its turn, so the
 * finished answer shows one budget refill earlier and no call is spent on a stale text.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHANNEL, comparable, Harness, markdownOf, statusOf } from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";

describe.each(storeBackends())("edits at the chat.update budget with %s", (_name, redis) => {
  let h: Harness;
  beforeAll(async () => {
    // 12 a minute × 0.9: after the burst of 3, one edit every ~5.6 s for the whole workspace.
    h = await Harness.start({ redisUrl: redis, rateLimits: { "chat.update": 12 } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("shows the final answer in the next edit it can make, without first sending a stale interim one", async () => {
    const prompt = "Draft a changelog [sim:length=1200] [sim:chunk=24] [sim:delay=30]";
    await h.command(prompt);
    const threadTs = await h.waitForTaskThread("Draft a changelog");
    const [answer] = await h.waitForFinal(threadTs, 1, 30_000);
    if (!answer) throw new Error("no answer");
    const run = h.sim.runs().find((r) => r.prompt === prompt);
    expect(run?.status).toBe("completed");
    expect(comparable(markdownOf(answer))).toBe(comparable(run?.content ?? "x"));
    expect(statusOf(answer)).toMatch(/Completed/);

    const edits = h.slack.calls.filter(
      (c) => c.method === "chat.update" && c.args.channel === CHANNEL && c.args.ts === answer.ts,
    );
    // The burst's three interim edits, then the final one: the interim text that was waiting
    // for a token when the stream ended never went out.
    expect(edits.map((c) => c.status)).toEqual([200, 200, 200, 200]);
    expect(JSON.stringify(edits.slice(0, 3).map((c) => c.args))).not.toMatch(/Completed/);
    expect(JSON.stringify(edits[3]?.args)).toMatch(/Completed/);
    const metrics = (await (await fetch(`http://127.0.0.1:${h.app.port}/metrics.json`)).json()) as {
      slack: { superseded: number };
    };
    expect(metrics.slack.superseded).toBeGreaterThanOrEqual(1);
  }, 40_000);
});
