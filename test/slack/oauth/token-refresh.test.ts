/**
 * Refreshing rotating bot tokens once at a time (src/slack/oauth/token-refresh.ts), against the local
 * Slack double (a refresh answers a new pair and spends the used refresh token, as Slack does)
 * with Bolt's own installer on top: many authorizations on two instances sharing a store make
 * one refresh; one that loses a refresh to another instance reads that instance's pair; one
 * waiting for another instance waits a bounded time; Bolt itself never refreshes.
 */
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import type { Installation, InstallationStore } from "@slack/bolt";
import { InstallProvider } from "@slack/oauth";
import { WebClient } from "@slack/web-api";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../../src/log.ts";
import { boltLogger } from "../../../src/slack/bolt-logger.ts";
import { RefreshingInstallations } from "../../../src/slack/oauth/token-refresh.ts";
import { createInstallationStore } from "../../../src/store/installations.ts";
import { createMemoryStore } from "../../support/fakes/memory-store.ts";
import { openRedisStore } from "../../../src/store/redis.ts";
import type { ThreadStore } from "../../../src/store/types.ts";
import { sealingKeys } from "../../../src/util/secret-box.ts";
import { type LocalSlack, startLocalSlack } from "../../../tools/local-slack/index.ts";
import { testRedisUrl } from "../../support/needs.ts";
import { silentLogger } from "../../support/silent-logger.ts";

const REDIRECT = "https://bot.example.com/slack/oauth_redirect";
const TEAM = "T0ROTATE";
const KEYS = sealingKeys([randomBytes(32).toString("base64")]);
const QUERY = { teamId: TEAM, enterpriseId: undefined, isEnterpriseInstall: false as const };
const redisUrl = testRedisUrl();
let seq = 0;

let slack: LocalSlack;
beforeEach(async () => {
  // Tokens live an hour: within the two hours before expiry in which they are refreshed.
  slack = await startLocalSlack({
    oauth: { redirectUrls: [REDIRECT], tokenRotation: true, tokenLifetimeS: 3600 },
  });
  slack.addTeam({ id: TEAM });
});
afterEach(async () => {
  await slack.close();
});

/** What a logger wrote, as JSON lines. */
function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger({ level: "debug", destination }) };
}

const client = () =>
  new WebClient(undefined, {
    slackApiUrl: slack.apiUrl,
    logger: silentLogger,
    retryConfig: { retries: 0 },
  });

const refreshCalls = () =>
  slack.calls.filter(
    (c) => c.method === "oauth.v2.access" && c.args.grant_type === "refresh_token",
  );

/** The workspace installed through the double's consent screen, as Bolt would store it. */
async function install(store: InstallationStore): Promise<Installation> {
  const consent = new URL(`${slack.url}oauth/v2/authorize`);
  consent.searchParams.set("client_id", slack.oauth.clientId);
  consent.searchParams.set("team", TEAM);
  consent.searchParams.set("scope", "chat:write");
  const back = slack.oauth.authorize(consent, undefined);
  if (back.status !== 302) throw new Error(back.error);
  const res = await client().oauth.v2.access({
    client_id: slack.oauth.clientId,
    client_secret: slack.oauth.clientSecret,
    code: new URL(back.location).searchParams.get("code") ?? "",
  });
  const installation: Installation = {
    team: { id: TEAM },
    enterprise: undefined,
    user: { id: "U0INSTALLER", token: undefined, scopes: undefined },
    bot: {
      token: res.access_token ?? "",
      refreshToken: res.refresh_token,
      expiresAt: Math.floor(Date.now() / 1000) + (res.expires_in ?? 0),
      id: "B0BOT",
      userId: res.bot_user_id ?? "",
      scopes: ["chat:write"],
    },
    tokenType: "bot",
    isEnterpriseInstall: false,
    appId: res.app_id,
    authVersion: "v2",
  };
  await store.storeInstallation(installation);
  // Refreshed tokens from here on live Slack's 12 hours: not due again.
  slack.oauth.tokenLifetimeS = 43_200;
  return installation;
}

/**
 * Another instance's refresh of `installed`'s token through the double: the installation with
 * the new pair, not stored yet.
 */
async function refreshElsewhere(installed: Installation): Promise<Installation> {
  const bot = installed.bot as NonNullable<Installation["bot"]>;
  const theirs = await client().oauth.v2.access({
    client_id: slack.oauth.clientId,
    client_secret: slack.oauth.clientSecret,
    grant_type: "refresh_token",
    refresh_token: bot.refreshToken ?? "",
  });
  const expiresAt = Math.floor(Date.now() / 1000) + (theirs.expires_in ?? 0);
  const token = theirs.access_token ?? "";
  return { ...installed, bot: { ...bot, token, refreshToken: theirs.refresh_token, expiresAt } };
}

const backends: Array<[string, (ns: string) => Promise<ThreadStore>]> = [
  [
    "memory",
    (() => {
      const shared = new Map<string, ThreadStore>();
      return async (ns: string) => {
        const found = shared.get(ns) ?? createMemoryStore({ namespace: ns });
        shared.set(ns, found);
        return found;
      };
    })(),
  ],
];
if (redisUrl) {
  backends.push(["Redis", (ns) => openRedisStore(redisUrl, () => {}, { namespace: ns })]);
}

describe.each(backends)("refreshing rotating tokens on %s", (_name, open) => {
  const opened: ThreadStore[] = [];
  afterAll(async () => {
    await Promise.all([...new Set(opened)].map((s) => s.close()));
  });

  /** An instance: its handle on the store, the sealed installations, the refreshing ones. */
  async function instance(ns: string, options: { waitMs?: number; leases?: ThreadStore } = {}) {
    const records = await open(ns);
    opened.push(records);
    const { lines, logger } = capture();
    const sealed = createInstallationStore(records, KEYS);
    const installations = new RefreshingInstallations(sealed, {
      clientId: slack.oauth.clientId,
      clientSecret: slack.oauth.clientSecret,
      client: client(),
      leases: options.leases ?? records,
      logger,
      ...(options.waitMs === undefined ? {} : { waitMs: options.waitMs }),
    });
    const installer = new InstallProvider({
      clientId: slack.oauth.clientId,
      clientSecret: slack.oauth.clientSecret,
      stateSecret: "state-secret-of-the-test-0123",
      installationStore: installations,
      clientOptions: { slackApiUrl: slack.apiUrl },
      logger: boltLogger(logger),
    });
    const errors = () => lines.filter((l) => (l.level as number) >= 50);
    return { sealed, installations, installer, lines, errors };
  }

  it("refreshes once for many authorizations at once on two instances, and each gets the new token", async () => {
    const ns = `refresh${process.pid}x${++seq}`;
    const [a, b] = [await instance(ns), await instance(ns)];
    const installed = await install(a.sealed);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).installer.authorize(QUERY)),
    );
    const calls = refreshCalls();
    expect(calls.map((c) => c.response.ok)).toEqual([true]);
    const refreshed = (calls[0]?.response ?? {}) as {
      access_token?: string;
      refresh_token?: string;
    };
    expect(refreshed.access_token).not.toBe(installed.bot?.token);
    expect(results.map((r) => r.botToken)).toEqual(results.map(() => refreshed.access_token));
    // Bolt got no refresh token, so it had none to spend; the store keeps the new one.
    expect(results.every((r) => r.botRefreshToken === undefined)).toBe(true);
    expect((await a.sealed.fetchInstallation(QUERY)).bot?.refreshToken).toBe(
      refreshed.refresh_token,
    );
    expect([...a.errors(), ...b.errors()]).toEqual([]);
    // Later calls find it fresh: no refresh, the same token.
    expect((await b.installer.authorize(QUERY)).botToken).toBe(refreshed.access_token);
    expect(refreshCalls()).toHaveLength(1);
  });

  it("reads the pair another instance stored when its own refresh loses with invalid_refresh_token", async () => {
    const ns = `lost${process.pid}x${++seq}`;
    // The lease was lost (expired mid-refresh): nothing keeps this instance from refreshing too.
    const leases = { acquireLease: async () => true, releaseLease: async () => {} };
    const mine = await instance(ns, { leases: leases as unknown as ThreadStore });
    const installed = await install(mine.sealed);
    // Another instance spent the refresh token; it stores its pair once this one has lost.
    const theirs = await refreshElsewhere(installed);
    const stored = slack
      .waitForCall((c) => c.response.error === "invalid_refresh_token")
      .then(() => mine.sealed.storeInstallation(theirs));
    const found = await mine.installations.fetchInstallation(QUERY);
    await stored;
    expect(refreshCalls().map((c) => c.response.error ?? "ok")).toEqual([
      "ok",
      "invalid_refresh_token",
    ]);
    expect(found.bot?.token).toBe(theirs.bot?.token);
    expect(mine.errors()).toEqual([]);
    expect(mine.lines.map((l) => l.msg)).toContain(
      "another instance refreshed the workspace's token first",
    );
  });

  it("says so, and goes on with the current token, when Slack refuses the refresh token and nobody stored a new one", async () => {
    const ns = `refused${process.pid}x${++seq}`;
    const mine = await instance(ns, { waitMs: 200 });
    const installed = await install(mine.sealed);
    await refreshElsewhere(installed); // spent, its pair lost
    const found = await mine.installations.fetchInstallation(QUERY);
    expect(found.bot?.token).toBe(installed.bot?.token);
    expect(mine.errors().map((l) => l.msg)).toEqual([
      "Slack refused the workspace's refresh token (invalid_refresh_token) and no instance stored a new one: the current token is used until it expires; install the app there again",
    ]);
    expect(JSON.stringify(mine.lines)).not.toContain(installed.bot?.refreshToken);
  });

  it("waits a bounded time for the instance holding the refresh, then reads its pair, or goes on", async () => {
    const ns = `wait${process.pid}x${++seq}`;
    const records = await open(ns);
    opened.push(records);
    // Another instance holds the refresh's lease; it stores its pair once this one has waited.
    const lease = `token-refresh:t:${TEAM}`;
    expect(await records.acquireLease(lease, "other-instance", 60_000)).toBe(true);
    let theirs: Installation | undefined;
    let storing: Promise<void> | undefined;
    const leases = {
      acquireLease: async (name: string, owner: string, ttlMs: number) => {
        const got = await records.acquireLease(name, owner, ttlMs);
        if (!got && theirs) storing ??= mine.sealed.storeInstallation(theirs);
        return got;
      },
      releaseLease: (name: string, owner: string) => records.releaseLease(name, owner),
    };
    const mine = await instance(ns, { waitMs: 1000, leases: leases as unknown as ThreadStore });
    const installed = await install(mine.sealed);
    theirs = await refreshElsewhere(installed);
    const started = Date.now();
    const found = await mine.installations.fetchInstallation(QUERY);
    expect(found.bot?.token).toBe(theirs.bot?.token);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(refreshCalls()).toHaveLength(1); // theirs only

    // Due again, and the holder never finishes: after its wait, the current token.
    theirs = undefined;
    await mine.sealed.storeInstallation(installed);
    const again = Date.now();
    const current = await mine.installations.fetchInstallation(QUERY);
    expect(current.bot?.token).toBe(installed.bot?.token);
    expect(Date.now() - again).toBeGreaterThanOrEqual(1000);
    expect(Date.now() - again).toBeLessThan(3000);
    expect(mine.lines.map((l) => l.msg)).toContain(
      "another instance's refresh of the workspace's token did not finish in time: the current token is used",
    );
    expect(refreshCalls()).toHaveLength(1);
  });
});
