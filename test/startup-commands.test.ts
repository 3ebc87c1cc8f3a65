/**
 * Every command a newcomer runs (`npm start`, `npm run dev`, `npm run playground`,
 * `npm run simulator`) says why it cannot start in one line, with no stack trace, and exits
 * non-zero: Slack unreachable, a bad or busy port, a missing token. Each runs exactly the command
 * line of its npm script (package.json), on this Node.
 */
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { type AddressInfo, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSlack, startLocalSlack } from "../tools/local-slack/index.ts";
import { freePort } from "./support/cluster.ts";
import { runNode } from "./support/command.ts";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  scripts: Record<string, string>;
};

type Script = "start" | "dev" | "playground" | "simulator";

/** Runs the npm script's command line with `env` only, and collects what it prints. */
async function run(
  script: Script,
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  const [node, ...args] = (pkg.scripts[script] ?? "").split(" ");
  expect(node).toBe("node");
  return runNode(args, env);
}

/** What the failure printed: exactly one line, without a stack frame, and a non-zero exit. */
function oneLine({ code, out }: { code: number | null; out: string }): string {
  expect(code).not.toBe(0);
  expect(code).not.toBeNull();
  expect(out.endsWith("\n")).toBe(true);
  const lines = out.slice(0, -1).split("\n");
  expect(lines, out).toHaveLength(1);
  expect(out).not.toMatch(/^\s+at /m);
  return lines[0] ?? "";
}

describe("a command that cannot start says why in one line", () => {
  let busy: Server;
  let busyPort: number;
  let slack: LocalSlack;
  let closedPort: number;
  const dataDir = mkdtempSync(join(tmpdir(), "taskbot-commands-"));
  const app = () => ({
    TASK_API_URL: "http://127.0.0.1:9",
    TASK_API_KEY: "he-startup-commands-key",
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: "startup-commands-secret",
    SLACK_API_URL: slack.apiUrl,
    DATA_DIR: dataDir,
  });

  beforeAll(async () => {
    busy = createServer();
    busy.listen(0, "127.0.0.1");
    await once(busy, "listening");
    busyPort = (busy.address() as AddressInfo).port;
    slack = await startLocalSlack({ teamId: "T0COMMANDS" });
    closedPort = await freePort();
  });
  afterAll(async () => {
    busy.close();
    await slack.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe("npm start", () => {
    it("a missing token", async () => {
      const { SLACK_BOT_TOKEN: _, ...env } = app();
      const line = oneLine(await run("start", env));
      expect(line).toMatch(/^Invalid configuration: SLACK_BOT_TOKEN is required but not set/);
      expect(line).toContain("README.md lists every setting");
    });

    it("a port that is not a number", async () => {
      const line = oneLine(await run("start", { ...app(), PORT: "abc" }));
      expect(line).toMatch(/^Invalid configuration: PORT must be a whole number from 0 to 65535/);
    });

    it("a port in use", async () => {
      const line = oneLine(await run("start", { ...app(), PORT: String(busyPort) }));
      // Where it listens (:: or 0.0.0.0) depends on the machine's IPv6.
      expect(line).toMatch(
        new RegExp(
          `^Could not start: port \\S+:${busyPort} is already in use \\(EADDRINUSE\\): stop what uses it, or set PORT to another port$`,
        ),
      );
    });

    it("Slack unreachable", async () => {
      const api = `http://127.0.0.1:${closedPort}/api/`;
      const line = oneLine(await run("start", { ...app(), SLACK_API_URL: api, PORT: "0" }));
      expect(line).toContain(`Could not start: Cannot reach Slack at ${api}`);
    }, 60_000);
  });

  describe("npm run dev", () => {
    const dev = () => ({
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_APP_TOKEN: "xapp-1-dev",
      SIM_PORT: "0",
    });

    it("a missing token", async () => {
      const line = oneLine(await run("dev", { SLACK_APP_TOKEN: "xapp-1-dev", SIM_PORT: "0" }));
      expect(line).toMatch(/^Invalid configuration: SLACK_BOT_TOKEN is required but not set/);
      expect(line).toContain('"Connect a real Slack workspace"');
    });

    it("a simulator port that is not a number", async () => {
      const line = oneLine(await run("dev", { ...dev(), SIM_PORT: "abc" }));
      expect(line).toBe("Invalid configuration: SIM_PORT must be a whole number from 0 to 65535");
    });

    it("a simulator port in use", async () => {
      const line = oneLine(await run("dev", { ...dev(), SIM_PORT: String(busyPort) }));
      expect(line).toBe(
        `Could not start: port 127.0.0.1:${busyPort} is already in use (EADDRINUSE): stop what uses it, or set SIM_PORT to another port`,
      );
    });

    it("Slack unreachable", async () => {
      const api = `http://127.0.0.1:${closedPort}/api/`;
      const line = oneLine(await run("dev", { ...dev(), SLACK_API_URL: api }));
      expect(line).toContain(`Could not start: Cannot reach Slack at ${api}`);
    }, 60_000);
  });

  describe("npm run playground", () => {
    it("a port that is not a number", async () => {
      const line = oneLine(await run("playground", { PLAYGROUND_PORT: "abc" }));
      expect(line).toBe(
        "Invalid configuration: PLAYGROUND_PORT must be a whole number from 0 to 65535",
      );
    });

    it("a port in use", async () => {
      const line = oneLine(await run("playground", { PLAYGROUND_PORT: String(busyPort) }));
      expect(line).toBe(
        `Could not start: port 127.0.0.1:${busyPort} is already in use (EADDRINUSE): stop what uses it, or set PLAYGROUND_PORT to another port`,
      );
    });
  });

  describe("npm run simulator", () => {
    it("a port that is not a number", async () => {
      const line = oneLine(await run("simulator", { SIM_PORT: "abc" }));
      expect(line).toBe("Invalid simulator configuration: SIM_PORT expected a whole number");
    });

    it("a port in use", async () => {
      const line = oneLine(await run("simulator", { SIM_PORT: String(busyPort) }));
      expect(line).toBe(
        `Could not start: port 127.0.0.1:${busyPort} is already in use (EADDRINUSE): stop what uses it, or set SIM_PORT to another port`,
      );
    });
  });
});
