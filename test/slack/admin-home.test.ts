/**
 * App Home's admin part: shown to a workspace's admins and owners only (Slack's `users.info`),
 * asked of Slack at most once a minute per person however often the Home tab is refreshed, with
 * the workspace's own audit trail.
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { adminHome, isWorkspaceAdmin } from "../../src/slack/admin-home.ts";
import { AuditTrail } from "../../src/store/audit.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";

function slackUsers(admins: readonly string[]) {
  const asked: Array<{ user: string; token: string | undefined }> = [];
  const client = {
    users: {
      info: async (args: { user: string; token?: string }) => {
        asked.push({ user: args.user, token: args.token });
        return { ok: true, user: { id: args.user, is_admin: admins.includes(args.user) } };
      },
    },
  };
  return { client: client as never, asked };
}

describe("App Home's admin part", () => {
  it("is shown to admins only, asking Slack with the workspace's own token", async () => {
    const { client, asked } = slackUsers(["U0ADMIN"]);
    const part = adminHome({
      client,
      records: createMemoryStore(),
      tokenFor: (team) => `xoxb-${team}`,
    });
    expect(await part("T1", "U0ADMIN")).toEqual({ alert: undefined });
    expect(await part("T1", "U0MEMBER")).toBeUndefined();
    expect(asked).toEqual([
      { user: "U0ADMIN", token: "xoxb-T1" },
      { user: "U0MEMBER", token: "xoxb-T1" },
    ]);
  });

  it("shows the admins the workspace's audit trail, newest first, and no other workspace's", async () => {
    const { client } = slackUsers(["U0ADMIN"]);
    const records = createMemoryStore();
    const audit = new AuditTrail({ records, logger: pino({ level: "silent" }), retentionMs: 1e9 });
    await audit.record({ what: "service_key.removed", who: "U0ADMIN", workspace: "T1" });
    await audit.record({ what: "records.erased", who: "U0ADMIN", workspace: "T1" });
    await audit.record({ what: "records.erased", who: "U0ADMIN", workspace: "T2" });
    const part = adminHome({ client, records, audit });
    const shown = await part("T1", "U0ADMIN");
    expect(shown?.audit?.map((e) => [e.what, e.workspace])).toEqual([
      ["records.erased", "T1"],
      ["service_key.removed", "T1"],
    ]);
    expect(await part("T1", "U0MEMBER")).toBeUndefined();
  });

  it("asks Slack again only after a minute, per workspace and person", async () => {
    const { client, asked } = slackUsers(["U0ADMIN"]);
    let now = 1_700_000_000_000;
    const part = adminHome({ client, records: createMemoryStore(), now: () => now });
    for (let i = 0; i < 5; i++) await part("T1", "U0ADMIN");
    expect(asked).toHaveLength(1);
    await part("T2", "U0ADMIN"); // another workspace is asked on its own
    expect(asked).toHaveLength(2);
    now += 60_001;
    await part("T1", "U0ADMIN");
    expect(asked).toHaveLength(3);
  });
});

describe("who administers a workspace", () => {
  const slackSays = (user: Record<string, unknown>) =>
    ({ users: { info: async () => ({ ok: true, user: { id: "U1", ...user } }) } }) as never;

  it("is an active admin or owner of that very workspace, as Stop checks", async () => {
    const where = "T1";
    expect(await isWorkspaceAdmin(slackSays({ team_id: "T1", is_admin: true }), "U1", where)).toBe(
      true,
    );
    expect(await isWorkspaceAdmin(slackSays({ team_id: "T1", is_owner: true }), "U1", where)).toBe(
      true,
    );
    // An admin of a partner's workspace in a shared channel (Slack Connect) is not one here.
    expect(await isWorkspaceAdmin(slackSays({ team_id: "T2", is_admin: true }), "U1", where)).toBe(
      false,
    );
    // A deactivated admin is no admin.
    const gone = slackSays({ team_id: "T1", is_admin: true, deleted: true });
    expect(await isWorkspaceAdmin(gone, "U1", where)).toBe(false);
    expect(await isWorkspaceAdmin(slackSays({ team_id: "T1" }), "U1", where)).toBe(false);
  });
});
