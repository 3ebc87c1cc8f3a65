/**
 * Liveness and readiness tell different things: liveness (`/healthz`) only that the process
 * answers, whatever Redis, Slack or the app's phase, since a restart cures none of them;
 * readiness (`/readyz`) whether the instance can take work now, and which part is missing.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  type AdminServer,
  HEALTH_PATHS,
  healthRoutes,
  startAdminServer,
} from "../../src/slack/health.ts";

describe("liveness and readiness", () => {
  let server: AdminServer | undefined;
  afterEach(async () => {
    await server?.close();
  });

  /** The routes on a real HTTP server, with each part of readiness set as the test says. */
  async function serve(parts: { running: boolean; slack: boolean; store: boolean | "throws" }) {
    const routes = healthRoutes({
      ready: () => parts.running,
      slackConnected: () => parts.slack,
      store: {
        ping: () =>
          parts.store === "throws"
            ? Promise.reject(new Error("Redis is not reachable"))
            : Promise.resolve(parts.store),
      },
    });
    server = await startAdminServer(routes, 0, "127.0.0.1");
    const get = async (path: string) => {
      const res = await fetch(`http://127.0.0.1:${server?.port}${path}`);
      return { status: res.status, body: (await res.json()) as unknown };
    };
    return { live: () => get(HEALTH_PATHS.liveness), ready: () => get(HEALTH_PATHS.readiness) };
  }

  it("is ready only when running, connected to Slack and answered by the store", async () => {
    const parts = { running: true, slack: true, store: true };
    const probe = await serve(parts);
    expect(await probe.ready()).toEqual({ status: 200, body: { ok: true, ...parts } });
    for (const missing of ["running", "slack", "store"] as const) {
      Object.assign(parts, { running: true, slack: true, store: true, [missing]: false });
      expect(await probe.ready()).toEqual({ status: 503, body: { ok: false, ...parts } });
    }
  });

  it("stays alive while starting or stopping, while Slack is away, and while the store is down", async () => {
    const parts = { running: false, slack: false, store: false as boolean | "throws" };
    const probe = await serve(parts);
    expect(await probe.live()).toEqual({ status: 200, body: { ok: true } });
    parts.store = "throws";
    expect(await probe.live()).toEqual({ status: 200, body: { ok: true } });
    expect((await probe.ready()).status).toBe(503);
  });
});
