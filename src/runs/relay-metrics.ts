/**
 * What the relay counts: runs started, resumed, handed over and ended by state, deltas, edits
 * and the lag from a delta's arrival to the Slack call that shows it. Kept as a JSON snapshot
 * (`/metrics.json`, the benchmark) and reported to the app's Prometheus metrics.
 */
import type { AppMetrics } from "../metrics.ts";

/** Lag buckets (ms), as a small cumulative histogram. */
const LAG_BUCKETS = [100, 250, 500, 1000, 2000, 5000, 10_000, 30_000] as const;

export interface RelayMetrics {
  runs: {
    started: number;
    resumed: number;
    handedOver: number;
    /** Runs not relayed again because instances kept dying relaying them. */
    quarantined: number;
    ended: Record<string, number>;
  };
  deltas: number;
  edits: number;
  lagMs: { count: number; sum: number; max: number; le: Record<string, number> };
}

function emptyMetrics(): RelayMetrics {
  return {
    runs: { started: 0, resumed: 0, handedOver: 0, quarantined: 0, ended: {} },
    deltas: 0,
    edits: 0,
    lagMs: {
      count: 0,
      sum: 0,
      max: 0,
      le: Object.fromEntries([...LAG_BUCKETS.map((b) => [String(b), 0]), ["+Inf", 0]]),
    },
  };
}

export class RelayCounters {
  readonly #m = emptyMetrics();
  readonly #sink: AppMetrics | undefined;

  constructor(sink?: AppMetrics) {
    this.#sink = sink;
  }

  snapshot(): RelayMetrics {
    return structuredClone(this.#m);
  }

  started(): void {
    this.#m.runs.started++;
    this.#sink?.runStarted("new");
  }

  resumed(): void {
    this.#m.runs.resumed++;
    this.#sink?.runStarted("resumed");
  }

  handedOver(): void {
    this.#m.runs.handedOver++;
    this.#sink?.runHandedOver();
  }

  quarantined(): void {
    this.#m.runs.quarantined++;
    this.#sink?.runQuarantined();
  }

  /** A run's final state shown, `ms` after it was asked for. */
  ended(state: string, ms: number): void {
    this.#m.runs.ended[state] = (this.#m.runs.ended[state] ?? 0) + 1;
    this.#sink?.runEnded(state, Math.max(0, ms) / 1000);
  }

  delta(): void {
    this.#m.deltas++;
  }

  edit(): void {
    this.#m.edits++;
  }

  lag(ms: number): void {
    const lag = this.#m.lagMs;
    lag.count++;
    lag.sum += ms;
    lag.max = Math.max(lag.max, ms);
    const bucket = String(LAG_BUCKETS.find((b) => ms <= b) ?? "+Inf");
    lag.le[bucket] = (lag.le[bucket] ?? 0) + 1;
    this.#sink?.chunkLag(ms / 1000);
  }
}
