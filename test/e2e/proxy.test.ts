/**
 * Corporate networks: `npm start` with HTTP(S)_PROXY set reaches Slack (Web API, file uploads,
 * the Socket Mode WebSocket) and the task service only through the proxy, and goes directly to
 * the hosts NO_PROXY lists. The peers are addressed by `*.invalid` names that only the proxy
 * resolves, so a connection that went around it could not have succeeded.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Simulator } from "../../tools/simulator/server.ts";
import type { LocalSlack } from "../../tools/local-slack/index.ts";
import { LocalSocketMode } from "../../tools/local-slack/local-socket-mode.ts";
import { sendEvent, sendSlashCommand } from "../../tools/local-slack/slack-requests.ts";
import { freePort } from "../support/cluster.ts";
import { CountingProxy } from "../support/counting-proxy.ts";
import { appEnv, OWNER, SIGNING_SECRET, startPeers, statusOf, TEAM } from "../support/harness.ts";

const PROXY_USER = "corp-user";
const PROXY_PASSWORD = "pr0xy-S3cret-pass";

/** `node src/main.ts` as `npm start` runs it, with what it printed. */
class AppProcess {
  readonly output: string[] = [];
  readonly child: ChildProcess;
  readonly port: number;
  readonly exited: Promise<number | null>;

  constructor(env: Record<string, string>, port: number) {
    this.port = port;
    this.child = spawn(process.execPath, ["src/main.ts"], {
      env: { PATH: process.env.PATH ?? "", ...env, PORT: String(port) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child.stdout?.on("data", (d: Buffer) => this.output.push(d.toString()));
    this.child.stderr?.on("data", (d: Buffer) => this.output.push(d.toString()));
    // "close", not "exit": what it printed may still be in the pipes when it exits (Node's docs).
    this.exited = once(this.child, "close").then(([code]) => code as number | null);
  }

  get text(): string {
    return this.output.join("");
  }

  /** Resolves once the app logs that it runs; rejects if it exits first. */
  async running(): Promise<void> {
    const started = new Promise<void>((resolve) => {
      const check = () => {
        if (this.text.includes("Task bot is running")) resolve();
      };
      this.child.stdout?.on("data", check);
      check();
    });
    await Promise.race([
      started,
      this.exited.then((code) => {
        throw new Error(`the app exited (${code}): ${this.text}`);
      }),
    ]);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill("SIGTERM");
    await this.exited;
  }
}

describe("behind an HTTP proxy (HTTP_PROXY, HTTPS_PROXY, NO_PROXY)", () => {
  let sim: Simulator;
  let slack: LocalSlack;
  let proxy: CountingProxy;
  let app: AppProcess | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), "taskbot-proxy-"));
  let seq = 0;

  const simPort = () => new URL(sim.url).port;
  const slackTarget = () => `slack.invalid:${slack.port}`;
  /** The app's environment: Slack by its proxy-only name, the given task service URL. */
  const envFor = (taskApiUrl: string, extra: Record<string, string>) => {
    const env = appEnv(sim, slack, {
      SLACK_API_URL: `${slack.publicUrl}api/`,
      TASK_API_URL: taskApiUrl,
      // The doubles speak plain http:// under names only the proxy resolves (*.invalid).
      ALLOW_INSECURE_HTTP: "true",
      DATA_DIR: join(dataDir, String(++seq)),
      ...extra,
    });
    return env;
  };

  /** `/task <prompt>` typed in Slack; resolves with the final answer's status line. */
  async function runTask(prompt: string): Promise<string> {
    if (!app) throw new Error("no app");
    const channel = `C0PROXY${++seq}`;
    const res = await sendSlashCommand(
      `http://127.0.0.1:${app.port}/slack/events`,
      SIGNING_SECRET,
      {
        text: prompt,
        team_id: TEAM,
        user_id: OWNER,
        channel_id: channel,
        response_url: slack.responseUrl(`proxy${seq}`),
        trigger_id: `trig.proxy.${seq}`,
      },
    );
    expect(res.status).toBe(200);
    const final = await slack.waitFor(
      () =>
        slack
          .messages(channel, { includeReplies: true })
          .find((m) => m.thread_ts !== undefined && /Completed in|Failed/.test(statusOf(m))),
      { timeoutMs: 15_000, description: `the answer to "${prompt}"` },
    );
    return statusOf(final);
  }

  beforeAll(async () => {
    // Every URL the Slack double hands out (upload_url, response_url) names it slack.invalid.
    ({ sim, slack } = await startPeers({ slack: { publicHost: "slack.invalid" } }));
  });

  afterEach(async () => {
    await app?.stop();
    app = undefined;
    await proxy.close();
  });

  afterAll(async () => {
    await sim.close();
    await slack.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("carries the Web API, file uploads and the task service through HTTP_PROXY, credentials never printed", async () => {
    proxy = await CountingProxy.start({ user: PROXY_USER, password: PROXY_PASSWORD });
    const tasksUrl = `http://tasks.invalid:${simPort()}`;
    const filesBefore = slack.files().length;
    app = new AppProcess(
      envFor(tasksUrl, { HTTP_PROXY: proxy.url, LOG_LEVEL: "debug" }),
      await freePort(),
    );
    await app.running();

    expect(await runTask("Through the proxy [sim:files=2]")).toMatch(/Completed in/);
    // The two generated files reached Slack: their upload_url PUTs went through the proxy too.
    const uploaded = slack.files().slice(filesBefore);
    expect(uploaded).toHaveLength(2);
    for (const f of uploaded) expect(f.bytes.length).toBeGreaterThan(0);

    expect(proxy.carried(slackTarget())).toBeGreaterThan(0);
    expect(proxy.carried(`tasks.invalid:${simPort()}`)).toBeGreaterThan(0);
    expect(proxy.connections.filter((c) => !c.carried)).toEqual([]);
    // The start-up line names the proxy, without its user or password.
    const running = app.text.split("\n").find((l) => l.includes("Task bot is running")) ?? "";
    expect(running).toContain(proxy.address);
    expect(app.text).not.toContain(PROXY_PASSWORD);
    expect(app.text).not.toContain(PROXY_USER);
  });

  it("downloads a DM's attachment from Slack's file host through the proxy", async () => {
    proxy = await CountingProxy.start({});
    app = new AppProcess(
      envFor(`http://tasks.invalid:${simPort()}`, { HTTP_PROXY: proxy.url }),
      await freePort(),
    );
    await app.running();
    const file = slack.addUserFile({ name: "brief.txt", bytes: "through the proxy" });
    // The file's address names the proxy-only host: only the proxy can reach it.
    expect(file.url_private_download).toContain("slack.invalid");
    const dm = `D0PROXY${++seq}`;
    const ts = slack.addMessage({ channel: dm, user: OWNER, text: "Read this" });
    const event = {
      type: "message",
      subtype: "file_share",
      channel_type: "im",
      channel: dm,
      user: OWNER,
      text: "Read this",
      ts,
      files: [file],
    };
    const res = await sendEvent(`http://127.0.0.1:${app.port}/slack/events`, SIGNING_SECRET, {
      event_id: `EvProxy${seq}`,
      team_id: TEAM,
      event,
    });
    expect(res.status).toBe(200);
    const run = await slack.waitFor(() => sim.runs().find((r) => r.promptText === "Read this"), {
      timeoutMs: 15_000,
      description: "the DM's task on the service",
    });
    expect(run.request.files.map((f) => [f.name, f.size])).toEqual([["brief.txt", 17]]);
    expect(proxy.carried(slackTarget())).toBeGreaterThan(0);
    expect(proxy.connections.filter((c) => !c.carried)).toEqual([]);
  });

  it("goes directly to the hosts NO_PROXY lists (lower-case variables)", async () => {
    proxy = await CountingProxy.start();
    const runsBefore = sim.runs().length;
    app = new AppProcess(
      envFor(`http://127.0.0.1:${simPort()}`, {
        http_proxy: proxy.url,
        no_proxy: "localhost,127.0.0.1",
      }),
      await freePort(),
    );
    await app.running();

    expect(await runTask("Bypassing the proxy for the service")).toMatch(/Completed in/);
    expect(sim.runs().length).toBe(runsBefore + 1);
    expect(proxy.carried(slackTarget())).toBeGreaterThan(0);
    expect(proxy.targets().filter((t) => t.startsWith("127.0.0.1"))).toEqual([]);
  });

  it("opens the Socket Mode WebSocket through the proxy", async () => {
    proxy = await CountingProxy.start({ user: PROXY_USER, password: PROXY_PASSWORD });
    const socket = await LocalSocketMode.start();
    const socketPort = new URL(socket.url).port;
    slack.socketModeUrl = socket.url.replace("127.0.0.1", "socket.invalid");
    try {
      const env = envFor(`http://tasks.invalid:${simPort()}`, {
        SLACK_APP_TOKEN: slack.appToken,
        HTTP_PROXY: proxy.url,
      });
      delete env.SLACK_SIGNING_SECRET;
      app = new AppProcess(env, await freePort());
      await socket.connected();
      const channel = "C0PROXYSOCKET";
      const ack = await socket.send("slash_commands", {
        command: "/task",
        text: "Socket Mode behind a proxy [sim:length=200]",
        team_id: TEAM,
        user_id: OWNER,
        channel_id: channel,
        response_url: slack.responseUrl("proxy-socket"),
        trigger_id: "trig.proxy.socket",
      });
      expect(ack.envelope_id).toBeTruthy();
      await slack.waitFor(
        () =>
          slack
            .messages(channel, { includeReplies: true })
            .find((m) => m.thread_ts !== undefined && /Completed in/.test(statusOf(m))),
        { timeoutMs: 15_000, description: "the answer over Socket Mode" },
      );
      expect(proxy.carried(`socket.invalid:${socketPort}`)).toBeGreaterThan(0);
      expect(proxy.carried(slackTarget())).toBeGreaterThan(0);
      expect(proxy.connections.filter((c) => !c.carried)).toEqual([]);
      expect(app.text).not.toContain(PROXY_PASSWORD);
    } finally {
      await app?.stop();
      slack.socketModeUrl = undefined;
      await socket.close();
    }
  });

  it("asks HTTPS_PROXY for slack.com and says in one line when the proxy refuses", async () => {
    proxy = await CountingProxy.start({ user: PROXY_USER, password: PROXY_PASSWORD });
    const base = envFor(`http://tasks.invalid:${simPort()}`, {});
    delete base.SLACK_API_URL; // Slack's own https://slack.com/api/
    // The test proxy serves only local hosts: it refuses slack.com (403) without connecting.
    app = new AppProcess({ ...base, https_proxy: proxy.url }, await freePort());
    expect(await app.exited).toBe(1);
    expect(proxy.connections).toContainEqual({
      kind: "tunnel",
      target: "slack.com:443",
      carried: false,
      refusedWith: 403,
    });
    const line = app.text.split("\n").find((l) => l.startsWith("Could not start:"));
    expect(line).toContain("Cannot reach Slack at https://slack.com/api/");
    expect(line).toContain("the proxy refused to connect to it (403)");

    const wrong = proxy.url.replace(encodeURIComponent(PROXY_PASSWORD), "wrong-password");
    app = new AppProcess({ ...base, HTTPS_PROXY: wrong }, await freePort());
    expect(await app.exited).toBe(1);
    expect(app.text).toContain("the proxy asks for credentials (407)");
    expect(app.text).not.toContain("wrong-password");
    expect(app.text).not.toMatch(/\n\s+at /); // no stack trace
  });
});
