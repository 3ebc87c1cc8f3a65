/**
 * The gate every Slack payload passes before a listener: which workspace a payload names (read
 * where Bolt reads it), the operator's allow-list and lent key, whether a workspace belongs to
 * an organisation (asked of Slack's `auth.teams.list` on the local double, remembered a while),
 * and how a refusal or an older version's payload is told privately, whatever its kind.
 */
import { WebClient } from "@slack/web-api";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SlackOAuthConfig } from "../../src/config/workspaces.ts";
import { answerPrivately, namePayload, olderVersion } from "../../src/slack/gate/acks.ts";
import { declaredTeam, orgMembership, teamPolicy } from "../../src/slack/gate/team.ts";
import { type LocalSlack, startLocalSlack } from "../../tools/local-slack/index.ts";
import {
  blockActionPayload,
  eventEnvelope,
  shortcutPayload,
  slashCommandFields,
  viewSubmissionPayload,
} from "../../tools/local-slack/slack-requests.ts";

const silent = pino({ level: "silent" });

describe("the workspace a payload names", () => {
  it("is read where Bolt reads it: the authorization of an event, a command's team, a view's installing team", () => {
    const event = eventEnvelope({
      event_id: "Ev1",
      team_id: "T0SENDER",
      event: { type: "message" },
      authorizations: [{ team_id: "T0INSTALLED", user_id: "UBOT", is_bot: true }],
    });
    expect(declaredTeam(event)).toBe("T0INSTALLED");
    const command = slashCommandFields({
      text: "",
      team_id: "T0CMD",
      user_id: "U1",
      channel_id: "C1",
      response_url: "https://x",
      trigger_id: "t",
    });
    expect(declaredTeam(command)).toBe("T0CMD");
    const view = viewSubmissionPayload({
      team_id: "T0USER",
      user_id: "U1",
      view: { id: "V1", app_installed_team_id: "T0APP" },
      values: {},
    });
    expect(declaredTeam(view)).toBe("T0APP");
    const action = blockActionPayload({
      team_id: "T0ACT",
      user_id: "U1",
      channel_id: "C1",
      message_ts: "1.2",
      action_id: "a",
      value: "v",
    });
    expect(declaredTeam(action)).toBe("T0ACT");
    expect(declaredTeam({ ...action, team: null, user: { id: "U1", team_id: "T0USR" } })).toBe(
      "T0USR",
    );
    expect(declaredTeam({ ...action, team: null, user: { id: "U1" } })).toBeUndefined();
    // A malformed field the gate does not read must not hide the workspace the payload names.
    expect(declaredTeam({ ...action, trigger_id: 42, actions: [{ action_id: 7 }] })).toBe("T0ACT");
  });
});

describe("the operator's policy", () => {
  const oauth = (over: Partial<SlackOAuthConfig>): SlackOAuthConfig => ({
    clientId: "1.2",
    clientSecret: "s",
    stateSecret: "state-secret-0123456789",
    redirectUri: undefined,
    authorizeUrl: "https://slack.com/oauth/v2/authorize",
    allowedTeams: undefined,
    apiKeyFor: new Set(),
    ...over,
  });

  it("allows the listed workspaces and the workspaces of listed organisations, everyone when unset", () => {
    const listed = teamPolicy(oauth({ allowedTeams: new Set(["T0A", "E0GRID"]) }));
    expect(listed.allows("T0A", undefined)).toBe(true);
    expect(listed.allows("T0G1", "E0GRID")).toBe(true);
    expect(listed.allows(undefined, "E0GRID")).toBe(true);
    expect(listed.allows("T0B", undefined)).toBe(false);
    expect(listed.allows("T0B", "E0OTHER")).toBe(false);
    expect(teamPolicy(oauth({})).allows("T0ANY", undefined)).toBe(true);
  });

  it("lends the app's key to none by default, to the listed, or to all with *", () => {
    expect(teamPolicy(oauth({})).lendsAppKey("T0A", undefined)).toBe(false);
    const some = teamPolicy(oauth({ apiKeyFor: new Set(["T0A", "E0GRID"]) }));
    expect([some.lendsAppKey("T0A", undefined), some.lendsAppKey("T0G", "E0GRID")]).toEqual([
      true,
      true,
    ]);
    expect(some.lendsAppKey("T0B", undefined)).toBe(false);
    expect(teamPolicy(oauth({ apiKeyFor: "all" })).lendsAppKey("T0B", undefined)).toBe(true);
    // One workspace: it is the app's own.
    expect(teamPolicy(undefined).lendsAppKey("T0B", undefined)).toBe(true);
  });
});

describe("an organisation's workspaces (auth.teams.list)", () => {
  let slack: LocalSlack;
  let client: WebClient;
  let token: string;
  beforeAll(async () => {
    slack = await startLocalSlack({ teamId: "T0HOME" });
    token = slack.addEnterprise({ id: "E0ORG", installed: true }).botToken;
    slack.addTeam({ id: "T0ORG1", enterpriseId: "E0ORG" });
    slack.addTeam({ id: "T0ORG2", enterpriseId: "E0ORG" });
    slack.addTeam({ id: "T0ELSE" });
    client = new WebClient(undefined, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
  });
  afterAll(async () => {
    await slack.close();
  });
  const asked = () => slack.calls.filter((c) => c.method === "auth.teams.list").length;

  it("says yes for a listed workspace and no for another, asking once for both", async () => {
    let now = 1_700_000_000_000;
    const members = orgMembership(client, () => now);
    const before = asked();
    expect(await members.isMember("E0ORG", "T0ORG1", token)).toBe(true);
    expect(await members.isMember("E0ORG", "T0ORG2", token)).toBe(true);
    expect(await members.isMember("E0ORG", "T0ELSE", token)).toBe(false);
    expect(asked() - before).toBe(1);
    // A workspace newly approved is seen once the list is asked for again (30 s on).
    slack.addTeam({ id: "T0ORG3", enterpriseId: "E0ORG" });
    expect(await members.isMember("E0ORG", "T0ORG3", token)).toBe(false);
    now += 30_001;
    expect(await members.isMember("E0ORG", "T0ORG3", token)).toBe(true);
    expect(asked() - before).toBe(2);
  });

  it("reads every page of a long list", async () => {
    for (let i = 0; i < 5; i++) slack.addTeam({ id: `T0PAGE${i}`, enterpriseId: "E0ORG" });
    const res = await client.auth.teams.list({ token, limit: 2 });
    expect(res.teams).toHaveLength(2);
    expect(res.response_metadata?.next_cursor).toBeTruthy();
    const members = orgMembership(client);
    expect(await members.isMember("E0ORG", "T0PAGE4", token)).toBe(true);
  });

  it("fails when Slack refuses, so the caller can refuse the payload", async () => {
    const members = orgMembership(client);
    await expect(members.isMember("E0ORG", "T0ORG1", "xoxb-not-issued")).rejects.toThrow(
      /invalid_auth/,
    );
  });
});

describe("a private answer, whatever the payload", () => {
  type Sent = { how: string; arg: unknown };
  function answerable(body: Record<string, unknown>) {
    const sent: Sent[] = [];
    const record = (how: string) => async (arg?: unknown) => {
      sent.push({ how, arg });
      return { ok: true };
    };
    const note = (how: string) => async (arg?: unknown) => {
      sent.push({ how, arg });
    };
    return {
      sent,
      payload: {
        body,
        ack: note("ack"),
        respond: note("respond"),
        client: { views: { open: record("views.open"), update: record("views.update") } } as never,
      },
    };
  }

  it("answers a command in its acknowledgement, a form inside the form, a button under its message", async () => {
    const cmd = answerable({ command: "/old", team_id: "T1", user_id: "U1" });
    await answerPrivately(cmd.payload, "told", silent);
    expect(cmd.sent).toEqual([{ how: "ack", arg: { response_type: "ephemeral", text: "told" } }]);

    const form = answerable(
      viewSubmissionPayload({ team_id: "T1", user_id: "U1", view: { id: "V1" }, values: {} }),
    );
    await answerPrivately(form.payload, "told", silent);
    expect(form.sent).toHaveLength(1);
    expect(form.sent[0]?.arg).toMatchObject({ response_action: "update", view: { type: "modal" } });

    const button = answerable(
      blockActionPayload({
        team_id: "T1",
        user_id: "U1",
        channel_id: "C1",
        message_ts: "1.2",
        action_id: "old",
        value: "v",
        response_url: "https://hooks.slack.test/1",
      }),
    );
    await answerPrivately(button.payload, "told", silent);
    expect(button.sent.map((s) => s.how)).toEqual(["ack", "respond"]);
    expect(button.sent[1]?.arg).toEqual({
      response_type: "ephemeral",
      replace_original: false,
      text: "told",
    });
  });

  it("opens a modal for a shortcut, and says nothing for a closed modal or an event", async () => {
    const shortcut = answerable(
      shortcutPayload({ team_id: "T1", user_id: "U1", callback_id: "old", trigger_id: "trig1" }),
    );
    await answerPrivately(shortcut.payload, "told", silent);
    expect(shortcut.sent.map((s) => s.how)).toEqual(["ack", "views.open"]);

    const closed = answerable({ type: "view_closed", view: { id: "V1", callback_id: "old" } });
    await answerPrivately(closed.payload, "told", silent);
    expect(closed.sent.map((s) => s.how)).toEqual(["ack"]);

    const event = answerable(
      eventEnvelope({ event_id: "Ev2", team_id: "T1", event: { type: "x" } }),
    );
    await answerPrivately({ ...event.payload, ack: undefined }, "told", silent);
    expect(event.sent).toEqual([]);
  });

  it("names payloads by kind and id for the log, and says what is older by kind", () => {
    expect(
      namePayload({ type: "block_actions", actions: [{ action_id: "a1" }], user: { id: "U1" } }),
    ).toEqual({
      kind: "block_actions",
      id: "a1",
      userId: "U1",
    });
    expect(namePayload({ type: "view_closed", view: { callback_id: "cb" } }).id).toBe("cb");
    expect(namePayload({ type: "something_new" }).kind).toBe("other");
    expect(olderVersion("view_submission")).toContain("This form belongs to an older version");
    expect(olderVersion("block_actions")).toContain("start a new task".replace("start", "Start"));
  });
});
