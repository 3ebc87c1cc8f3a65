/**
 * The internal port (ADMIN_PORT) listens where the operator says (ADMIN_HOST): loopback unless
 * told, every interface in a pod whose probes and scrapes come from outside the container.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/config.ts";
import { startAdminServer } from "../../src/slack/health.ts";

const env = {
  SLACK_BOT_TOKEN: "xoxb-admin-host-test",
  SLACK_SIGNING_SECRET: "admin-host-test-secret",
  TASK_API_URL: "http://127.0.0.1:8787",
  TASK_API_KEY: "he-admin-host-test",
  ADMIN_PORT: "0",
};
const route = {
  path: "/healthz",
  method: "GET",
  handler: (_req: unknown, res: { writeHead(n: number): { end(): void } }) => {
    res.writeHead(200).end();
  },
};

describe("the admin port's interface", () => {
  it("is loopback unless ADMIN_HOST names one, and a bad ADMIN_HOST is refused by name", async () => {
    expect(parseConfig(env).adminHost).toBe("127.0.0.1");
    expect(parseConfig({ ...env, ADMIN_HOST: "0.0.0.0" }).adminHost).toBe("0.0.0.0");
    expect(() => parseConfig({ ...env, ADMIN_HOST: "bad host/" })).toThrow(
      /ADMIN_HOST.*must be an IP address or a host name/,
    );
    const server = await startAdminServer([route], 0, parseConfig(env).adminHost);
    try {
      expect(server.host).toBe("127.0.0.1");
      expect((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("listens on every interface when ADMIN_HOST says 0.0.0.0", async () => {
    const server = await startAdminServer([route], 0, "0.0.0.0");
    try {
      expect(server.host).toBe("0.0.0.0");
      expect((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
