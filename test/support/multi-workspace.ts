/**
 * The app in many-workspace mode (Bolt's OAuth flow) against the local peers, started as
 * `npm start` starts it, with its log captured; workspaces are installed through the real
 * flow (install page, the local Slack's consent screen, the redirect back with a code).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { InstallationQuery, InstallationStore } from "@slack/bolt";
import { type Running, startApp } from "../../src/bootstrap.ts";
import { parseConfig, secretsOf } from "../../src/config.ts";
import { createLogger } from "../../src/log.ts";
import type { Simulator } from "../../src/simulator/server.ts";
import { createInstallationStore } from "../../src/store/installations.ts";
import type { LocalSlack } from "../../tools/local-slack/index.ts";
import { sessionCookie } from "../../tools/local-slack/index.ts";
import { addToSlackLink, Browser } from "./browser.ts";
import { appEnv, startPeers } from "./harness.ts";

const STATE_SECRET = "e2e-state-secret-0123456789abcdef";
let seq = 0;

export class MultiWorkspaceApp {
  readonly sim: Simulator;
  readonly slack: LocalSlack;
  readonly running: Running;
  readonly baseUrl: string;
  readonly logLines: string[];
  readonly installations: InstallationStore;
  readonly dataDir: string;
  readonly namespace: string;

  private constructor(
    parts: Omit<
      MultiWorkspaceApp,
      "installations" | "install" | "installation" | "log" | "close" | "eventsUrl"
    >,
  ) {
    this.sim = parts.sim;
    this.slack = parts.slack;
    this.running = parts.running;
    this.baseUrl = parts.baseUrl;
    this.logLines = parts.logLines;
    this.dataDir = parts.dataDir;
    this.namespace = parts.namespace;
    this.installations = createInstallationStore(parts.running.store);
  }

  static async start(options: { redisUrl?: string | undefined } = {}): Promise<MultiWorkspaceApp> {
    const { sim, slack } = await startPeers();
    const dataDir = mkdtempSync(join(tmpdir(), "taskbot-many-"));
    const namespace = `many${process.pid}x${Date.now().toString(36)}x${++seq}`;
    const env = appEnv(sim, slack, {
      SLACK_BOT_TOKEN: "",
      SLACK_CLIENT_ID: slack.oauth.clientId,
      SLACK_CLIENT_SECRET: slack.oauth.clientSecret,
      SLACK_STATE_SECRET: STATE_SECRET,
      // Each workspace's service key is sealed with it (TASK_API_KEY stays the fallback).
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      PORT: "0",
      DATA_DIR: dataDir,
      STORE_NAMESPACE: namespace,
      ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
    });
    const config = parseConfig(env);
    const logLines: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    const logger = createLogger({ level: "debug", secrets: secretsOf(config), destination });
    const running = await startApp(config, logger);
    const baseUrl = `http://127.0.0.1:${running.port ?? 0}`;
    slack.oauth.redirectUrls = [`${baseUrl}/slack/oauth_redirect`];
    return new MultiWorkspaceApp({ sim, slack, running, baseUrl, logLines, dataDir, namespace });
  }

  get eventsUrl(): string {
    return `${this.baseUrl}/slack/events`;
  }

  /** The whole flow in one browser, signed in to `team` (or an organisation) as `user`. */
  async install(team: string, user = "U0INSTALLER"): Promise<string> {
    const browser = new Browser();
    const page = await browser.get(`${this.baseUrl}/slack/install`);
    const authorizeUrl = new URL(addToSlackLink(page.body));
    browser.setCookie(sessionCookie(team, user));
    const consent = await browser.get(authorizeUrl.toString());
    const done = await browser.get(consent.location ?? "");
    return done.body;
  }

  installation(teamId: string | undefined, enterpriseId?: string, orgWide = false) {
    const query = { teamId, enterpriseId, isEnterpriseInstall: orgWide };
    return this.installations.fetchInstallation(query as InstallationQuery<boolean>);
  }

  log(): string {
    return this.logLines.join("");
  }

  async close(): Promise<void> {
    await this.running.close();
    await this.sim.close();
    await this.slack.close();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
