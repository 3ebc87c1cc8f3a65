/**
 * The benchmark's own judgement of issue 24: the long run's text check, how long a budget's
 * sliding minute was full, which budget ran out, and the physical bound of a scenario.
 */
import { describe, expect, it } from "vitest";
import {
  benchWorkload,
  type BucketUse,
  fullWindowMs,
  physicalBound,
  ranOut,
} from "../../bench/budgets.ts";
import { checkText } from "../../bench/long-run.ts";

const answer = Array.from(
  { length: 40 },
  (_, i) => `Paragraph ${i}: the migration step ${i * 7} moved table t${i} to the new cluster.`,
).join("\n\n");

describe("the long run's text check", () => {
  it("passes a thread that shows the answer split over messages with fences and spaces", () => {
    const half = answer.length / 2;
    const shown = `${answer.slice(0, half)}\n\`\`\`\n\n\u200B${answer.slice(half)}`;
    expect(checkText(shown, answer)).toMatchObject({
      complete: true,
      inOrder: true,
      noDuplicates: true,
    });
  });

  it("finds text that is missing", () => {
    const cut = answer.indexOf("Paragraph 20");
    const shown = answer.slice(0, cut) + answer.slice(answer.indexOf("Paragraph 21"));
    const check = checkText(shown, answer);
    expect(check.complete).toBe(false);
    expect(check.detail).toMatch(/characters missing/);
  });

  it("finds text shown twice, as when a rotated stream repeats what was shown", () => {
    const cut = answer.indexOf("Paragraph 30");
    const shown = answer.slice(0, cut) + answer.slice(answer.indexOf("Paragraph 28"));
    const check = checkText(shown, answer);
    expect(check).toMatchObject({ complete: true, noDuplicates: false });
  });

  it("finds text out of order", () => {
    const a = answer.indexOf("Paragraph 10");
    const b = answer.indexOf("Paragraph 20");
    const shown = answer.slice(0, a) + answer.slice(b) + answer.slice(a, b);
    const check = checkText(shown, answer);
    expect(check).toMatchObject({ complete: true, inOrder: false });
  });
});

describe("budget use", () => {
  it("counts the time a sliding minute holds the limit", () => {
    expect(fullWindowMs([0, 10, 20, 30], 2)).toBe(60_010);
    expect(fullWindowMs([0, 70_000], 2)).toBe(0);
    expect(fullWindowMs([0, 30_000, 90_000, 100_000], 2)).toBe(30_000 + 50_000);
  });

  it("names the budget whose calls waited longest, and for posts the one that was full", () => {
    const use = (key: string, waitMaxMs: number, fullMs = 0): BucketUse => ({
      key,
      calls: 1,
      fullMs,
      waitMeanMs: waitMaxMs / 2,
      waitMaxMs,
    });
    expect(ranOut([use("chat.update", 30_000), use("startStream", 5_000)])?.key).toBe(
      "chat.update",
    );
    expect(
      ranOut([use("postMessage", 9_000, 1_000), use("postMessage per channel", 9_000, 20_000)])
        ?.key,
    ).toBe("postMessage per channel");
    // The app's own one-edit-a-second pacing is not a budget running out.
    expect(ranOut([use("chat.update", 990)])).toBeUndefined();
  });
});

describe("the physical bound", () => {
  it("grows with the number of runs sharing the workspace's budgets", () => {
    const bound = (runs: number) =>
      physicalBound(
        benchWorkload(runs, 125, (i) => 40 + ((i * 7) % 21)),
        { scale: 1 },
      );
    const one = bound(1);
    const ten = bound(10);
    const fifty = bound(50);
    expect(one.p95).toBeDefined();
    expect(ten.p50 ?? 0).toBeGreaterThan(one.p50 ?? 0);
    expect(fifty.p95 ?? 0).toBeGreaterThan(ten.p95 ?? 0);
  });

  it("is the same shape at scaled budgets: 25× the runs with 25× the budgets is no slower", () => {
    const workload = (runs: number) => benchWorkload(runs, 60, () => 200);
    const real = physicalBound(workload(10), { scale: 1 });
    const scaled = physicalBound(workload(250), { scale: 25 });
    expect(scaled.p95 ?? Infinity).toBeLessThanOrEqual((real.p95 ?? 0) * 1.5);
  });
});
