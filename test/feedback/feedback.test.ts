/**
 * Feedback on an answer: people clicking 👍/👎 on the same answer at the same moment each
 * have their vote kept.
 */
import { describe, expect, it } from "vitest";
import { FeedbackRecorder } from "../../src/feedback/feedback.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";

const ref = { runId: "run_1", channelId: "C0123", threadTs: "1700000000.000100" };

describe("FeedbackRecorder", () => {
  it("keeps every person's vote when several click on one answer at once", async () => {
    const counted: string[] = [];
    const recorder = new FeedbackRecorder({
      records: createMemoryStore(),
      metrics: { feedback: (kind) => void counted.push(kind) },
    });
    const users = ["U1", "U2", "U3", "U4"];
    const changed = await Promise.all(
      users.map((userId, i) =>
        recorder.record({
          teamId: "T1",
          userId,
          kind: i % 2 === 0 ? "positive" : "negative",
          ref,
        }),
      ),
    );
    expect(changed).toEqual([true, true, true, true]);
    const kept = await recorder.votes("T1", ref.runId);
    expect(kept?.votes.map((v) => v.userId).sort()).toEqual(users);
    expect(counted).toHaveLength(4);
  });

  it("counts a person's repeated click once, and their changed mind as their one vote", async () => {
    const recorder = new FeedbackRecorder({
      records: createMemoryStore(),
      metrics: { feedback: () => undefined },
    });
    const vote = { teamId: "T1", userId: "U1", ref } as const;
    const [first, again] = await Promise.all([
      recorder.record({ ...vote, kind: "positive" }),
      recorder.record({ ...vote, kind: "positive" }),
    ]);
    expect([first, again]).toEqual([true, false]);
    expect(await recorder.record({ ...vote, kind: "negative" })).toBe(true);
    const kept = await recorder.votes("T1", ref.runId);
    expect(kept?.votes.map((v) => [v.userId, v.kind])).toEqual([["U1", "negative"]]);
  });
});
