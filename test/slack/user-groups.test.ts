/**
 * User groups on Slack (the local double, a real WebClient): a group's members are asked once
 * a minute per workspace and group (a burst shares one call), a failure is not remembered, and
 * the admin's form lists the workspace's groups by handle.
 */
import { WebClient } from "@slack/web-api";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listUserGroups, slackGroupMembers } from "../../src/slack/user-groups.ts";
import { type LocalSlack, startLocalSlack } from "../../tools/local-slack/index.ts";
import { silentLogger } from "../support/silent-logger.ts";

let slack: LocalSlack;
let client: WebClient;
beforeEach(async () => {
  slack = await startLocalSlack({ teamId: "T0001", scopes: ["usergroups:read"] });
  client = new WebClient(slack.botToken, {
    slackApiUrl: slack.apiUrl,
    logger: silentLogger,
    retryConfig: { retries: 0 },
  });
});
afterEach(() => slack.close());

const calls = () => slack.calls.filter((c) => c.method === "usergroups.users.list").length;

describe("a user group's members", () => {
  it("are asked once a minute; a burst shares one call; changes show after the minute", async () => {
    const eng = slack.addUserGroup({ handle: "engineering", users: ["UALICE"] });
    let now = 1_800_000_000_000;
    const members = slackGroupMembers({ client, now: () => now });
    const burst = await Promise.all([members("T0001", eng), members("T0001", eng)]);
    expect(burst.map((m) => [...m])).toEqual([["UALICE"], ["UALICE"]]);
    expect(calls()).toBe(1);
    slack.setUserGroupMembers(eng, ["UALICE", "UBOB"]);
    now += 30_000;
    expect((await members("T0001", eng)).has("UBOB")).toBe(false);
    now += 31_000;
    expect((await members("T0001", eng)).has("UBOB")).toBe(true);
    expect(calls()).toBe(2);
  });

  it("throw when Slack cannot answer, and are asked again next time", async () => {
    const eng = slack.addUserGroup({ handle: "engineering", users: ["UALICE"] });
    const members = slackGroupMembers({ client });
    slack.failNext("usergroups.users.list", { error: "fatal_error" });
    await expect(members("T0001", eng)).rejects.toThrow(/fatal_error/);
    expect([...(await members("T0001", eng))]).toEqual(["UALICE"]);
    await expect(members("T0001", "S0UNKNOWN")).rejects.toThrow(/no_such_subteam/);
  });

  it("are asked with the workspace's own token when one is given per workspace", async () => {
    const other = slack.addTeam({ id: "T0TWO", installed: true });
    const theirs = slack.addUserGroup({ handle: "ops", users: ["UOPS"], teamId: other.id });
    const members = slackGroupMembers({
      client: new WebClient(undefined, { slackApiUrl: slack.apiUrl, logger: silentLogger }),
      tokenFor: (team) => slack.team(team).botToken,
    });
    expect([...(await members("T0TWO", theirs))]).toEqual(["UOPS"]);
    await expect(members("T0001", theirs)).rejects.toThrow(/no_such_subteam/);
  });
});

describe("the workspace's user groups for the form", () => {
  it("are listed by handle, without disabled ones", async () => {
    slack.addUserGroup({ handle: "ops", users: [] });
    slack.addUserGroup({ handle: "engineering", name: "Engineers", users: ["UALICE"] });
    slack.addUserGroup({ handle: "retired", users: [], disabled: true });
    expect(await listUserGroups(client)).toEqual([
      { id: expect.stringMatching(/^S/), handle: "engineering", name: "Engineers" },
      { id: expect.stringMatching(/^S/), handle: "ops", name: "ops" },
    ]);
  });
});
