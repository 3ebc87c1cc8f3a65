/**
 * Uninstalling the app from one of several workspaces installed through the OAuth flow: that
 * workspace's installation goes (through Bolt's installation store) with every record of it,
 * its token stops working, its later events are ignored, and the other workspace keeps all of
 * its records. An org-wide uninstall (Enterprise Grid) forgets the organisation and every
 * workspace of it the app has seen.
 */
import { sendSlashCommand } from "../../tools/local-slack/slack-requests.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InstallationNotFoundError } from "../../src/store/installations.ts";
import { CHANNEL, markdownOf, SIGNING_SECRET } from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";
import { MultiWorkspaceApp, personOf } from "../support/multi-workspace.ts";
import { mentioning, rawKeys } from "../support/raw-keys.ts";
import { seedWorkspace } from "../support/workspace-records.ts";
import { until } from "../support/until.ts";

let seq = 0;

/** `/task <text>` typed in `team` (under an organisation's org-wide install when given). */
function command(
  app: MultiWorkspaceApp,
  team: string,
  text: string,
  grid?: { readonly enterpriseId: string },
) {
  return sendSlashCommand(app.eventsUrl, SIGNING_SECRET, {
    text,
    team_id: team,
    user_id: personOf(app.slack, team),
    channel_id: CHANNEL,
    response_url: app.slack.responseUrl(`uninstall${++seq}`),
    trigger_id: `trig.uninstall.${++seq}.${Date.now()}`,
    ...(grid ? { enterprise_id: grid.enterpriseId, is_enterprise_install: true } : {}),
  });
}

describe.each(storeBackends())("uninstalling one of several workspaces (%s)", (_name, redisUrl) => {
  let app: MultiWorkspaceApp;
  const raw = () => rawKeys({ namespace: app.namespace, dataDir: app.dataDir, redisUrl });
  /** Waits for `what` in the log `times` times. */
  const forgotten = (what: string, times = 1) =>
    until(what, () => app.logLines.filter((l) => l.includes(what)).length >= times);
  /**
   * An uninstall is two events, both acknowledged at once and handled after: `app_uninstalled`
   * and `tokens_revoked` with the bot's token, each of which forgets everything (the second
   * finds it gone); the keys are read once both are done.
   */
  const uninstallHandled = (what: string) => forgotten(what, 2);

  beforeAll(async () => {
    app = await MultiWorkspaceApp.start({ redisUrl });
    app.slack.addTeam({ id: "T0UA", name: "Alpha" });
    app.slack.addTeam({ id: "T0UB", name: "Beta" });
    expect(await app.install("T0UA", "U0ALICE")).toContain("Thank you!");
    expect(await app.install("T0UB", "U0BOB")).toContain("Thank you!");
  });
  afterAll(async () => {
    await app?.close();
  });

  it("deletes that workspace's installation and every record of it; the other keeps all of its own", async () => {
    await seedWorkspace(app.running.store, "T0UA");
    await seedWorkspace(app.running.store, "T0UB");
    const tokenA = app.slack.team("T0UA").botToken;
    const before = await raw();
    expect(mentioning(before, "T0UA").size).toBeGreaterThanOrEqual(7);

    await app.slack.uninstall("T0UA", { url: app.eventsUrl, signingSecret: SIGNING_SECRET });
    await uninstallHandled("every record of the workspace forgotten");

    await expect(app.installation("T0UA")).rejects.toBeInstanceOf(InstallationNotFoundError);
    expect(await app.installation("T0UB")).toMatchObject({ team: { id: "T0UB" } });
    const after = await raw();
    expect([...mentioning(after, "T0UA", tokenA).keys()]).toEqual([]);
    expect(mentioning(after, "T0UB")).toEqual(mentioning(before, "T0UB"));
    expect(mentioning(after, "T0UB").size).toBeGreaterThanOrEqual(7);
    // Not installed any more: its events are ignored (and said so in the log).
    expect((await command(app, "T0UA", "")).status).toBe(200);
    await forgotten("ignored an event from a workspace where the app is not installed");
    // B still works: Bolt opens its form with B's token.
    const res = await command(app, "T0UB", "");
    expect(res.status).toBe(200);
    await app.slack.waitForCall((c) => c.method === "views.open" && c.team === "T0UB");
  });

  it("forgets an org-wide install: the organisation's records and every workspace of it the app saw", async () => {
    app.slack.addEnterprise({ id: "E0UGRID", name: "Grid Co" });
    app.slack.addTeam({ id: "T0UG1", enterpriseId: "E0UGRID" });
    expect(await app.install("E0UGRID", "U0ORGADMIN")).toContain("Thank you!");
    // A person of a workspace of the organisation uses the app: the workspace is noted.
    expect((await command(app, "T0UG1", "", { enterpriseId: "E0UGRID" })).status).toBe(200);
    await until("the workspace noted under its organisation", async () => {
      const listed = await app.running.store.getRecord("e:E0UGRID:workspaces");
      return Array.isArray(listed) && listed.includes("T0UG1");
    });
    await seedWorkspace(app.running.store, "T0UG1");
    const before = await raw();
    expect(mentioning(before, "T0UG1").size).toBeGreaterThanOrEqual(7);
    expect(mentioning(before, "E0UGRID").size).toBeGreaterThanOrEqual(2);

    await app.slack.uninstall("E0UGRID", { url: app.eventsUrl, signingSecret: SIGNING_SECRET });
    await uninstallHandled("uninstalled from an organisation");

    await expect(app.installation(undefined, "E0UGRID", true)).rejects.toBeInstanceOf(
      InstallationNotFoundError,
    );
    const after = await raw();
    expect([...mentioning(after, "T0UG1", "E0UGRID").keys()]).toEqual([]);
    expect(mentioning(after, "T0UB")).toEqual(mentioning(before, "T0UB"));
  });
});

describe.each(storeBackends())(
  "uninstalling one of two workspaces that both run tasks (%s)",
  (_name, redisUrl) => {
    let app: MultiWorkspaceApp;
    beforeAll(async () => {
      app = await MultiWorkspaceApp.start({ redisUrl });
      app.slack.addTeam({ id: "T0RA" });
      app.slack.addTeam({ id: "T0RB" });
      await app.install("T0RA");
      await app.install("T0RB");
    });
    afterAll(async () => {
      await app?.close();
    });

    it("stops A's run at the service, posts nothing to A after, forgets A; B's task finishes and B keeps its records", async () => {
      const raw = () => rawKeys({ namespace: app.namespace, dataDir: app.dataDir, redisUrl });
      await command(app, "T0RA", "Alpha plans [sim:stall=60000] [sim:delay=5]");
      await command(app, "T0RB", "Beta plans [sim:delay=20] [sim:length=3000]");
      const runOf = (text: string) => app.sim.runs().find((r) => r.promptText.includes(text));
      const runA = await app.slack.waitFor(() => runOf("Alpha plans"));
      const runB = await app.slack.waitFor(() => runOf("Beta plans"));
      // A's answer is showing (its run relayed) before the uninstall.
      await app.slack.waitFor(() =>
        app.slack
          .messages(CHANNEL, { includeReplies: true })
          .some((m) => m.user === app.slack.team("T0RA").bot.userId && markdownOf(m).length > 20),
      );
      const before = await raw();
      const from = app.slack.calls.length;

      await app.slack.uninstall("T0RA", { url: app.eventsUrl, signingSecret: SIGNING_SECRET });

      expect((await app.sim.waitForRun(runA.id, 10_000)).status).toBe("stopped");
      await until("A forgotten", () =>
        app.logLines.some((l) => l.includes("every record of the workspace forgotten")),
      );
      const handled = app.slack.calls.length;
      expect((await app.sim.waitForRun(runB.id, 20_000)).status).toBe("completed");
      await app.running.relay.idle();
      const tokenA = app.slack.team("T0RA").botToken;
      const toA = (c: { team?: string; token?: string }) => c.team === "T0RA" || c.token === tokenA;
      // Once the app handled the uninstall it sent A nothing at all; before, at most an
      // interim edit already on its way (refused: the token is gone), never a final "Stopped".
      expect(app.slack.calls.slice(handled).filter(toA)).toEqual([]);
      const meanwhile = app.slack.calls.slice(from, handled).filter(toA);
      expect(meanwhile.filter((c) => c.response.ok)).toEqual([]);
      for (const c of meanwhile) {
        expect(c.method).toBe("chat.update");
        expect(JSON.stringify(c.args)).not.toMatch(/Stopped|Completed/);
      }
      // B's answer was finished.
      expect(app.slack.calls.slice(from).some((c) => c.team === "T0RB" && c.response.ok)).toBe(
        true,
      );
      const after = await raw();
      expect([...mentioning(after, "T0RA", runA.id).keys()]).toEqual([]);
      // B's records: all still there. Its finished run's entries, the leases and the Slack rate
      // buckets come and go with B's own activity (a full bucket expires), so they are left out.
      const stable = (m: Map<string, string>) =>
        new Map(
          [...mentioning(m, "T0RB")].filter(
            ([k, v]) => !`${k}${v}`.includes(runB.id) && !/:(lease|slack-rl):/.test(k),
          ),
        );
      expect([...stable(before).keys()].filter((k) => !after.has(k))).toEqual([]);
    });
  },
);
