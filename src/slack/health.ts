/**
 * The HTTP routes beside Slack's: `/healthz` (liveness: the process answers, so its event loop
 * runs), `/readyz` (it can take work now: started and not stopping, Slack's Socket Mode
 * connection open, the store answering), `/metrics` (Prometheus text) and `/metrics.json`,
 * served by either receiver or on the internal port (`ADMIN_PORT`, `startAdminServer`).
 *
 * Liveness never depends on Redis, Slack or the app's phase: an orchestrator restarts a process
 * whose liveness fails, and a restart cures none of those (Redis coming back does).
 */
import type { CustomRoute } from "@slack/bolt";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
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
  /** Socket Mode: its WebSocket is open (Slack said hello). HTTP mode: always (the default). */
  readonly slackConnected?: (() => boolean) | undefined;
  readonly store: Pick<ThreadStore, "ping">;
  readonly prometheus?: PrometheusText | undefined;
  readonly metricsJson?: (() => unknown) | undefined;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

export function healthRoutes(options: HealthOptions): CustomRoute[] {
  const { ready, store, prometheus, metricsJson } = options;
  const slackConnected = options.slackConnected ?? (() => true);
  const get = (path: string, handler: CustomRoute["handler"]) => ({
    path,
    method: ["GET"],
    handler,
  });
  return [
    get(HEALTH_PATHS.liveness, (_req, res) => json(res, 200, { ok: true })),
    get(HEALTH_PATHS.metrics, (_req, res) => {
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

/** What of Bolt's Socket Mode client (@slack/socket-mode's SocketModeClient) readiness reads. */
export interface SocketModeClientLike {
  on(event: string, listener: () => void): unknown;
  /** Its current WebSocket, replaced at each reconnection (undefined between them). */
  readonly websocket?: { readonly readyState: number | undefined } | undefined;
}

/** The WebSocket readyState of an open connection (the WHATWG WebSocket's OPEN). */
const WEBSOCKET_OPEN = 1;

/**
 * Whether the Socket Mode connection is up: its WebSocket is open and Slack has said hello on
 * it (the client's `connected` event). The client reconnects by itself after a drop (after
 * about 5 s, its ping timeout); meanwhile Slack cannot deliver anything here: not ready.
 */
export function socketModeConnection(client: SocketModeClientLike): () => boolean {
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

export interface AdminServer {
  readonly port: number;
  readonly host: string;
  close(): Promise<void>;
}

/**
 * The internal port (`ADMIN_PORT`): the health and metrics routes on a server of their own, out
 * of reach of the public Slack endpoint, on `ADMIN_HOST` (loopback by default). Other paths: 404.
 */
export async function startAdminServer(
  routes: readonly CustomRoute[],
  port: number,
  host: string,
): Promise<AdminServer> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://admin").pathname;
    const route = routes.find(
      (r) => r.path === path && [r.method].flat().includes(req.method ?? "GET"),
    );
    if (!route) {
      res.writeHead(404).end();
      return;
    }
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
