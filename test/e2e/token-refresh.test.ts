/**
 * Slack's token rotation end to end: a workspace's bot token about to expire is refreshed once,
 * however many calls find it so at the same moment, in one process and across two instances
 * sharing Redis. The local Slack double answers a refresh with a new pair and spends the refresh
 * token it used (`invalid_refresh_token` after), as Slack does; so concurrent refreshes would show
 * as losers in the log, and calls made with the old token.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalSlack } from "../../tools/local-slack/index.ts";
import { storeBackends } from "../support/needs.ts";
import { MultiWorkspaceApp } from "../support/multi-workspace.ts";

/** Calls at once: enough that every one finds the token due while the first refresh runs. */
const CALLS = 12;

describe.each(storeBackends())("refreshing a rotating token with %s", (name, redisUrl) => {
  let apps: MultiWorkspaceApp[];
  let slack: LocalSlack;

  beforeAll(async () => {
    const first = await MultiWorkspaceApp.start({ redisUrl });
    // With Redis, a second instance on the same store, as behind a load balancer.
    const second = redisUrl ? await MultiWorkspaceApp.start({ redisUrl, instanceOf: first }) : [];
    apps = [first, second].flat();
    slack = first.slack;
  });
  afterAll(async () => {
    for (const app of [...(apps ?? [])].reverse()) await app.close();
  });

  it(`refreshes a token due to expire once for ${CALLS} calls at once, and every call uses the new token (${name})`, async () => {
    const [first] = apps;
    if (!first) throw new Error("no app");
    slack.oauth.tokenRotation = true;
    // Within the two hours before expiry in which a token is refreshed: due at once.
    slack.oauth.tokenLifetimeS = 3600;
    const team = `T0ROT${apps.length}`;
    slack.addTeam({ id: team });
    expect((await first.installFlow(team)).status).toBe(200);
    const installed = await first.installation(team);
    expect(installed.bot?.refreshToken).toMatch(/^xoxe-1-/);
    // A refreshed token lives Slack's 12 hours: not due again.
    slack.oauth.tokenLifetimeS = 43_200;
    const from = slack.calls.length;

    // Every instance gets its share of the calls, all sent before any is answered.
    const sent = Array.from({ length: CALLS }, (_, i) => {
      const app = apps[i % apps.length] ?? first;
      return app.openForm(team).then(async ({ res, trigger }) => {
        expect(res.status).toBe(200);
        return app.openedWith(trigger);
      });
    });
    const opened = await Promise.all(sent);

    const refreshes = slack.calls
      .slice(from)
      .filter((c) => c.method === "oauth.v2.access" && c.args.grant_type === "refresh_token");
    expect(refreshes.map((c) => c.response.ok)).toEqual([true]);
    const refreshed = (refreshes[0]?.response ?? {}) as {
      access_token?: string;
      refresh_token?: string;
    };
    expect(refreshed.access_token).not.toBe(installed.bot?.token);
    expect(opened.map((c) => c.token)).toEqual(opened.map(() => refreshed.access_token));
    expect(opened.every((c) => c.response.ok)).toBe(true);
    // The store holds the new pair, for every instance and for the next refresh.
    expect((await first.installation(team)).bot).toMatchObject({
      token: refreshed.access_token,
      refreshToken: refreshed.refresh_token,
    });
    for (const app of apps) {
      const log = app.log();
      expect(log).not.toContain("invalid_refresh_token");
      expect(log).not.toContain("Failed to perform oauth.v2.access");
      expect(app.logLines.filter((l) => l.includes('"level":50'))).toEqual([]);
      expect(log).not.toContain(String(refreshed.refresh_token));
      expect(log).not.toContain(String(installed.bot?.refreshToken));
    }
  });
});
