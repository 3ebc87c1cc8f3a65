/**
 * Each workspace's bot token outside a Slack request: its own installation's, or, for a
 * workspace of an org-wide install, the organisation's; a workspace with an installation of its
 * own keeps its own token even if it was once noted under an organisation.
 */
import type { InstallationQuery } from "@slack/bolt";
import { describe, expect, it } from "vitest";
import {
  installedTokens,
  rememberedOrganisation,
  WorkspaceNotInstalledError,
} from "../../src/slack/workspace-tokens.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";

/** Bolt's installer over a fixed set of installations: a workspace's, or an organisation's. */
function installer(installs: Record<string, string>) {
  return {
    authorize: async (q: InstallationQuery<boolean>) => {
      const token = q.isEnterpriseInstall
        ? installs[`e:${q.enterpriseId ?? ""}`]
        : installs[`t:${q.teamId ?? ""}`];
      if (!token) throw new Error("no installation");
      return { botToken: token };
    },
  };
}

describe("each workspace's bot token", () => {
  it("is the organisation's for a workspace of an org-wide install, once remembered", async () => {
    const records = createMemoryStore();
    const tokens = installedTokens(installer({ "e:E1": "xoxb-org" }), records);
    await expect(tokens.botToken("T0MEMBER")).rejects.toBeInstanceOf(WorkspaceNotInstalledError);
    await tokens.rememberOrganisation("T0MEMBER", "E1");
    expect(await tokens.botToken("T0MEMBER")).toBe("xoxb-org");
    expect(await rememberedOrganisation(records, "T0MEMBER")).toBe("E1");
  });

  it("stays a workspace's own when it has an installation, even noted under an organisation", async () => {
    const records = createMemoryStore();
    // Noted by an older version that believed any workspace claiming the organisation.
    await records.putRecord("t:T0OWN:organisation", "E1");
    const tokens = installedTokens(
      installer({ "e:E1": "xoxb-org", "t:T0OWN": "xoxb-own" }),
      records,
    );
    expect(await tokens.botToken("T0OWN")).toBe("xoxb-own");
  });
});
