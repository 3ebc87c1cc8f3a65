/**
 * Each workspace kept to itself. A payload is handled as the workspace Bolt authorised, never as
 * the team it names: a payload naming another workspace, or none, is refused privately; a
 * workspace claiming an organisation's org-wide install is taken as the organisation's only when
 * the organisation's token lists it (auth.teams.list), and only then remembered as its own; an
 * organisation's uninstall never forgets a workspace installed on its own. The operator decides
 * which workspaces may install and use the app (TASK_ALLOWED_TEAMS) and which may spend the app's
 * TASK_API_KEY (TASK_API_KEY_FOR). Workspace settings open only to active admins of the workspace.
 */
import type { Installation } from "@slack/bolt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InstallationNotFoundError } from "../../src/store/installations.ts";
import {
  blockActionPayload,
  FORM_CONTENT_TYPE,
  sendBlockAction,
  sendSignedRequest,
  sendSlashCommand,
  sendViewSubmission,
} from "../../tools/local-slack/slack-requests.ts";
import { ADMIN, CHANNEL, Harness, SIGNING_SECRET, TEAM } from "../support/harness.ts";
import { MultiWorkspaceApp, personOf } from "../support/multi-workspace.ts";
import { seedWorkspace } from "../support/workspace-records.ts";
import { until } from "../support/until.ts";

let seq = 0;
const GRID = "E0ISGRID";

describe("many workspaces: each kept to itself", () => {
  let app: MultiWorkspaceApp;

  /** `/task <text>` typed in `team`, under the organisation's org-wide install when given. */
  const command = (team: string, text: string, org?: string) =>
    sendSlashCommand(app.eventsUrl, SIGNING_SECRET, {
      text,
      team_id: team,
      user_id: personOf(app.slack, team),
      channel_id: `C0${team.slice(2)}`,
      response_url: app.slack.responseUrl(`iso${++seq}`),
      trigger_id: `trig.iso.${seq}.${Date.now()}`,
      ...(org ? { enterprise_id: org, is_enterprise_install: true } : {}),
    });
  const ackText = (res: { json?: unknown }) => JSON.stringify(res.json ?? {});

  beforeAll(async () => {
    app = await MultiWorkspaceApp.start({
      env: {
        TASK_ALLOWED_TEAMS: `T0ISA,T0ISB,T0ISFOREIGN,${GRID},E0ISOTHER`,
        TASK_API_KEY_FOR: "T0ISA",
      },
    });
    for (const id of ["T0ISA", "T0ISB", "T0ISFOREIGN", "T0ISNO"]) app.slack.addTeam({ id });
    app.slack.addEnterprise({ id: GRID });
    app.slack.addEnterprise({ id: "E0ISOTHER" });
    app.slack.addTeam({ id: "T0ISG1", enterpriseId: GRID });
    for (const id of ["T0ISA", "T0ISB", "T0ISFOREIGN", GRID, "E0ISOTHER"]) {
      expect(await app.install(id)).toContain("Thank you!");
    }
  });
  afterAll(async () => {
    await app?.close();
  });

  it("refuses to install a workspace the operator did not allow, saying what to do, and keeps nothing", async () => {
    const page = await app.installFlow("T0ISNO");
    expect(page.status).toBe(403);
    expect(page.body).toContain("add it to TASK_ALLOWED_TEAMS");
    await expect(app.installation("T0ISNO")).rejects.toBeInstanceOf(InstallationNotFoundError);
    // The token Slack issued for it was given back.
    await app.slack.waitForCall((c) => c.method === "auth.revoke" && c.team === "T0ISNO");
    expect(app.slack.tokensOf("T0ISNO")).toEqual([]);
  });

  it("refuses every request of an installed workspace the operator no longer allows", async () => {
    // Installed before the operator narrowed TASK_ALLOWED_TEAMS.
    const old = app.slack.addTeam({ id: "T0ISOLD", installed: true });
    await app.installations.storeInstallation({
      team: { id: "T0ISOLD" },
      enterprise: undefined,
      user: { id: "U0OLD", token: undefined, scopes: undefined },
      bot: { token: old.botToken, id: old.bot.id, userId: old.bot.userId, scopes: [] },
      isEnterpriseInstall: false,
    } as Installation);
    const runs = app.sim.runs().length;
    const res = await command("T0ISOLD", "Old workspace task");
    expect(res.status).toBe(200);
    expect(ackText(res)).toContain("not enabled for this workspace (T0ISOLD)");
    expect(ackText(res)).toContain("TASK_ALLOWED_TEAMS");
    expect(app.sim.runs().length).toBe(runs);
  });

  it("lends TASK_API_KEY only to the workspaces TASK_API_KEY_FOR names", async () => {
    await command("T0ISA", "Lent key task [sim:length=40]");
    expect(
      await app.finalAnswer(app.slack.team("T0ISA").bot.userId, "C0ISA", "Lent key task"),
    ).toMatch(/Completed in/);
    const creates = app.sim.runs().length;
    await command("T0ISB", "Unlent key task");
    await app.slack.waitFor(
      () =>
        JSON.stringify(app.slack.messages("C0ISB", { includeReplies: true })).includes(
          "no Task service API key yet",
        ),
      { description: "the missing key told in B" },
    );
    expect(app.sim.runs().length).toBe(creates);
  });

  it("refuses a payload with no workspace under an org-wide install: nothing is kept under an empty team", async () => {
    const id = `iso-noteam-${++seq}`;
    const payload = {
      ...blockActionPayload({
        team_id: "",
        user_id: "U0GRIDPERSON",
        channel_id: "C0GRID",
        message_ts: "1700000000.000100",
        action_id: "task_stop",
        value: "x",
        response_url: app.slack.responseUrl(id),
      }),
      team: null,
      user: { id: "U0GRIDPERSON", username: "gridperson" },
      enterprise: { id: GRID },
      is_enterprise_install: true,
    };
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const res = await sendSignedRequest(app.eventsUrl, SIGNING_SECRET, body, FORM_CONTENT_TYPE);
    expect(res.status).toBe(200);
    const told = await app.slack.waitFor(
      () => app.slack.responseUrlPosts.find((p) => p.id === id),
      { description: "the private refusal" },
    );
    expect(JSON.stringify(told.body)).toContain("could not tell which workspace");
  });

  it("refuses, asking to try again, when Slack cannot say whether a workspace is the organisation's", async () => {
    app.slack.failNext("auth.teams.list", { error: "internal_error" });
    const res = await command("T0ISG1", "", GRID);
    expect(res.status).toBe(200);
    expect(ackText(res)).toContain("could not confirm that this workspace belongs");
    expect(await app.running.store.getRecord("t:T0ISG1:organisation")).toBeUndefined();
  });

  it("takes a workspace as an organisation's only when the organisation's token lists it", async () => {
    // A workspace of another organisation (installed on its own) claims the grid's install.
    const res = await command("T0ISFOREIGN", "", GRID);
    expect(res.status).toBe(200);
    expect(ackText(res)).toContain("not approved for this workspace");
    const listed = app.slack.calls.filter((c) => c.method === "auth.teams.list");
    expect(listed.at(-1)?.enterprise).toBe(GRID);
    // A workspace of the organisation is served, with the organisation's token, and noted.
    const { res: member, trigger } = await app.openForm("T0ISG1", {
      enterpriseId: GRID,
      orgWide: true,
    });
    expect(member.status).toBe(200);
    await app.openedWith(trigger);
    await until("the member noted under its organisation", async () => {
      const noted = await app.running.store.getRecord(`e:${GRID}:workspaces`);
      return Array.isArray(noted) && noted.includes("T0ISG1");
    });
    expect(await app.running.store.getRecord(`e:${GRID}:workspaces`)).not.toContain("T0ISFOREIGN");
    expect(await app.running.store.getRecord("t:T0ISFOREIGN:organisation")).toBeUndefined();
  });

  it("keeps, at an organisation's uninstall, a workspace listed under it whose own installation is another's", async () => {
    // Listed under the organisation (as an older version noted any workspace that claimed it).
    await app.running.store.putRecord("e:E0ISOTHER:workspaces", ["T0ISB"]);
    await seedWorkspace(app.running.store, "T0ISB");
    await app.slack.uninstall("E0ISOTHER", { url: app.eventsUrl, signingSecret: SIGNING_SECRET });
    await until("the organisation forgotten", () =>
      app.logLines.some((l) => l.includes("uninstalled from an organisation")),
    );
    expect(app.log()).toContain("kept a workspace listed under an uninstalled organisation");
    expect(await app.installation("T0ISB")).toMatchObject({ team: { id: "T0ISB" } });
    expect(await app.running.store.getRecord("t:T0ISB:usage-policy")).toEqual({
      who: "everyone",
    });
  });
});

describe("one workspace: the team Bolt authorised, and who may open Workspace settings", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start();
    h.slack.addUser({
      id: "U0PARTNERADMIN",
      name: "partner",
      team_id: "T0PARTNER",
      is_admin: true,
    });
    h.slack.addUser({ id: "U0GONEADMIN", name: "gone", is_admin: true, deleted: true });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("refuses privately a command that names another workspace than the token's, and starts nothing", async () => {
    const runs = h.sim.runs().length;
    const res = await sendSlashCommand(h.eventsUrl, SIGNING_SECRET, {
      text: "Elsewhere task [sim:length=40]",
      team_id: "T0ELSEWHERE",
      user_id: "U0SOMEONE",
      channel_id: CHANNEL,
      response_url: h.slack.responseUrl(`elsewhere${++seq}`),
      trigger_id: `trig.elsewhere.${seq}`,
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ response_type: "ephemeral" });
    expect(JSON.stringify(res.json)).toContain("does not answer for here");
    expect(h.sim.runs().length).toBe(runs);
    expect(h.logLines.some((l) => l.includes("the payload names another workspace"))).toBe(true);
  });

  const openSettings = async (user: string) => {
    const trigger = `trig.settings.${++seq}.${Date.now()}`;
    const res = await sendBlockAction(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: user,
      channel_id: CHANNEL,
      message_ts: "1700000000.000100",
      action_id: "open_workspace_settings",
      value: "open",
      trigger_id: trigger,
    });
    expect(res.status).toBe(200);
    const opened = await h.slack.waitFor(() => h.slack.views().find((v) => v.trigger === trigger), {
      description: `the settings opened for ${user}`,
    });
    return JSON.stringify(opened.view);
  };

  it("opens Workspace settings to an active admin of this workspace only", async () => {
    expect(await openSettings(ADMIN)).not.toContain("Only workspace admins");
    // An admin of a partner's workspace (Slack Connect), and a deactivated admin: not here.
    expect(await openSettings("U0PARTNERADMIN")).toContain("Only workspace admins");
    expect(await openSettings("U0GONEADMIN")).toContain("Only workspace admins");
  });

  it("refuses their submission of the settings form", async () => {
    for (const user of ["U0PARTNERADMIN", "U0GONEADMIN"]) {
      const res = await sendViewSubmission(h.eventsUrl, SIGNING_SECRET, {
        team_id: TEAM,
        user_id: user,
        view: { id: `V0SET${++seq}`, callback_id: "workspace_settings", type: "modal" },
        values: {},
      });
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.json)).toContain("Only workspace admins");
    }
  });
});
