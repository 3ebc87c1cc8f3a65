/**
 * The app's Prometheus metrics (prom-client): Node's default process metrics plus what the app
 * does. Labels are methods, endpoints, states and outcomes: never user, channel or thread ids.
 */
import packageJson from "../package.json" with { type: "json" };
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

type SlackCallOutcome = "ok" | "rate_limited" | "error";

/** What the app reports (each metric's help text says what it counts). */
export interface AppMetrics {
  slackCall(method: string, outcome: SlackCallOutcome): void;
  slackQueueWait(method: string, seconds: number): void;
  runStarted(how: "new" | "resumed"): void;
  /** `seconds` after the run was asked for (on any instance). */
  runEnded(state: string, seconds: number): void;
  runHandedOver(): void;
  runQuarantined(): void;
  chunkLag(seconds: number): void;
  serviceResponse(info: { endpoint: string; status: number | "error"; seconds: number }): void;
  storeError(): void;
  /** A click of the feedback buttons that changed a person's vote. */
  feedback(kind: "positive" | "negative"): void;
}

/** Ignores everything (unit tests, tools). */
export const noMetrics: AppMetrics = {
  slackCall: () => undefined,
  slackQueueWait: () => undefined,
  runStarted: () => undefined,
  runEnded: () => undefined,
  runHandedOver: () => undefined,
  runQuarantined: () => undefined,
  chunkLag: () => undefined,
  serviceResponse: () => undefined,
  storeError: () => undefined,
  feedback: () => undefined,
};

const PREFIX = "taskbot_";
const WAIT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const LAG_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60];
const SERVICE_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120, 600];
/** A run lasts from seconds to TASK_MAX_RUN_S (4 h by default). */
const RUN_BUCKETS = [5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14_400];

export interface PrometheusMetrics extends AppMetrics {
  render(): Promise<string>;
  readonly contentType: string;
  /** Read at each scrape (0 until given). */
  countActiveRuns(source: () => number): void;
  countQueuedSlackCalls(source: () => ReadonlyMap<string, number>): void;
}

/** `defaultMetrics`: Node's own process metrics (memory, CPU, event loop, GC); on by default. */
export function createPrometheusMetrics(
  options: { readonly defaultMetrics?: boolean } = {},
): PrometheusMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) {
    // prom-client's 10 ms event-loop sampling cost a fifth of the app's CPU in `npm run bench`;
    // 100 ms still shows lag of interest.
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
  }
  const registers = [registry];
  // Registered in this order, so a scrape lists them in this order.
  new Gauge({
    name: `${PREFIX}build_info`,
    help: "Always 1; its labels say which version of the app runs, on which Node.",
    labelNames: ["version", "node_version"] as const,
    registers,
  }).set({ version: packageJson.version, node_version: process.versions.node }, 1);
  const sources = {
    runs: (): number => 0,
    queued: (): ReadonlyMap<string, number> => new Map(),
  };
  const slack = slackInstruments(registers, () => sources.queued());
  const runs = runInstruments(registers, () => sources.runs());
  const service = serviceInstruments(registers);
  const feedback = new Counter({
    name: `${PREFIX}task_feedback_total`,
    help: "Feedback on answers (the buttons under a finished answer), by kind: positive or negative.",
    labelNames: ["kind"] as const,
    registers,
  });
  return {
    contentType: registry.contentType,
    render: () => registry.metrics(),
    countActiveRuns(source) {
      sources.runs = source;
    },
    countQueuedSlackCalls(source) {
      sources.queued = source;
    },
    slackCall(method, outcome) {
      slack.calls.inc({ method, outcome });
      if (outcome === "rate_limited") slack.rateLimited.inc({ method });
    },
    slackQueueWait: (method, seconds) => slack.queueWait.observe({ method }, seconds),
    runStarted: (how) => runs.started.inc({ how }),
    runEnded(state, seconds) {
      runs.ended.inc({ state });
      runs.duration.observe({ state }, seconds);
    },
    runHandedOver: () => runs.handedOver.inc(),
    runQuarantined: () => runs.quarantined.inc(),
    chunkLag: (seconds) => runs.lag.observe(seconds),
    serviceResponse({ endpoint, status, seconds }) {
      service.requests.inc({ endpoint, status: String(status) });
      service.duration.observe({ endpoint }, seconds);
    },
    storeError: () => service.storeErrors.inc(),
    feedback: (kind) => feedback.inc({ kind }),
  };
}

function slackInstruments(registers: Registry[], queued: () => ReadonlyMap<string, number>) {
  new Gauge({
    name: `${PREFIX}slack_queue_depth`,
    help: "Slack calls (and message edits) waiting for their method's rate budget now, by method.",
    labelNames: ["method"] as const,
    registers,
    collect() {
      this.reset();
      for (const [method, waiting] of queued()) this.set({ method }, waiting);
    },
  });
  return {
    calls: new Counter({
      name: `${PREFIX}slack_calls_total`,
      help: "Slack Web API calls made, by method and outcome (ok, rate_limited, error).",
      labelNames: ["method", "outcome"] as const,
      registers,
    }),
    rateLimited: new Counter({
      name: `${PREFIX}slack_rate_limited_total`,
      help: "Slack answers of HTTP 429 (rate limited), by method.",
      labelNames: ["method"] as const,
      registers,
    }),
    queueWait: new Histogram({
      name: `${PREFIX}slack_queue_wait_seconds`,
      help: "Time a Slack call waited for its method's rate budget, by method.",
      labelNames: ["method"] as const,
      buckets: WAIT_BUCKETS,
      registers,
    }),
  };
}

function runInstruments(registers: Registry[], activeRuns: () => number) {
  const started = new Counter({
    name: `${PREFIX}runs_started_total`,
    help: "Agent runs this instance started relaying: new ones, or resumed after another instance.",
    labelNames: ["how"] as const,
    registers,
  });
  const ended = new Counter({
    name: `${PREFIX}runs_ended_total`,
    help: "Agent runs whose final state this instance showed, by state.",
    labelNames: ["state"] as const,
    registers,
  });
  const duration = new Histogram({
    name: `${PREFIX}run_duration_seconds`,
    help: "Time from a run's request to its final state shown, by that state (completed, failed, stopped…).",
    labelNames: ["state"] as const,
    buckets: RUN_BUCKETS,
    registers,
  });
  const handedOver = new Counter({
    name: `${PREFIX}runs_handed_over_total`,
    help: "Agent runs this instance stopped relaying for another instance to go on (shutdown, a lost lease).",
    registers,
  });
  new Gauge({
    name: `${PREFIX}runs_active`,
    help: "Agent runs being relayed by this instance now.",
    registers,
    collect() {
      this.set(activeRuns());
    },
  });
  const lag = new Histogram({
    name: `${PREFIX}chunk_to_slack_lag_seconds`,
    help: "Time from a chunk's arrival from the task service to the Slack call that shows it.",
    buckets: LAG_BUCKETS,
    registers,
  });
  const quarantined = new Counter({
    name: `${PREFIX}runs_quarantined_total`,
    help: "Agent runs not relayed again because instances kept dying while relaying them (the log names each).",
    registers,
  });
  return { started, ended, duration, handedOver, lag, quarantined };
}

function serviceInstruments(registers: Registry[]) {
  return {
    requests: new Counter({
      name: `${PREFIX}service_requests_total`,
      help: "Requests to the task service, by endpoint and HTTP status (error: no answer).",
      labelNames: ["endpoint", "status"] as const,
      registers,
    }),
    duration: new Histogram({
      name: `${PREFIX}service_request_duration_seconds`,
      help: "Time to the task service's response headers, by endpoint.",
      labelNames: ["endpoint"] as const,
      buckets: SERVICE_BUCKETS,
      registers,
    }),
    storeErrors: new Counter({
      name: `${PREFIX}store_errors_total`,
      help: "Errors of the store (Redis or the embedded SQLite file).",
      registers,
    }),
  };
}
