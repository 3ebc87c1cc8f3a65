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
import { parseConfig, secretsOf } from "../../src/config/config.ts";
import { createLogger } from "../../src/log.ts";
import type { Simulator } from "../../tools/simulator/server.ts";
import { createInstallationStore } from "../../src/store/installations.ts";
import { sealingKeys } from "../../src/util/secret-box.ts";
import { expect } from "vitest";
import type { LocalSlack } from "../../tools/local-slack/index.ts";
import { sessionCookie } from "../../tools/local-slack/index.ts";
import type { LocalSocketMode } from "../../tools/local-slack/local-socket-mode.ts";
import { sendSlashCommand } from "../../tools/local-slack/slack-requests.ts";
import { addToSlackLink, Browser, type Page } from "./browser.ts";
import { freePort } from "./cluster.ts";
import { appEnv, CHANNEL, SIGNING_SECRET, startPeers, statusOf } from "./harness.ts";

/**
 * A person of `team` (by default `U0<team>PERSON`), known to the local Slack as its member: the
 * app asks Slack who sends each request (users.info) and refuses whom Slack cannot name.
 */
export function personOf(slack: LocalSlack, team: string, id = `U0${team.slice(2)}PERSON`) {
  slack.addUser({ id, name: id.slice(2).toLowerCase(), team_id: team });
  return id;
}

/** Signs the OAuth `state` (SLACK_STATE_SECRET): a test checks it never reaches the log. */
export const STATE_SECRET = "e2e-state-secret-0123456789abcdef";
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
  /** The encryption keys the app seals with (base64, the first seals). */
  readonly encryptionKeys: readonly string[];
  /** Whether closing this app closes the simulator and the Slack double (it started them). */
  readonly ownsPeers: boolean;

  private constructor(
    parts: Omit<
      MultiWorkspaceApp,
      | "installations"
      | "install"
      | "installFlow"
      | "installPage"
      | "consent"
      | "installation"
      | "openForm"
      | "command"
      | "finalAnswer"
      | "openedWith"
      | "log"
      | "close"
      | "eventsUrl"
    >,
  ) {
    this.sim = parts.sim;
    this.slack = parts.slack;
    this.running = parts.running;
    this.baseUrl = parts.baseUrl;
    this.logLines = parts.logLines;
    this.dataDir = parts.dataDir;
    this.namespace = parts.namespace;
    this.encryptionKeys = parts.encryptionKeys;
    this.ownsPeers = parts.ownsPeers;
    this.installations = createInstallationStore(
      parts.running.store,
      sealingKeys(parts.encryptionKeys),
    );
  }

  static async start(
    options: {
      redisUrl?: string | undefined;
      socket?: LocalSocketMode;
      /** More settings (e.g. TASK_ALLOWED_TEAMS, or TASK_API_KEY_FOR other than every one). */
      env?: Readonly<Record<string, string>>;
      /**
       * Another instance of `app`: the same Slack, simulator, store (its Redis and namespace)
       * and encryption key, as a second process behind the same load balancer would have.
       */
      instanceOf?: MultiWorkspaceApp;
    } = {},
  ): Promise<MultiWorkspaceApp> {
    const first = options.instanceOf;
    const { sim, slack } = first ?? (await startPeers());
    // Socket Mode: the install pages are served on PORT beside the health routes.
    const port = options.socket ? await freePort() : 0;
    if (options.socket) slack.socketModeUrl = options.socket.url;
    const dataDir = mkdtempSync(join(tmpdir(), "taskbot-many-"));
    const namespace = first?.namespace ?? `many${process.pid}x${Date.now().toString(36)}x${++seq}`;
    const env = appEnv(sim, slack, {
      SLACK_BOT_TOKEN: "",
      SLACK_CLIENT_ID: slack.oauth.clientId,
      SLACK_CLIENT_SECRET: slack.oauth.clientSecret,
      SLACK_STATE_SECRET: STATE_SECRET,
      // Each workspace's service key is sealed with it; TASK_API_KEY is every workspace's
      // fallback here (the suites of TASK_API_KEY_FOR itself narrow it).
      ENCRYPTION_KEY: first?.encryptionKeys[0] ?? randomBytes(32).toString("base64"),
      TASK_API_KEY_FOR: "*",
      PORT: String(port),
      DATA_DIR: dataDir,
      STORE_NAMESPACE: namespace,
      ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
      ...(options.socket ? { SLACK_APP_TOKEN: slack.appToken, SLACK_SIGNING_SECRET: "" } : {}),
      ...options.env,
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
    const baseUrl = `http://127.0.0.1:${running.port ?? port}`;
    // Installs go through the first instance.
    if (!first) slack.oauth.redirectUrls = [`${baseUrl}/slack/oauth_redirect`];
    const { encryptionKeys } = config;
    return new MultiWorkspaceApp({
      sim,
      slack,
      running,
      baseUrl,
      logLines,
      dataDir,
      namespace,
      encryptionKeys,
      ownsPeers: first === undefined,
    });
  }

  get eventsUrl(): string {
    return `${this.baseUrl}/slack/events`;
  }

  /** Opens the install page: the browser gets the state cookie, and the Add to Slack link. */
  async installPage(browser: Browser): Promise<{ page: Page; authorizeUrl: URL }> {
    const page = await browser.get(`${this.baseUrl}/slack/install`);
    expect(page.status).toBe(200);
    return { page, authorizeUrl: new URL(addToSlackLink(page.body)) };
  }

  /** Slack's consent screen, signed in to `team` as `user`: where it sends the browser back. */
  async consent(browser: Browser, authorizeUrl: URL, team: string, user: string): Promise<string> {
    browser.setCookie(sessionCookie(team, user));
    const page = await browser.get(authorizeUrl.toString());
    expect(page.status, page.body).toBe(302);
    return page.location ?? "";
  }

  /** The whole flow in one browser: install page → Slack → back to the app with a code. */
  async installFlow(team: string, user = "U0INSTALLER"): Promise<Page> {
    const browser = new Browser();
    const { authorizeUrl } = await this.installPage(browser);
    return browser.get(await this.consent(browser, authorizeUrl, team, user));
  }

  /** `/task` alone typed in `team`: opens the New task form with the token Bolt resolved. */
  async openForm(team: string, grid?: { enterpriseId: string; orgWide: boolean }) {
    const trigger = `trig.oauth.${++seq}.${Date.now()}`;
    const res = await sendSlashCommand(`${this.baseUrl}/slack/events`, SIGNING_SECRET, {
      text: "",
      team_id: team,
      user_id: "U0SOMEONE",
      channel_id: CHANNEL,
      response_url: this.slack.responseUrl(`oauth${seq}`),
      trigger_id: trigger,
      ...(grid ? { enterprise_id: grid.enterpriseId, is_enterprise_install: grid.orgWide } : {}),
    });
    return { res, trigger };
  }

  /** `/task <text>` typed by a person of `team` in `channel`. */
  command(team: string, channel: string, text: string) {
    return sendSlashCommand(`${this.baseUrl}/slack/events`, SIGNING_SECRET, {
      text,
      team_id: team,
      user_id: personOf(this.slack, team),
      channel_id: channel,
      response_url: this.slack.responseUrl(`oauth${++seq}`),
      trigger_id: `trig.oauth.${seq}.${Date.now()}`,
    });
  }

  /** The final answer of the task whose prompt contains `prompt`, posted by `bot` in `channel`. */
  async finalAnswer(bot: string, channel: string, prompt: string): Promise<string> {
    const root = await this.slack.waitFor(
      () =>
        this.slack
          .messages(channel)
          .find((m) => m.user === bot && JSON.stringify(m.blocks ?? []).includes(prompt)),
      { description: `the task "${prompt}" in ${channel}` },
    );
    const final = await this.slack.waitFor(
      () =>
        this.slack
          .thread(channel, root.ts)
          .find(
            (m) =>
              m.ts !== root.ts &&
              m.user === bot &&
              /Completed in|Failed after|Stopped/.test(statusOf(m)),
          ),
      { timeoutMs: 20_000, description: `the final answer in ${channel}` },
    );
    return statusOf(final);
  }

  openedWith(trigger: string) {
    return this.slack.waitForCall(
      (c) => c.method === "views.open" && c.args.trigger_id === trigger,
      {
        description: `views.open for ${trigger}`,
      },
    );
  }

  /** The whole flow, signed in to `team` (or an organisation) as `user`: the last page's text. */
  async install(team: string, user = "U0INSTALLER"): Promise<string> {
    return (await this.installFlow(team, user)).body;
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
    if (this.ownsPeers) {
      await this.sim.close();
      await this.slack.close();
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
