/**
 * Each workspace pays with its own service account, with many workspaces installed through
 * OAuth and no app-wide TASK_API_KEY: a workspace without a key is told its admin must set one;
 * each workspace's admin sets its key in Workspace settings (App Home), and then tasks in both
 * workspaces, at the same time, reach the service each with its own key (the simulator records
 * which key each call carried).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Running, startApp } from "../../src/bootstrap.ts";
import { parseConfig, secretsOf } from "../../src/config/config.ts";
import { createLogger } from "../../src/log.ts";
import type { Simulator } from "../../tools/simulator/server.ts";
import { type LocalSlack, sessionCookie } from "../../tools/local-slack/index.ts";
import { sendAppHomeOpened, sendViewAction } from "../../tools/local-slack/home-requests.ts";
import {
  sendSlashCommand,
  sendViewSubmission,
  viewState,
} from "../../tools/local-slack/slack-requests.ts";
import { addToSlackLink, Browser } from "../support/browser.ts";
import { appEnv, SIGNING_SECRET, startPeers } from "../support/harness.ts";
import { personOf } from "../support/multi-workspace.ts";
import { storeBackends } from "../support/needs.ts";

/** Each workspace's key, from its own account on the service. */
const KEYS = { T0ACME: "he-acmeOwnAccountKey-a11c", T0GLOBEX: "he-globexOwnAccount-9b0d" };
const ADMINS = { T0ACME: "U0ACMEADMIN", T0GLOBEX: "U0GLOBEXOWNER" };
type Team = keyof typeof KEYS;
const TEAMS = Object.keys(KEYS) as Team[];
let seq = 0;

describe.each(storeBackends())(
  "each workspace's own service key, many workspaces, %s",
  (_n, redis) => {
    let sim: Simulator;
    let slack: LocalSlack;
    let running: Running;
    let events: string;
    const lines: string[] = [];
    const dataDir = mkdtempSync(join(tmpdir(), "taskbot-keys-oauth-"));

    beforeAll(async () => {
      ({ sim, slack } = await startPeers({ simulator: { apiKeys: [KEYS.T0ACME, KEYS.T0GLOBEX] } }));
      const config = parseConfig(
        appEnv(sim, slack, {
          SLACK_BOT_TOKEN: "",
          TASK_API_KEY: "", // no app-wide key: each workspace pays with its own
          SLACK_CLIENT_ID: slack.oauth.clientId,
          SLACK_CLIENT_SECRET: slack.oauth.clientSecret,
          SLACK_STATE_SECRET: "e2e-state-secret-0123456789abcdef",
          ENCRYPTION_KEY: randomBytes(32).toString("base64"),
          PORT: "0",
          DATA_DIR: dataDir,
          STORE_NAMESPACE: `keysoauth${process.pid}x${Date.now().toString(36)}`,
          ...(redis ? { REDIS_URL: redis } : {}),
        }),
      );
      const destination = new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      });
      const logger = createLogger({ level: "debug", secrets: secretsOf(config), destination });
      running = await startApp(config, logger);
      const base = `http://127.0.0.1:${running.port}`;
      events = `${base}/slack/events`;
      slack.oauth.redirectUrls = [`${base}/slack/oauth_redirect`];
      // Both workspaces install the app through the install page and Slack's consent screen.
      slack.addUser({ id: ADMINS.T0ACME, name: "acme-admin", is_admin: true, team_id: "T0ACME" });
      slack.addUser({
        id: ADMINS.T0GLOBEX,
        name: "globex-owner",
        is_owner: true,
        team_id: "T0GLOBEX",
      });
      for (const team of TEAMS) {
        slack.addTeam({ id: team, name: team.slice(2) });
        const browser = new Browser();
        const link = addToSlackLink((await browser.get(`${base}/slack/install`)).body);
        browser.setCookie(sessionCookie(team, ADMINS[team]));
        const back = await browser.get(link);
        expect((await browser.get(back.location ?? "")).body).toContain("Thank you!");
      }
    });
    afterAll(async () => {
      await running?.close();
      await sim?.close();
      await slack?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    const channelOf = (team: Team) => `C0${team.slice(2)}GEN`;

    /** `/task <prompt>` typed by someone in the workspace's general channel. */
    const task = (team: Team, prompt: string) =>
      sendSlashCommand(events, SIGNING_SECRET, {
        text: prompt,
        team_id: team,
        user_id: personOf(slack, team),
        channel_id: channelOf(team),
        response_url: slack.responseUrl(`keys${++seq}`),
        trigger_id: `trig.keys.${seq}.${Date.now()}`,
      });

    /** What the bot said about `prompt` in the workspace's channel, once a final word is there. */
    async function outcome(team: Team, prompt: string, final: RegExp): Promise<string> {
      const said = () =>
        JSON.stringify(slack.messages(channelOf(team), { includeReplies: true }).slice(-20));
      await slack.waitFor(() => said().includes(prompt) && final.test(said()), {
        timeoutMs: 20_000,
        description: `the outcome of "${prompt}" in ${team}`,
      });
      return said();
    }

    /** The workspace's admin sets its key: App Home → Workspace settings → paste → Save. */
    async function setKey(team: Team): Promise<void> {
      const admin = ADMINS[team];
      const tabs = slack.homeTabs(admin).length;
      await sendAppHomeOpened(events, SIGNING_SECRET, { team_id: team, user_id: admin });
      const home = await slack.waitFor(() => slack.homeTabs(admin)[tabs], {
        description: `the Home tab of ${admin}`,
      });
      const views = slack.views().length;
      await sendViewAction(events, SIGNING_SECRET, {
        team_id: team,
        user_id: admin,
        view: home.view,
        action_id: "open_workspace_settings",
        block_id: "home_admin",
      });
      const modal = await slack.waitFor(() => slack.views()[views], {
        description: `${team}'s Workspace settings`,
      });
      expect(JSON.stringify(modal.view.blocks)).toContain("No key: tasks cannot start");
      const res = await sendViewSubmission(events, SIGNING_SECRET, {
        team_id: team,
        user_id: admin,
        view: modal.view,
        values: {
          ...viewState(modal.view),
          service_key: { value: { type: "plain_text_input", value: KEYS[team] } },
        },
      });
      expect(res.body).toBe("");
    }

    it("tells a workspace without a key that its admin must set one; nothing reaches the service", async () => {
      const creates = sim.requests.filter((r) => r.path.endsWith("/quick-action")).length;
      expect((await task("T0ACME", "Plan the product launch")).status).toBe(200);
      const said = await outcome("T0ACME", "Plan the product launch", /API key yet/);
      expect(said).toContain(
        "This workspace has no Task service API key yet. A workspace admin can set it in the app's Home tab (Workspace settings) or with `/task settings`.",
      );
      expect(sim.requests.filter((r) => r.path.endsWith("/quick-action")).length).toBe(creates);
    });

    it("runs tasks in two workspaces at the same time, each with the key its admin set", async () => {
      await Promise.all(TEAMS.map((team) => setKey(team)));
      const prompts = { T0ACME: "Acme's pricing page", T0GLOBEX: "Globex's hiring plan" };
      const sent = await Promise.all(TEAMS.map((team) => task(team, prompts[team])));
      expect(sent.map((r) => r.status)).toEqual([200, 200]);
      for (const team of TEAMS) {
        expect(await outcome(team, prompts[team], /Completed in/)).toContain("Completed in");
        const run = sim.runs().find((r) => r.prompt === prompts[team]);
        // The create went with the workspace's own key (its position in the simulator's keys).
        expect(run?.request.keyIndex).toBe(TEAMS.indexOf(team));
        // And every later call of that run too.
        const calls = sim.requests.filter((r) => r.path.includes(run?.threadId ?? "-"));
        expect(calls.length).toBeGreaterThan(0);
        expect(new Set(calls.map((r) => r.keyIndex))).toEqual(new Set([TEAMS.indexOf(team)]));
      }
      const log = lines.join("");
      for (const key of Object.values(KEYS)) expect(log).not.toContain(key);
    });
  },
);
