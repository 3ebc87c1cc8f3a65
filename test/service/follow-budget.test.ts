/**
 * Following a run within what its text may take: the text kept (the reconciler's, hence the
 * run's) never passes its budget, whether it grows by deltas, by snapshots or by the final
 * result; and reconnections after a blip are spread out, not all at the same instant.
 */
import { describe, expect, it } from "vitest";
import { TaskServiceError } from "../../src/service/errors.ts";
import {
  followRun,
  reconnectDelay,
  type RunUpdate,
  type TextBudget,
} from "../../src/service/follow.ts";
import { FakeTaskService } from "../support/fakes/task-service.ts";

/** A budget of `max` bytes that counts what it granted. */
function budget(max: number): TextBudget & { granted: number } {
  return {
    maxBytes: max,
    granted: 0,
    grow(bytes) {
      if (this.granted + bytes > max) return false;
      this.granted += bytes;
      return true;
    },
  };
}

/** Follows to the end; the deltas yielded, and what it ended with (a result or an error). */
async function follow(service: FakeTaskService, textBudget: TextBudget) {
  const created = await service.createTask({ prompt: "go" });
  const ref = { projectId: created.project_id, threadId: created.thread_id };
  const run = followRun(
    service,
    { ...ref, agentRunId: created.agent_run_id },
    {
      textBudget,
      reconnectDelayMs: 1,
    },
  );
  const deltas: string[] = [];
  try {
    for (;;) {
      const step = await run.next();
      if (step.done) return { deltas, end: step.value as unknown };
      const u: RunUpdate = step.value;
      if (u.type === "delta") deltas.push(u.text);
    }
  } catch (err) {
    return { deltas, end: err };
  }
}

const isTooLarge = (err: unknown) => err instanceof TaskServiceError && err.kind === "too_large";

describe("following a run within its text budget", () => {
  it("yields deltas up to the budget, then ends as too large", async () => {
    const service = new FakeTaskService();
    for (let i = 0; i < 10; i++) service.emit({ type: "delta", text: "0123456789" });
    const b = budget(35);
    const { deltas, end } = await follow(service, b);
    expect(deltas).toEqual(["0123456789", "0123456789", "0123456789"]);
    expect(isTooLarge(end)).toBe(true);
    expect(b.granted).toBe(30);
  });

  it("counts UTF-8 bytes, not characters", async () => {
    const service = new FakeTaskService();
    service.emit({ type: "delta", text: "日本語" }, { type: "delta", text: "日本語" });
    const { deltas, end } = await follow(service, budget(12)); // 9 bytes a delta
    expect(deltas).toEqual(["日本語"]);
    expect(isTooLarge(end)).toBe(true);
  });

  it("ends as too large when a snapshot of the service's text passes the budget", async () => {
    const service = new FakeTaskService();
    service.emit({ type: "snapshot", text: "a".repeat(500) });
    const { deltas, end } = await follow(service, budget(100));
    expect(deltas).toEqual([]);
    expect(isTooLarge(end)).toBe(true);
  });

  it("ends as too large when the final result's text passes the budget, even unlike the streamed one", async () => {
    const service = new FakeTaskService();
    service.emit({ type: "delta", text: "short" }, { type: "status", status: "completed" });
    service.close();
    service.final = { status: "completed", content: `different ${"b".repeat(500)}` };
    const { end } = await follow(service, budget(100));
    expect(isTooLarge(end)).toBe(true);
  });

  it("ends as usual when the whole text fits", async () => {
    const service = new FakeTaskService();
    service.emit({ type: "delta", text: "all of it" }, { type: "status", status: "completed" });
    service.close();
    service.final = { status: "completed", content: "all of it" };
    const { deltas, end } = await follow(service, budget(9));
    expect(deltas).toEqual(["all of it"]);
    expect(end).toMatchObject({ status: "completed", text: "all of it" });
  });
});

describe("what the final result keeps", () => {
  it("ends as too large when code blocks stand for an empty text past the budget", async () => {
    const service = new FakeTaskService();
    service.emit({ type: "status", status: "completed" });
    service.close();
    const result = service.getTaskResult;
    service.getTaskResult = async (...args) => ({
      ...(await result(...args)),
      code_blocks: [{ language: "ts", code: "x".repeat(500) }],
    });
    service.final = { status: "completed", content: "" };
    const { end } = await follow(service, budget(100));
    expect(isTooLarge(end)).toBe(true);
  });

  it("keeps at most 1,000 files of a result, and 2,000 characters of a failed run's reason", async () => {
    const service = new FakeTaskService();
    service.emit({ type: "status", status: "failed" });
    service.close();
    service.final = {
      status: "failed",
      content: "",
      error: "why ".repeat(5000),
      files: Array.from({ length: 1500 }, (_, i) => ({ file_id: `f${i}`, file_name: `${i}.txt` })),
    };
    const { end } = await follow(service, budget(1000));
    const final = end as { files: unknown[]; errorMessage: string };
    expect(final.files).toHaveLength(1000);
    expect(final.errorMessage.length).toBeLessThanOrEqual(2001);
    expect(final.errorMessage.startsWith("why why")).toBe(true);
  });
});

describe("reconnecting after a drop", () => {
  it("waits a jittered time in the upper half of the doubling backoff, capped at 8 s", () => {
    expect(reconnectDelay(250, 1, () => 0)).toBe(125);
    expect(reconnectDelay(250, 1, () => 0.999)).toBeCloseTo(249.9, 1);
    expect(reconnectDelay(250, 3, () => 0.5)).toBe(750);
    expect(reconnectDelay(250, 20, () => 0)).toBe(4000);
    expect(reconnectDelay(250, 20, () => 0.999)).toBeLessThan(8000);
  });

  it("spreads the runs that lost their streams together over the backoff", () => {
    // With Math.random, as the app runs: 100 runs that dropped at once come back apart.
    const delays = Array.from({ length: 100 }, () => reconnectDelay(1000, 1, Math.random));
    expect(new Set(delays.map((d) => Math.round(d))).size).toBeGreaterThan(50);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(500);
    expect(Math.max(...delays)).toBeLessThanOrEqual(1000);
  });

  it("draws each wait from the follower's random source", async () => {
    const service = new FakeTaskService();
    service.final = { status: "running", content: "a" };
    service.emit({ type: "delta", text: "a" });
    service.emit(new TaskServiceError({ kind: "network", message: "reset" }));
    let draws = 0;
    const created = await service.createTask({ prompt: "go" });
    const ref = { projectId: created.project_id, threadId: created.thread_id };
    const run = followRun(service, ref, {
      reconnectDelayMs: 1,
      random: () => {
        // The run ends while the follower waits to reconnect.
        draws++;
        service.final = { status: "completed", content: "a" };
        service.emit({ type: "status", status: "completed" });
        service.close();
        return 0.5;
      },
    });
    for (let step = await run.next(); !step.done; step = await run.next());
    expect(draws).toBe(1);
  });
});
