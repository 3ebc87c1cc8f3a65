/** What the scheduler counts, by method: calls (retries included), 429s, other failures, waits. */
import type { AppMetrics } from "../../metrics.ts";

type ByMethod = Record<string, number>;

const counters = () => ({
  calls: {} as ByMethod,
  rateLimited: {} as ByMethod,
  failed: {} as ByMethod,
  superseded: 0, // edits dropped because a newer text of the same message replaced them
  /** From queueing (of a message's oldest unsent text, for edits) to the call. */
  queueWait: {} as Record<string, { count: number; sumMs: number; maxMs: number }>,
});

/** `queued`: calls and edits waiting right now. */
export type SchedulerMetrics = ReturnType<typeof counters> & { queued: number };

/** The scheduler's counters (`/metrics.json`), also reported to the app's Prometheus metrics. */
export class SchedulerStats {
  readonly #m = counters();
  readonly #sink: AppMetrics | undefined;

  constructor(sink?: AppMetrics) {
    this.#sink = sink;
  }

  snapshot(queued: number): SchedulerMetrics {
    return structuredClone({ ...this.#m, queued });
  }

  superseded(): void {
    this.#m.superseded += 1;
  }

  started(method: string, waitMs: number): void {
    const wait = Math.max(0, waitMs);
    this.#add("calls", method);
    const stats = (this.#m.queueWait[method] ??= { count: 0, sumMs: 0, maxMs: 0 });
    stats.count += 1;
    stats.sumMs += wait;
    stats.maxMs = Math.max(stats.maxMs, wait);
    this.#sink?.slackQueueWait(method, wait / 1000);
  }

  /** How a call went (a 429 is counted whether or not the call is tried again). */
  ended(method: string, outcome: "ok" | "rate_limited" | "error"): void {
    if (outcome !== "ok") this.#add(outcome === "error" ? "failed" : "rateLimited", method);
    this.#sink?.slackCall(method, outcome);
  }

  #add(what: "calls" | "rateLimited" | "failed", method: string): void {
    this.#m[what][method] = (this.#m[what][method] ?? 0) + 1;
  }
}
