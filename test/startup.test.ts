import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type Server } from "node:http";
import { type AddressInfo, createServer as createTcpServer, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeVersionProblem, requiredVersion } from "../scripts/check-node.js";
import { type LocalSlack, startLocalSlack } from "../tools/local-slack/index.ts";
import { freePort } from "./support/cluster.ts";
import { runNode } from "./support/command.ts";

const TOKEN = "xoxb-startup-test-1234567890-secret";

/** Runs `npm start`'s command line and collects what it prints and how it exits. */
const start = (env: Record<string, string>) =>
  runNode(["--import", "./scripts/check-node.js", "src/main.ts"], { LOG_LEVEL: "info", ...env });

describe("first contact", () => {
  it("names the Node version needed and how to get it on an old Node", () => {
    expect(requiredVersion(">=22.18")).toEqual([22, 18]);
    const problem = nodeVersionProblem("v20.20.2", ">=22.18");
    expect(problem).toContain("needs Node.js 22.18 or newer");
    expect(problem).toContain("this is Node 20.20.2");
    expect(problem).toContain(
      "`npm ci` (with the dev dependencies) installs the project's own Node 24",
    );
    expect(problem).toContain("nvm install 24");
    // With the project's Node installed, it was not run through npm: say so.
    expect(nodeVersionProblem("v20.20.2", ">=22.18", true)).toContain("run the app through npm");
    expect(nodeVersionProblem("22.18.0", ">=22.18")).toBeUndefined();
    expect(nodeVersionProblem("24.1.0", ">=22.18")).toBeUndefined();
    expect(nodeVersionProblem("22.9.0", ">=22.18")).toContain("22.18");
    // package.json's form: the majors the CI tests on. Older is refused, newer runs.
    const tested = "^24.0.0 || ^26.0.0";
    expect(requiredVersion(tested)).toEqual([24, 0]);
    expect(requiredVersion("^26.1.0 || ^24.3.0")).toEqual([24, 3]);
    expect(nodeVersionProblem("v22.18.0", tested)).toContain(
      "needs Node.js 24.0 or newer (Node 24 LTS recommended); this is Node 22.18.0",
    );
    expect(nodeVersionProblem("v22.18.0", tested)).toContain("tested on Node ^24.0.0 || ^26.0.0");
    for (const v of ["24.0.0", "24.21.0", "26.10.0", "28.0.0"]) {
      expect(nodeVersionProblem(v, tested)).toBeUndefined();
    }
  });

  it("refuses a plain http:// service URL on another machine before connecting anywhere", async () => {
    const { code, out } = await start({
      TASK_API_URL: "http://tasks.example.com",
      TASK_API_KEY: "he-startup-test-key",
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_SIGNING_SECRET: "startup-signing-secret",
    });
    expect(code).toBe(1);
    expect(out).toContain(
      "Invalid configuration: TASK_API_URL uses plain http:// to tasks.example.com, so the service API key and your prompts would cross the network unencrypted: use https://, or set ALLOW_INSECURE_HTTP=true",
    );
    expect(out).not.toContain(TOKEN);
  }, 30_000);

  describe("when Slack cannot be reached at start-up", () => {
    let slack: Server;
    let slackUrl: string;
    const base = {
      TASK_API_URL: "http://127.0.0.1:9",
      TASK_API_KEY: "he-startup-test-key",
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_SIGNING_SECRET: "startup-signing-secret",
    };

    beforeAll(async () => {
      // A Slack Web API that refuses the token, as Slack does for a revoked or mistyped one.
      slack = createServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ ok: false, error: "invalid_auth" }));
      });
      slack.listen(0, "127.0.0.1");
      await once(slack, "listening");
      slackUrl = `http://127.0.0.1:${(slack.address() as AddressInfo).port}/api/`;
    });
    afterAll(() => slack.close());

    it("says in one line that the bot token was refused, exits 1, and never prints the token", async () => {
      const port = await freePort();
      const { code, out } = await start({ ...base, SLACK_API_URL: slackUrl, PORT: String(port) });
      expect(code).toBe(1);
      const line = out.split("\n").find((l) => l.startsWith("Could not start:"));
      expect(line).toContain("Slack refused the bot token (invalid_auth)");
      expect(line).toContain("SLACK_BOT_TOKEN");
      expect(out).not.toContain(TOKEN);
      expect(out).not.toMatch(/\n\s+at /); // no stack trace
    }, 30_000);

    it("says it cannot reach Slack (and where) when nothing answers", async () => {
      const closed = await freePort();
      const { code, out } = await start({
        ...base,
        SLACK_API_URL: `http://127.0.0.1:${closed}/api/`,
        PORT: String(await freePort()),
      });
      expect(code).toBe(1);
      const line = out.split("\n").find((l) => l.startsWith("Could not start:"));
      expect(line).toContain(`Cannot reach Slack at http://127.0.0.1:${closed}/api/`);
      expect(line).toContain("ECONNREFUSED");
      expect(out).not.toContain(TOKEN);
      expect(out).not.toMatch(/\n\s+at /);
    }, 60_000);
  });

  describe("when Redis cannot be reached at start-up", () => {
    const REDIS_PASSWORD = "redis-secret-in-the-url";
    let slack: LocalSlack;
    let silent: ReturnType<typeof createTcpServer>;
    const sockets = new Set<Socket>();
    const base = () => ({
      TASK_API_URL: "http://127.0.0.1:9",
      TASK_API_KEY: "he-startup-test-key",
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: "startup-signing-secret",
      SLACK_API_URL: slack.apiUrl,
      REDIS_CONNECT_TIMEOUT_MS: "1500",
    });

    beforeAll(async () => {
      slack = await startLocalSlack({ teamId: "T0STARTUP" });
      // A server that accepts connections and never says a word (a wrong port, a firewall).
      silent = createTcpServer((socket) => {
        socket.resume();
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
      });
      silent.listen(0, "127.0.0.1");
      await once(silent, "listening");
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      silent.close();
      await slack.close();
    });

    it("says in one line that nothing answers at Redis' address, within REDIS_CONNECT_TIMEOUT_MS", async () => {
      const closed = await freePort();
      const started = performance.now();
      const { code, out } = await start({
        ...base(),
        REDIS_URL: `redis://:${REDIS_PASSWORD}@127.0.0.1:${closed}`,
        PORT: String(await freePort()),
      });
      expect(code).toBe(1);
      expect(performance.now() - started).toBeLessThan(15_000);
      const line = out.split("\n").find((l) => l.startsWith("Could not start:"));
      expect(line).toContain(`Cannot connect to Redis at 127.0.0.1:${closed} within 1500 ms`);
      expect(line).toContain("ECONNREFUSED");
      expect(line).toContain("REDIS_URL");
      expect(out).not.toContain(REDIS_PASSWORD);
    }, 30_000);

    it("gives up on a server that accepts the connection and never answers", async () => {
      const port = (silent.address() as AddressInfo).port;
      const { code, out } = await start({
        ...base(),
        REDIS_URL: `redis://default:${REDIS_PASSWORD}@127.0.0.1:${port}`,
        PORT: String(await freePort()),
      });
      expect(code).toBe(1);
      const line = out.split("\n").find((l) => l.startsWith("Could not start:"));
      expect(line).toContain(`Cannot connect to Redis at 127.0.0.1:${port} within 1500 ms`);
      expect(line).toContain("it accepted the connection but never answered");
      expect(out).not.toContain(REDIS_PASSWORD);
      expect(out).not.toMatch(/\n\s+at /); // no stack trace
    }, 30_000);
  });

  describe("on a fatal error", () => {
    let slack: LocalSlack;
    const dir = mkdtempSync(join(tmpdir(), "taskbot-fatal-"));
    const dataDir = join(dir, "a-file");
    beforeAll(async () => {
      slack = await startLocalSlack({ teamId: "T0FATAL" });
      writeFileSync(dataDir, "not a directory");
    });
    afterAll(async () => {
      await slack.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("writes the fatal log line before it exits: a DATA_DIR that is a file", async () => {
      const port = await freePort();
      const { code, out } = await start({
        TASK_API_URL: "http://127.0.0.1:9",
        TASK_API_KEY: "he-startup-test-key",
        SLACK_BOT_TOKEN: slack.botToken,
        SLACK_SIGNING_SECRET: "startup-signing-secret",
        SLACK_API_URL: slack.apiUrl,
        PORT: String(port),
        DATA_DIR: dataDir,
        LOG_LEVEL: "debug", // plenty of lines before it, still being written
      });
      expect(code).toBe(1);
      const fatal = out
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { level: number; msg: string; err?: { message?: string } })
        .filter((l) => l.level === 60);
      expect(fatal).toHaveLength(1);
      expect(fatal[0]?.msg).toBe("could not start");
      expect(fatal[0]?.err?.message).toContain("EEXIST");
      expect(out).not.toContain(slack.botToken);
    }, 30_000);
  });
});
