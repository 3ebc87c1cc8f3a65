/**
 * The health and metrics routes, served by either receiver or on the internal port (ADMIN_PORT).
 * Liveness never depends on Redis, Slack or the app's phase: a restart cures none of those.
 */
import type { CustomRoute, SocketModeReceiver } from "@slack/bolt";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { PrometheusMetrics } from "../metrics.ts";
import type { ThreadStore } from "../store/types.ts";

/** The routes' paths (the Dockerfile, compose and Kubernetes probes are checked against them). */
export const HEALTH_PATHS = {
  liveness: "/healthz",
  readiness: "/readyz",
  metrics: "/metrics",
  metricsJson: "/metrics.json",
} as const;

export type PrometheusText = Pick<PrometheusMetrics, "render" | "contentType">;

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

export function healthRoutes(options: {
  /** Started and not stopping. */
  readonly ready: () => boolean;
  /** Socket Mode: its WebSocket is open (Slack said hello). HTTP mode: always. */
  readonly slackConnected: () => boolean;
  readonly store: Pick<ThreadStore, "ping">;
  readonly prometheus?: PrometheusText | undefined;
  readonly metricsJson?: (() => unknown) | undefined;
}): CustomRoute[] {
  const { ready, slackConnected, store, prometheus, metricsJson } = options;
  const get = (path: string, handler: CustomRoute["handler"]) => ({ path, method: "GET", handler });
  return [
    get(HEALTH_PATHS.liveness, (_req, res) => json(res, 200, { ok: true })),
    get(HEALTH_PATHS.metrics, (_req, res) => {
      if (!prometheus) return void res.writeHead(404).end();
      prometheus.render().then(
        (text) => {
          res.writeHead(200, { "content-type": prometheus.contentType });
          res.end(text);
        },
        () => json(res, 500, { ok: false }),
      );
    }),
    get(HEALTH_PATHS.metricsJson, (_req, res) => json(res, 200, metricsJson?.() ?? {})),
    get(HEALTH_PATHS.readiness, (_req, res) => {
      // A ping that throws is a store that does not answer, never a request left hanging.
      void store
        .ping()
        .catch(() => false)
        .then((storeOk) => {
          // Read after the ping: the app may have begun to stop, or Slack dropped, meanwhile.
          const parts = { running: ready(), slack: slackConnected(), store: storeOk };
          const ok = parts.running && parts.slack && parts.store;
          json(res, ok ? 200 : 503, { ok, ...parts });
        });
    }),
  ];
}

const WEBSOCKET_OPEN = 1; // the WHATWG WebSocket's readyState

/**
 * Whether the Socket Mode connection is up: its WebSocket open and Slack's hello received (the
 * `connected` event). After a drop the client reconnects by itself (about 5 s, its ping timeout).
 */
export function socketModeConnection(client: SocketModeReceiver["client"]): () => boolean {
  let helloed = false;
  client.on("connected", () => {
    helloed = true;
  });
  for (const event of ["connecting", "reconnecting", "disconnecting", "disconnected"]) {
    client.on(event, () => {
      helloed = false;
    });
  }
  return () => helloed && client.websocket?.readyState === WEBSOCKET_OPEN;
}

/** The internal port (ADMIN_PORT, on ADMIN_HOST): the health routes alone, other paths 404. */
export async function startAdminServer(routes: readonly CustomRoute[], port: number, host: string) {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://admin").pathname;
    const route = routes.find(
      (r) => r.path === path && [r.method].flat().includes(req.method ?? "GET"),
    );
    if (!route) return void res.writeHead(404).end();
    void Promise.resolve(route.handler(Object.assign(req, { params: {} }), res)).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    port: address.port,
    host: address.address,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type AdminServer = Awaited<ReturnType<typeof startAdminServer>>;
