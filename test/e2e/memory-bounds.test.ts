/**
 * Answers that would take the app's memory, end to end (the app against the service simulator
 * misbehaving on purpose and the Slack double): each ends in a plain message in its thread,
 * and another person's task is served meanwhile. Small budgets (1 MiB of answer, 3 MiB of
 * files) so that each shape passes them in seconds; `npm run bench:memory` drives the default
 * budgets with hundreds of MB and measures the process.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Harness, markdownOf, NO_MESSAGE, OTHER, statusOf } from "../support/harness.ts";

describe("answers past the app's memory budgets", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({
      env: { TASK_ANSWER_MAX_MB: "1", TASK_FILES_MAX_MB: "3", TASK_MEMORY_MAX_MB: "16" },
      // Dropped streams come back at once, so that the fall-back to polling is quick.
      simulator: { chunkDelayMs: 2 },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const run = (label: string) => h.sim.runs().find((r) => r.promptText.startsWith(label));

  it("stops an answer that never ends at its budget, says so, and attaches what it kept", async () => {
    const label = "Talk forever";
    await h.command(`${label} [sim:abuse=runaway] [sim:chunk=20000] [sim:delay=5]`);
    const threadTs = await h.waitForTaskThread(label);
    // Another person's task is served while it runs.
    await h.command("Write a haiku [sim:length=200]", { user: OTHER });
    await h.waitForFinal(await h.waitForTaskThread("Write a haiku"));

    const replies = await h.waitForFinal(threadTs, 1, 30_000);
    const status = statusOf(replies.at(-1) ?? NO_MESSAGE);
    expect(status).toMatch(/Stopped after/);
    expect(status).toContain("passed 1.0 MB, the most this app keeps of one answer");
    expect(run(label)?.status).toBe("stopped");
    // What came first is in the thread whole, and nothing beyond the budget.
    const file = h.slack.files().find((f) => f.thread_ts === threadTs && f.name === "answer.md");
    const kept = file?.bytes.toString("utf8") ?? "";
    expect(kept.length).toBeGreaterThan(900_000);
    expect(kept.length).toBeLessThanOrEqual(1024 * 1024);
    expect(run(label)?.content.startsWith(kept)).toBe(true);
  });

  it("follows a run whose stream is one event that never ends by polling, to its whole answer", async () => {
    const label = "Comment flood";
    await h.command(`${label} [sim:abuse=comments] [sim:length=2000]`);
    const threadTs = await h.waitForTaskThread(label);
    const replies = await h.waitForFinal(threadTs, 1, 60_000);
    expect(statusOf(replies.at(-1) ?? NO_MESSAGE)).toMatch(/Completed in/);
    expect(markdownOf(replies[0] ?? NO_MESSAGE).length).toBeGreaterThan(1500);
  });

  it("stops a run whose stream is answered with JSON that never ends, and says so", async () => {
    const label = "Endless JSON";
    await h.command(`${label} [sim:abuse=json] [sim:length=2000] [sim:delay=200]`);
    const threadTs = await h.waitForTaskThread(label);
    const replies = await h.waitForFinal(threadTs, 1, 30_000);
    const status = statusOf(replies.at(-1) ?? NO_MESSAGE);
    expect(status).toMatch(/Stopped after/);
    expect(status).toContain("the task service sent more than this app reads at once");
    expect(status).toContain("answer to the result stream is larger than 5.0 MB");
  });

  it("brings files of many MB in one at a time within the budget, and lists one past it", async () => {
    const label = "Render the clips";
    // Three clips of 2 MiB (2.7 MB as base64: one at a time in 3 MiB) and one of 4 MiB.
    await h.command(`${label} [sim:bigfiles=3x2] [sim:length=300]`);
    const threadTs = await h.waitForTaskThread(label);
    await h.waitForFinal(threadTs, 1, 60_000);
    const clips = run(label)?.files ?? [];
    const files = h.slack.files().filter((f) => f.thread_ts === threadTs && f.completed);
    expect(files.map((f) => f.name).sort()).toEqual(["clip-1.mp4", "clip-2.mp4", "clip-3.mp4"]);
    // Whole, and each its own (the simulator's bytes differ from clip to clip).
    for (const f of files) expect(f.bytes.length).toBe(2 * 1024 * 1024);
    expect(new Set(files.map((f) => f.bytes.toString("base64", 0, 96))).size).toBe(3);
    expect(clips).toHaveLength(3);
    // One file a message: each took the run's budget alone.
    const uploads = h.slack.calls.filter(
      (c) => c.method === "files.completeUploadExternal" && c.args.thread_ts === threadTs,
    );
    expect(uploads).toHaveLength(3);

    const big = "Render the long clip";
    await h.command(`${big} [sim:bigfiles=1x4] [sim:length=300]`);
    const bigTs = await h.waitForTaskThread(big);
    const replies = await h.waitForFinal(bigTs, 1, 60_000);
    expect(h.slack.files().filter((f) => f.thread_ts === bigTs)).toEqual([]);
    expect(JSON.stringify(replies.at(-1))).toContain(
      "clip-1.mp4` (4.0 MB): larger than 3.0 MB, the most this app brings into Slack at once",
    );
    expect(h.slack.validationErrors).toEqual([]);
  });
});
