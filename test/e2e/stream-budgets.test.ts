/**
 * Answers at Slack's stream budgets, on both stores: in auto mode a run streams natively when
 * edits are shared and chat.startStream (Tier 2) lets it start at once, and edits otherwise, so
 * runs of one workspace stream both ways at once; a stream older than the rotation time goes on in a new streamed
 * message, and after a crash another instance finishes it from what was shown; a final answer
 * shows whole before its chat.stopStream, which waits for the budget. The local Slack enforces
 * the same tiers as the app's budgets: no call is ever answered 429.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordedCall, SlackMessage } from "../../tools/local-slack/index.ts";
import { Cluster } from "../support/cluster.ts";
import { CHANNEL, comparable, Harness, markdownOf, statusOf } from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";

/** Calls per minute, the same for the app's budgets and the local Slack's tiers. */
function tiers(perMinute: Record<string, number>) {
  return {
    rateLimits: perMinute,
    slack: {
      tiers: Object.fromEntries(Object.entries(perMinute).map(([m, n]) => [m, { perMinute: n }])),
    },
  };
}

/** What a message of the answer shows: its markdown blocks, or what was streamed into it. */
const shownText = (m: SlackMessage) => markdownOf(m) || m.text;

/** The bot's messages in a thread, streamed parts without blocks too, in order. */
function answerMessages(h: Harness | Cluster, threadTs: string): SlackMessage[] {
  return h.slack
    .thread(CHANNEL, threadTs)
    .filter((m) => m.ts !== threadTs && m.user === h.slack.botUserId);
}

const startsIn = (calls: readonly RecordedCall[], threadTs: string) =>
  calls.filter((c) => c.method === "chat.startStream" && c.args.thread_ts === threadTs);

const contentOf = (h: Harness | Cluster, label: string) =>
  h.sim.runs().find((r) => r.promptText.includes(label))?.content ?? "x";

describe.each(storeBackends())("answers at Slack's stream budgets with %s", (_name, redis) => {
  describe("in auto mode, with one stream start at once", () => {
    let h: Harness;
    beforeAll(async () => {
      h = await Harness.start({
        redisUrl: redis,
        streaming: "auto",
        ...tiers({
          "chat.startStream": 2,
          "chat.stopStream": 20,
          "chat.appendStream": 100,
          "chat.update": 50,
        }),
      });
    });
    afterAll(async () => {
      await h?.close();
    });

    it("streams one answer natively and edits the others, all at once in one workspace", async () => {
      const labels = ["Mixed one", "Mixed two", "Mixed three", "Mixed four"];
      await Promise.all(labels.map((l) => h.command(`${l} [sim:delay=20] [sim:length=1500]`)));
      const threads = await Promise.all(labels.map((l) => h.waitForTaskThread(l)));
      const finals = await Promise.all(threads.map((t) => h.waitForFinal(t)));

      // The first run to have lines edits (alone, edits are fresher); the next one streams on
      // the one start token there is at once; the others edit.
      const native = threads.filter((t) => startsIn(h.slack.calls, t).length > 0);
      expect(native).toHaveLength(1);
      for (const [i, threadTs] of threads.entries()) {
        const replies = finals[i] ?? [];
        expect(replies).toHaveLength(1);
        const [answer] = replies;
        if (!answer) throw new Error("no answer");
        expect(comparable(markdownOf(answer))).toBe(comparable(contentOf(h, labels[i] ?? "")));
        expect(statusOf(answer)).toMatch(/Completed in/);
        const edits = h.slack.calls.filter(
          (c) => c.method === "chat.update" && c.args.ts === answer.ts,
        );
        if (threadTs === native[0]) {
          expect(answer.ts).toBe(startsIn(h.slack.calls, threadTs)[0]?.response.ts);
        } else {
          // The working message, edited (at least with the final answer; interim edits as the
          // shared budget allows).
          expect(edits.length).toBeGreaterThanOrEqual(1);
        }
      }
      expect(h.slack.rateLimited).toBe(0);
      expect(h.slack.validationErrors).toEqual([]);
    });
  });

  describe("native streaming's cost", () => {
    let h: Harness;
    beforeAll(async () => {
      h = await Harness.start({ redisUrl: redis, streaming: "native" });
    });
    afterAll(async () => {
      await h?.close();
    });

    it("spends two posts, a start, its appends, a stop and a delete: the stop shows the status, no edit", async () => {
      const label = "Counted answer";
      const from = h.slack.calls.length;
      await h.command(`${label} [sim:delay=15] [sim:length=2000]`);
      const threadTs = await h.waitForTaskThread(label);
      const [answer] = await h.waitForFinal(threadTs);
      const count = (method: string) =>
        h.slack.calls.slice(from).filter((c) => c.method === method && c.response.ok).length;
      // The task's message and the working message (with Stop while the answer streams).
      expect(count("chat.postMessage")).toBe(2);
      expect(count("chat.startStream")).toBe(1);
      expect(count("chat.appendStream")).toBeGreaterThanOrEqual(1);
      expect(count("chat.stopStream")).toBe(1);
      expect(count("chat.update")).toBe(0);
      expect(count("chat.delete")).toBe(1);
      expect(statusOf(answer ?? { channel: "", ts: "", user: "", text: "" })).toMatch(
        /Completed in/,
      );
      expect(answer?.metadata).toMatchObject({ event_type: "task_completed" });
      expect(comparable(markdownOf(answer ?? { channel: "", ts: "", user: "", text: "" }))).toBe(
        comparable(contentOf(h, label)),
      );
    });
  });

  describe("a stream its reader stops", () => {
    let h: Harness;
    beforeAll(async () => {
      h = await Harness.start({ redisUrl: redis, streaming: "native" });
    });
    afterAll(async () => {
      await h?.close();
    });

    it("spends no stop on a stream its reader stopped, and finishes the answer by edits", async () => {
      const label = "Reader stops";
      const from = h.slack.calls.length;
      await h.command(`${label} [sim:delay=20] [sim:length=2500]`);
      const threadTs = await h.waitForTaskThread(label);
      const started = await h.slack.waitForCall(
        (c) => c.method === "chat.startStream" && c.args.thread_ts === threadTs,
        { fromIndex: from, timeoutMs: 40_000 },
      );
      const ts = String(started.response.ts);
      h.slack.expireStream(CHANNEL, ts, "stopped_by_user");
      const [answer] = await h.waitForFinal(threadTs);
      expect(answer?.ts).toBe(ts);
      expect(comparable(markdownOf(answer ?? { channel: "", ts: "", user: "", text: "" }))).toBe(
        comparable(contentOf(h, label)),
      );
      expect(h.slack.calls.some((c) => c.method === "chat.stopStream" && c.args.ts === ts)).toBe(
        false,
      );
      expect(h.slack.rateLimited).toBe(0);
    }, 60_000);
  });

  describe("rotating native streams every second", () => {
    let h: Harness;
    beforeAll(async () => {
      h = await Harness.start({
        redisUrl: redis,
        streaming: "native",
        env: { SLACK_STREAM_ROTATE_S: "1" },
        ...tiers({ "chat.startStream": 600, "chat.stopStream": 600, "chat.appendStream": 600 }),
      });
    });
    afterAll(async () => {
      await h?.close();
    });

    it("goes on in new streamed messages of the thread, with nothing lost or repeated", async () => {
      const label = "Rotating answer";
      await h.command(`${label} [sim:delay=40] [sim:chunk=40] [sim:length=5000]`);
      const threadTs = await h.waitForTaskThread(label);
      await h.waitForFinal(threadTs, 1, 30_000);
      const parts = answerMessages(h, threadTs);
      const starts = startsIn(h.slack.calls, threadTs);
      expect(starts.length).toBeGreaterThanOrEqual(3);
      // Every stream message is a part of the answer, in order; the working message is gone.
      expect(parts.map((m) => m.ts)).toEqual(starts.map((c) => c.response.ts));
      expect(parts.every((m) => m.streaming_state === "completed")).toBe(true);
      expect(comparable(parts.map(shownText).join(""))).toBe(comparable(contentOf(h, label)));
      expect(statusOf(parts.at(-1) ?? { channel: "", ts: "", user: "", text: "" })).toMatch(
        /Completed in/,
      );
      // No part is edited: each keeps what it streamed, the last one's stop added the status.
      expect(h.slack.calls.filter((c) => c.method === "chat.update")).toEqual([]);
      expect(h.slack.validationErrors).toEqual([]);
    }, 40_000);
  });

  describe("a stop that waits for its budget", () => {
    let h: Harness;
    beforeAll(async () => {
      // One stop token, then one every ~23 s.
      h = await Harness.start({
        redisUrl: redis,
        streaming: "native",
        ...tiers({ "chat.startStream": 600, "chat.stopStream": 4, "chat.appendStream": 100 }),
      });
    });
    afterAll(async () => {
      await h?.close();
    });

    it("shows the whole final answer at once, then stops the stream and adds the status when the budget allows", async () => {
      await h.command("Spends the stop [sim:delay=10] [sim:length=800]");
      await h.waitForFinal(await h.waitForTaskThread("Spends the stop"));

      const label = "Waits for its stop";
      await h.command(`${label} [sim:delay=10] [sim:length=1500]`);
      const threadTs = await h.waitForTaskThread(label);
      const started = await h.slack.waitForCall(
        (c) => c.method === "chat.startStream" && c.args.thread_ts === threadTs,
      );
      const ts = String(started.response.ts);
      const run = () => h.sim.runs().find((r) => r.promptText.includes(label));
      const stream = await h.slack.waitFor(
        () => {
          const m = h.slack.message(CHANNEL, ts);
          return run()?.status === "completed" &&
            m !== undefined &&
            comparable(m.text) === comparable(run()?.content ?? "x")
            ? m
            : undefined;
        },
        { description: "the whole answer in the stream message" },
      );
      // Whole, while its stop still waits for a token: content never waits for Tier 2.
      expect(stream.streaming_state).toBe("in_progress");
      expect(h.slack.calls.some((c) => c.method === "chat.stopStream" && c.args.ts === ts)).toBe(
        false,
      );

      const [answer] = await h.waitForFinal(threadTs, 1, 45_000);
      expect(answer?.ts).toBe(ts);
      expect(statusOf(answer ?? stream)).toMatch(/Completed in/);
      expect(comparable(markdownOf(answer ?? stream))).toBe(comparable(run()?.content ?? "x"));
      expect(h.slack.rateLimited).toBe(0);
    }, 60_000);
  });

  describe("a crash during a rotated stream", () => {
    let c: Cluster;
    beforeAll(async () => {
      c = await Cluster.start({
        redisUrl: redis,
        instances: 1,
        leaseTtlMs: 1500,
        env: {
          SLACK_STREAMING: "native",
          SLACK_STREAM_ROTATE_S: "1",
          SLACK_RATE_LIMITS: JSON.stringify({
            "chat.startStream": 600,
            "chat.stopStream": 600,
            "chat.appendStream": 600,
            "chat.update": 600,
            "chat.postMessage": 600,
            "chat.delete": 600,
          }),
        },
      });
    }, 60_000);
    afterAll(async () => {
      await c?.close();
    });

    it("is finished by another instance from what was shown, with nothing lost or repeated", async () => {
      const label = "Crash mid rotation";
      const from = c.slack.calls.length;
      await c.target("i1").command(`${label} [sim:delay=60] [sim:chunk=40] [sim:length=6000]`);
      const threadTs = await c.waitForTaskThread(label);
      // The second stream message has had an append: the record knows the first part is sealed.
      const second = await c.slack.waitFor(
        () => startsIn(c.slack.calls.slice(from), threadTs)[1]?.response.ts,
        { description: "a rotated stream", timeoutMs: 20_000 },
      );
      await c.slack.waitForCall((x) => x.method === "chat.appendStream" && x.args.ts === second, {
        fromIndex: from,
      });
      await c.kill("i1", "SIGKILL");
      await c.spawn("i2");
      await c.waitForFinal(threadTs, 1, 40_000);
      // Then the working message goes: the answer lives in the stream messages.
      const parts = await c.slack.waitFor(
        () => {
          const all = answerMessages(c, threadTs);
          return all.every((m) => !shownText(m).includes("Working on it")) && all;
        },
        { description: "the working message removed" },
      );
      expect(parts.length).toBeGreaterThanOrEqual(2);
      expect(comparable(parts.map(shownText).join(""))).toBe(comparable(contentOf(c, label)));
      expect(statusOf(parts.at(-1) ?? { channel: "", ts: "", user: "", text: "" })).toMatch(
        /Completed in/,
      );
      expect(c.slack.validationErrors).toEqual([]);
    }, 90_000);
  });
});
