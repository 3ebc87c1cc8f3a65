/**
 * The HTTP routes beside Slack's: `/healthz` (liveness: the app is up), `/readyz` (it can take
 * work: the store answers too), `/metrics` (Prometheus text) and `/metrics.json` (the same
 * counters as JSON, with the scheduler's and relay's own figures), served by either receiver.
 */
import type { CustomRoute } from "@slack/bolt";
import type { ServerResponse } from "node:http";
import type { ThreadStore } from "../store/types.ts";

/** The routes' paths (the Dockerfile, compose and Kubernetes probes are checked against them). */
export const HEALTH_PATHS = {
  liveness: "/healthz",
  readiness: "/readyz",
  metrics: "/metrics",
  metricsJson: "/metrics.json",
} as const;

/** What renders the Prometheus text exposition. */
export interface PrometheusText {
  render(): Promise<string>;
  readonly contentType: string;
}

export interface HealthOptions {
  /** Whether the app has started and not begun to stop. */
  readonly ready: () => boolean;
  readonly store: Pick<ThreadStore, "ping">;
  /** What `GET /metrics` shows. */
  readonly prometheus?: PrometheusText | undefined;
  /** What `GET /metrics.json` shows. */
  readonly metricsJson?: (() => unknown) | undefined;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

export function healthRoutes(options: HealthOptions): CustomRoute[] {
  const { ready, store, prometheus, metricsJson } = options;
  return [
    {
      path: HEALTH_PATHS.liveness,
      method: ["GET"],
      handler: (_req, res) => json(res, ready() ? 200 : 503, { ok: ready() }),
    },
    {
      path: HEALTH_PATHS.metrics,
      method: ["GET"],
      handler: (_req, res) => {
        if (!prometheus) {
          res.writeHead(404).end();
          return;
        }
        prometheus.render().then(
          (text) => {
            res.writeHead(200, { "content-type": prometheus.contentType });
            res.end(text);
          },
          () => json(res, 500, { ok: false }),
        );
      },
    },
    {
      path: HEALTH_PATHS.metricsJson,
      method: ["GET"],
      handler: (_req, res) => json(res, 200, metricsJson?.() ?? {}),
    },
    {
      path: HEALTH_PATHS.readiness,
      method: ["GET"],
      handler: (_req, res) => {
        void store.ping().then((ok) => {
          const good = ready() && ok;
          json(res, good ? 200 : 503, { ok: good, store: ok });
        });
      },
    },
  ];
}
