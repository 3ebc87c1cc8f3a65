/**
 * The internal port (`ADMIN_PORT`): the health and metrics routes on a server of their own,
 * so they are not reachable on the public Slack endpoint. Any other path is 404. It listens on
 * the interface the operator names (`ADMIN_HOST`), loopback by default.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { CustomRoute } from "@slack/bolt";

export interface AdminServer {
  readonly port: number;
  /** The address it listens on. */
  readonly host: string;
  close(): Promise<void>;
}

export async function startAdminServer(
  routes: readonly CustomRoute[],
  port: number,
  host: string,
): Promise<AdminServer> {
  const server: Server = createServer((req, res) => {
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
