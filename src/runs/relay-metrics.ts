/** What the relay counts: a JSON snapshot (`/metrics.json`, the benchmark's) and Prometheus. */
import type { AppMetrics } from "../metrics.ts";

const emptyMetrics = () => ({
  runs: {
    started: 0,
    resumed: 0,
    handedOver: 0,
    /** Runs not relayed again because instances kept dying relaying them. */
    quarantined: 0,
    ended: {} as Record<string, number>,
  },
  deltas: 0,
  edits: 0,
  /** From a delta's arrival to the Slack call that shows it. */
  lagMs: { count: 0, sum: 0, max: 0 },
});

export type RelayMetrics = ReturnType<typeof emptyMetrics>;

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
    this.#sink?.chunkLag(ms / 1000);
  }
}
