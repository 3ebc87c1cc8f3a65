/** What the scheduler counts: calls, 429s and failures by method, superseded edits, queue waits. */
import type { AppMetrics } from "../../metrics.ts";

export interface WaitStats {
  count: number;
  sumMs: number;
  maxMs: number;
  /** Cumulative counts by upper bound in ms ("+Inf" = all), as a Prometheus histogram. */
  le: Record<string, number>;
}

export interface SchedulerMetrics {
  /** Calls started, by method (429 retries included). */
  calls: Record<string, number>;
  /** 429 answers, by method. */
  rateLimited: Record<string, number>;
  /** Calls that failed otherwise, by method. */
  failed: Record<string, number>;
  /** Edits dropped because a newer text of the same message replaced them. */
  superseded: number;
  /** Time from queueing (of a message's oldest unsent text, for edits) to the call, by method. */
  queueWait: Record<string, WaitStats>;
  /** Calls and edits waiting right now. */
  queued: number;
}

export const WAIT_BOUNDS = [100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000].map((ms) => ({
  ms,
  label: String(ms),
}));

/** The scheduler's counters (JSON snapshot), also reported to the app's Prometheus metrics. */
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

  /** A call goes out after waiting `waitMs` for its budget (429 retries included). */
  started(method: string, waitMs: number): void {
    const wait = Math.max(0, waitMs);
    this.#add("calls", method);
    let stats = this.#m.queueWait[method];
    if (!stats) {
      stats = { count: 0, sumMs: 0, maxMs: 0, le: {} };
      for (const bound of WAIT_BOUNDS) stats.le[bound.label] = 0;
      stats.le["+Inf"] = 0;
      this.#m.queueWait[method] = stats;
    }
    stats.count += 1;
    stats.sumMs += wait;
    stats.maxMs = Math.max(stats.maxMs, wait);
    for (const bound of WAIT_BOUNDS) {
      if (wait <= bound.ms) stats.le[bound.label] = (stats.le[bound.label] ?? 0) + 1;
    }
    stats.le["+Inf"] = (stats.le["+Inf"] ?? 0) + 1;
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
    const counts = this.#m[what];
    counts[method] = (counts[method] ?? 0) + 1;
  }
}
