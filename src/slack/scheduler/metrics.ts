/** What the scheduler counts, by method: calls (429 retries included), 429s, other failures, waits. */
import type { AppMetrics } from "../../metrics.ts";

type ByMethod = Record<string, number>;

export interface SchedulerMetrics {
  calls: ByMethod;
  rateLimited: ByMethod;
  failed: ByMethod;
  /** Edits dropped because a newer text of the same message replaced them. */
  superseded: number;
  /** From queueing (of a message's oldest unsent text, for edits) to the call. */
  queueWait: Record<string, { count: number; sumMs: number; maxMs: number }>;
  /** Calls and edits waiting right now. */
  queued: number;
}

/** The scheduler's counters (`/metrics.json`), also reported to the app's Prometheus metrics. */
export class SchedulerStats {
  readonly #m: Omit<SchedulerMetrics, "queued"> = {
    calls: {},
    rateLimited: {},
    failed: {},
    superseded: 0,
    queueWait: {},
  };
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

  succeeded(method: string): void {
    this.#sink?.slackCall(method, "ok");
  }

  rateLimited(method: string): void {
    this.#add("rateLimited", method);
    this.#sink?.slackCall(method, "rate_limited");
  }

  failed(method: string): void {
    this.#add("failed", method);
    this.#sink?.slackCall(method, "error");
  }

  #add(what: "calls" | "rateLimited" | "failed", method: string): void {
    this.#m[what][method] = (this.#m[what][method] ?? 0) + 1;
  }
}
