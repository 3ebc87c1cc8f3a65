/**
 * The local Slack double's OAuth install flow and its several workspaces, driven by a real
 * WebClient: the consent screen issues a code, oauth.v2.access exchanges it once for the
 * workspace's bot token, auth.test answers per token, rotating tokens expire and refresh.
 */
import { WebAPIPlatformError, WebClient } from "@slack/web-api";
import { afterEach, describe, expect, it } from "vitest";
import {
  type LocalSlack,
  type LocalSlackOptions,
  sessionCookie,
  startLocalSlack,
} from "../../../tools/local-slack/index.ts";
import { silentLogger } from "../../support/silent-logger.ts";

const REDIRECT = "https://bot.example.com/slack/oauth_redirect";
let slack: LocalSlack;
let now = Date.UTC(2025, 0, 1);

async function start(options: LocalSlackOptions = {}): Promise<void> {
  now = Date.UTC(2025, 0, 1);
  slack = await startLocalSlack({
    now: () => now,
    oauth: { redirectUrls: [REDIRECT] },
    ...options,
  });
}

afterEach(async () => {
  await slack.close();
});

const clientFor = (token?: string) =>
  new WebClient(token, {
    slackApiUrl: slack.apiUrl,
    logger: silentLogger,
    retryConfig: { retries: 0 },
  });

async function slackError(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    if (error instanceof WebAPIPlatformError) return error.data.error;
    throw error;
  }
  throw new Error("expected the call to fail with a Slack platform error");
}

/** What a browser gets from the consent screen: the redirect's code and state, or the error. */
async function consent(
  query: Record<string, string>,
  cookie?: string,
): Promise<{ status: number; code?: string; state?: string; location?: string; body: string }> {
  const url = new URL(`${slack.url}oauth/v2/authorize`);
  for (const [k, v] of Object.entries({ client_id: slack.oauth.clientId, ...query })) {
    url.searchParams.set(k, v);
  }
  const res = await fetch(url, {
    redirect: "manual",
    headers: cookie === undefined ? {} : { cookie },
  });
  const location = res.headers.get("location") ?? undefined;
  const back = location === undefined ? undefined : new URL(location);
  return {
    status: res.status,
    body: await res.text(),
    ...(location === undefined ? {} : { location }),
    ...(back?.searchParams.get("code") ? { code: back.searchParams.get("code") ?? "" } : {}),
    ...(back?.searchParams.get("state") ? { state: back.searchParams.get("state") ?? "" } : {}),
  };
}

const exchange = (code: string, extra: Record<string, string> = {}) =>
  clientFor().oauth.v2.access({
    client_id: slack.oauth.clientId,
    client_secret: slack.oauth.clientSecret,
    code,
    ...extra,
  });

describe("installing through OAuth", () => {
  it("sends the browser back with a code and the state; the code buys the workspace's bot token once", async () => {
    await start();
    const team = slack.addTeam({ id: "T0TWO", name: "Second Team" });
    // Not installed yet: Slack never issued this token.
    expect(await slackError(clientFor(team.botToken).auth.test())).toBe("invalid_auth");
    const back = await consent(
      { scope: "chat:write,commands", state: "st4te" },
      sessionCookie("T0TWO", "U0ADMIN2"),
    );
    expect(back.status).toBe(302);
    expect(back.location?.startsWith(`${REDIRECT}?`)).toBe(true);
    expect(back.state).toBe("st4te");
    const granted = await exchange(back.code ?? "");
    expect(granted).toMatchObject({
      ok: true,
      access_token: team.botToken,
      token_type: "bot",
      scope: "chat:write,commands",
      bot_user_id: team.bot.userId,
      app_id: "A0001",
      team: { id: "T0TWO", name: "Second Team" },
      enterprise: null,
      is_enterprise_install: false,
      authed_user: { id: "U0ADMIN2" },
    });
    expect(granted).not.toHaveProperty("refresh_token");
    // A code works once.
    expect(await slackError(exchange(back.code ?? ""))).toBe("invalid_code");
    expect(slack.tokensOf("T0TWO")).toEqual([team.botToken]);
  });

  it("answers auth.test and records every call per token: each workspace is itself", async () => {
    await start();
    const team = slack.addTeam({ id: "T0TWO", name: "Second Team" });
    await exchange((await consent({ scope: "chat:write", team: "T0TWO" })).code ?? "");
    expect(await clientFor(team.botToken).auth.test()).toMatchObject({
      team_id: "T0TWO",
      team: "Second Team",
      user_id: team.bot.userId,
      bot_id: team.bot.id,
      url: "https://t0two.slack.com/",
      is_enterprise_install: false,
    });
    expect(await clientFor(slack.botToken).auth.test()).toMatchObject({
      team_id: "T0001",
      user_id: "UBOT",
    });
    const calls = slack.calls.filter((c) => c.method === "auth.test");
    expect(calls.map((c) => [c.team, c.token])).toEqual([
      ["T0TWO", team.botToken],
      ["T0001", slack.botToken],
    ]);
  });

  it("grants exactly the scopes asked for at install", async () => {
    await start();
    const team = slack.addTeam({ id: "T0TWO" });
    await exchange((await consent({ scope: "commands", team: "T0TWO" })).code ?? "");
    const err: unknown = await clientFor(team.botToken)
      .chat.postMessage({ channel: "C1", text: "hi" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebAPIPlatformError);
    expect((err as WebAPIPlatformError).data).toMatchObject({
      error: "missing_scope",
      needed: "chat:write",
      provided: "commands",
    });
  });

  it("refuses a wrong client, secret, redirect URL, an unknown workspace and a stale code", async () => {
    await start();
    slack.addTeam({ id: "T0TWO" });
    expect((await consent({ client_id: "9999.0000", team: "T0TWO" })).body).toContain(
      "invalid_client_id",
    );
    const elsewhere = await consent({ team: "T0TWO", redirect_uri: "https://evil.example.com/cb" });
    expect([elsewhere.status, elsewhere.body.includes("bad_redirect_uri")]).toEqual([400, true]);
    expect((await consent({ team: "T0NOBODY" })).body).toContain("unknown_workspace");

    const named = await consent({ team: "T0TWO", redirect_uri: REDIRECT, scope: "commands" });
    expect(await slackError(exchange(named.code ?? ""))).toBe("bad_redirect_uri");
    expect(await slackError(exchange(named.code ?? "", { client_secret: "not-the-secret" }))).toBe(
      "bad_client_secret",
    );
    expect(await slackError(exchange(named.code ?? "", { client_id: "9999.0000" }))).toBe(
      "invalid_client_id",
    );
    const stale = await consent({ team: "T0TWO", scope: "commands" });
    now += 10 * 60_000 + 1;
    expect(await slackError(exchange(stale.code ?? ""))).toBe("invalid_code");
    expect(await slackError(exchange("made-up"))).toBe("invalid_code");
  });

  it("takes the client id and secret in HTTP Basic too, as Slack prefers", async () => {
    await start();
    slack.addTeam({ id: "T0TWO" });
    const { code } = await consent({ team: "T0TWO", scope: "commands" });
    const basic = Buffer.from(`${slack.oauth.clientId}:${slack.oauth.clientSecret}`).toString(
      "base64",
    );
    const res = await fetch(`${slack.apiUrl}oauth.v2.access`, {
      method: "POST",
      headers: {
        authorization: `Basic ${basic}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ code: code ?? "" }),
    });
    expect(await res.json()).toMatchObject({ ok: true, team: { id: "T0TWO" } });
  });

  it("installs org-wide on an Enterprise Grid organisation: one token for all its workspaces", async () => {
    await start();
    const grid = slack.addEnterprise({ id: "E0GRID", name: "Grid Co" });
    const { code } = await consent({ team: "E0GRID", scope: "commands" });
    expect(await exchange(code ?? "")).toMatchObject({
      access_token: grid.botToken,
      team: null,
      enterprise: { id: "E0GRID", name: "Grid Co" },
      is_enterprise_install: true,
      bot_user_id: grid.bot.userId,
    });
    const auth = await clientFor(grid.botToken).auth.test();
    expect(auth).toMatchObject({
      enterprise_id: "E0GRID",
      is_enterprise_install: true,
      url: "https://e0grid.enterprise.slack.com/",
    });
    expect(auth.team_id).toBeUndefined();
  });
});

describe("token rotation", () => {
  it("gives expiring tokens with a refresh token; the refresh grant gives a new pair, and the used refresh token stops working", async () => {
    await start({ oauth: { redirectUrls: [REDIRECT], tokenRotation: true, tokenLifetimeS: 3600 } });
    slack.addTeam({ id: "T0TWO" });
    const granted = await exchange(
      (await consent({ team: "T0TWO", scope: "chat:write" })).code ?? "",
    );
    expect(granted.access_token).toMatch(/^xoxe\.xoxb-1-/);
    expect(granted.refresh_token).toMatch(/^xoxe-1-/);
    expect(granted.expires_in).toBe(3600);
    const first = granted.access_token ?? "";
    expect((await clientFor(first).auth.test()).team_id).toBe("T0TWO");

    now += 3600_000;
    expect(await slackError(clientFor(first).auth.test())).toBe("token_expired");
    const refreshWith = (refreshToken: string) =>
      clientFor().oauth.v2.access({
        client_id: slack.oauth.clientId,
        client_secret: slack.oauth.clientSecret,
        grant_type: "refresh_token",
        refresh_token: refreshToken,
      });
    const refreshed = await refreshWith(granted.refresh_token ?? "");
    expect(refreshed).toMatchObject({ token_type: "bot", team: { id: "T0TWO" }, expires_in: 3600 });
    expect(refreshed.refresh_token).toMatch(/^xoxe-1-/);
    expect(refreshed.refresh_token).not.toBe(granted.refresh_token);
    expect(refreshed.access_token).not.toBe(first);
    expect((await clientFor(refreshed.access_token).auth.test()).team_id).toBe("T0TWO");
    // The used refresh token is spent: a second refresh with it loses, the new one works once.
    expect(await slackError(refreshWith(granted.refresh_token ?? ""))).toBe(
      "invalid_refresh_token",
    );
    const again = await refreshWith(refreshed.refresh_token ?? "");
    expect(again.access_token).not.toBe(refreshed.access_token);
    // A token issued before a refresh works until it expires.
    expect((await clientFor(refreshed.access_token).auth.test()).team_id).toBe("T0TWO");
    expect(await slackError(refreshWith(refreshed.refresh_token ?? ""))).toBe(
      "invalid_refresh_token",
    );
    expect(
      await slackError(
        clientFor().oauth.v2.access({
          client_id: slack.oauth.clientId,
          client_secret: slack.oauth.clientSecret,
          grant_type: "refresh_token",
          refresh_token: "xoxe-1-made-up",
        }),
      ),
    ).toBe("invalid_refresh_token");
  });
});
