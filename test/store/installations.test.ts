/**
 * Slack installations on the project's store (Bolt's InstallationStore): a workspace's, one of a
 * workspace in an Enterprise Grid organisation, an org-wide one, on each backend, read back
 * through another handle as another instance would; their tokens sealed at rest, bound to their
 * record; a token stored otherwise (plain text, the unbound `v1` format) is refused, never used.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Installation, InstallationStore } from "@slack/bolt";
import { afterAll, describe, expect, it } from "vitest";
import { testRedisUrl } from "../support/needs.ts";
import {
  createInstallationStore,
  InstallationNotFoundError,
  InstallationUnreadableError,
  resealInstallations,
} from "../../src/store/installations.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import { createRedisStore } from "../../src/store/redis.ts";
import { createSqliteStore } from "../../src/store/sqlite.ts";
import type { ThreadStore } from "../../src/store/types.ts";
import { sealingKeys } from "../../src/util/secret-box.ts";

const dir = mkdtempSync(join(tmpdir(), "taskbot-installations-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const redisUrl = testRedisUrl();
let n = 0;
const unique = (prefix: string) => `${prefix}${process.pid}x${Date.now()}x${n++}`;
const namespace = unique("inst");
const [OLD, NEW] = [randomBytes(32).toString("base64"), randomBytes(32).toString("base64")];
const KEYS = sealingKeys([NEW]);

/** A workspace installation as Bolt builds it from oauth.v2.access (bot only, no user token). */
function workspaceInstall(teamId: string, token: string, enterpriseId?: string): Installation {
  return {
    team: { id: teamId, name: `Team ${teamId}` },
    enterprise: enterpriseId ? { id: enterpriseId, name: "Grid" } : undefined,
    user: { id: "UINSTALLER", token: undefined, scopes: undefined },
    bot: {
      token,
      scopes: ["chat:write", "commands"],
      id: "BBOT2",
      userId: "UBOT2",
      refreshToken: "xoxe-1-refresh-secret",
      expiresAt: 1_900_000_000,
    },
    tokenType: "bot",
    isEnterpriseInstall: false,
    appId: "A0001",
    authVersion: "v2",
  };
}

function orgInstall(enterpriseId: string, token: string): Installation<"v2", true> {
  return {
    team: undefined,
    enterprise: { id: enterpriseId, name: "Grid" },
    user: { id: "UADMIN", token: undefined, scopes: undefined },
    bot: { token, scopes: ["chat:write"], id: "BORG", userId: "UORG" },
    tokenType: "bot",
    isEnterpriseInstall: true,
    appId: "A0001",
    enterpriseUrl: "https://grid.enterprise.slack.com/",
    authVersion: "v2",
  };
}

const backends: Array<[string, () => ThreadStore]> = [
  [
    "memory",
    (() => {
      const shared = createMemoryStore({ namespace });
      return () => shared;
    })(),
  ],
  ["embedded SQLite", () => createSqliteStore(join(dir, "shared.sqlite"), () => {}, { namespace })],
];
if (redisUrl) backends.push(["Redis", () => createRedisStore(redisUrl, () => {}, { namespace })]);

describe.each(backends)("installations on %s", (_name, make) => {
  /** Two handles on the same data, as two instances have. */
  const pair = (): [InstallationStore, InstallationStore, ThreadStore[]] => {
    const a = make();
    const b = make();
    return [createInstallationStore(a, KEYS), createInstallationStore(b, KEYS), [a, b]];
  };
  const closeAll = (stores: ThreadStore[]) => Promise.all(stores.map((s) => s.close()));

  it("keeps a workspace's installation, tokens included, for every instance", async () => {
    const [writer, reader, stores] = pair();
    const team = unique("T");
    await writer.storeInstallation(workspaceInstall(team, "xoxb-team-one-secret"));
    const found = await reader.fetchInstallation({
      teamId: team,
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    expect(found).toEqual(
      JSON.parse(JSON.stringify(workspaceInstall(team, "xoxb-team-one-secret"))),
    );
    // Beside the workspace's other records (`t:<team>:`), so they can be found together.
    expect(await stores[0]?.getRecord(`t:${team}:installation`)).toMatchObject({
      team: { id: team },
    });
    await closeAll(stores);
  });

  it("answers a workspace with its own installation, and an unknown one with not found", async () => {
    const [store, , stores] = pair();
    const [one, two] = [unique("T"), unique("T")];
    await store.storeInstallation(workspaceInstall(one, "xoxb-one-secret"));
    await store.storeInstallation(workspaceInstall(two, "xoxb-two-secret"));
    const query = (teamId: string) => ({
      teamId,
      enterpriseId: undefined,
      isEnterpriseInstall: false as const,
    });
    expect((await store.fetchInstallation(query(one))).bot?.token).toBe("xoxb-one-secret");
    expect((await store.fetchInstallation(query(two))).bot?.token).toBe("xoxb-two-secret");
    const missing = unique("T");
    const err = await store.fetchInstallation(query(missing)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InstallationNotFoundError);
    expect((err as InstallationNotFoundError).key).toEqual({
      teamId: missing,
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    expect((err as Error).message).toBe(`the app is not installed in workspace ${missing}`);
    await closeAll(stores);
  });

  it("keys a Grid workspace by organisation and team: another organisation's query misses", async () => {
    const [store, , stores] = pair();
    const [team, grid] = [unique("T"), unique("E")];
    await store.storeInstallation(workspaceInstall(team, "xoxb-grid-team-secret", grid));
    const found = await store.fetchInstallation({
      teamId: team,
      enterpriseId: grid,
      isEnterpriseInstall: false,
    });
    expect(found.enterprise?.id).toBe(grid);
    await expect(
      store.fetchInstallation({
        teamId: team,
        enterpriseId: unique("E"),
        isEnterpriseInstall: false,
      }),
    ).rejects.toBeInstanceOf(InstallationNotFoundError);
    await closeAll(stores);
  });

  it("keeps an org-wide install under its organisation, for every workspace of it", async () => {
    const [writer, reader, stores] = pair();
    const grid = unique("E");
    await writer.storeInstallation(orgInstall(grid, "xoxb-org-wide-secret"));
    for (const teamId of [unique("T"), unique("T")]) {
      const found = await reader.fetchInstallation({
        teamId,
        enterpriseId: grid,
        isEnterpriseInstall: true,
      });
      expect(found.bot?.token).toBe("xoxb-org-wide-secret");
      expect(found.isEnterpriseInstall).toBe(true);
    }
    // The organisation's workspaces are not installed one by one.
    await expect(
      reader.fetchInstallation({
        teamId: unique("T"),
        enterpriseId: grid,
        isEnterpriseInstall: false,
      }),
    ).rejects.toBeInstanceOf(InstallationNotFoundError);
    expect(await stores[0]?.getRecord(`e:${grid}:installation`)).toMatchObject({
      enterprise: { id: grid },
    });
    await closeAll(stores);
  });

  it("replaces an installation when it is stored again (a reinstall, a refreshed token)", async () => {
    const [store, , stores] = pair();
    const team = unique("T");
    await store.storeInstallation(workspaceInstall(team, "xoxb-first-secret"));
    const refreshed = workspaceInstall(team, "xoxe.xoxb-second-secret");
    await store.storeInstallation({
      ...refreshed,
      bot: refreshed.bot && { ...refreshed.bot, expiresAt: 1_900_043_200 },
    });
    const found = await store.fetchInstallation({
      teamId: team,
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    expect(found.bot).toMatchObject({ token: "xoxe.xoxb-second-secret", expiresAt: 1_900_043_200 });
    await closeAll(stores);
  });

  it("deletes a workspace's installation; one person's revoked token leaves the bot's", async () => {
    const [store, , stores] = pair();
    const team = unique("T");
    const query = { teamId: team, enterpriseId: undefined, isEnterpriseInstall: false as const };
    await store.storeInstallation({
      ...workspaceInstall(team, "xoxb-kept-secret"),
      user: { id: "UINSTALLER", token: "xoxp-user-secret", scopes: ["search:read"] },
    });
    await store.deleteInstallation?.({ ...query, userId: "USOMEONEELSE" });
    expect((await store.fetchInstallation(query)).user.token).toBe("xoxp-user-secret");
    await store.deleteInstallation?.({ ...query, userId: "UINSTALLER" });
    const kept = await store.fetchInstallation(query);
    expect(kept.user).toEqual({ id: "UINSTALLER" });
    expect(kept.bot?.token).toBe("xoxb-kept-secret");
    await store.deleteInstallation?.(query);
    await expect(store.fetchInstallation(query)).rejects.toBeInstanceOf(InstallationNotFoundError);
    expect(await stores[0]?.getRecord(`t:${team}:installation`)).toBeUndefined();
    // Deleting what is not there is not an error (an uninstall may be delivered twice).
    await store.deleteInstallation?.(query);
    await closeAll(stores);
  });

  it("refuses an installation that names no workspace, and never shows a token in an error", async () => {
    const [store, , stores] = pair();
    const nameless = { ...workspaceInstall("T", "xoxb-nameless-secret"), team: undefined };
    await expect(store.storeInstallation(nameless as unknown as Installation)).rejects.toThrow(
      "an installation that names neither its workspace nor its organisation",
    );
    const team = unique("T");
    await stores[0]?.putRecord(`t:${team}:installation`, {
      team: { id: team },
      user: { id: "U1" },
      bot: { token: "xoxb-broken-secret", id: 42 },
    });
    const err = await store
      .fetchInstallation({ teamId: team, enterpriseId: undefined, isEnterpriseInstall: false })
      .catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect(String(err)).toContain(`the stored installation of workspace ${team} is unreadable`);
    expect(String(err)).not.toContain("xoxb-broken-secret");
    await closeAll(stores);
  });

  it("keeps every token sealed at rest: the stored record holds none of them", async () => {
    const [store, , stores] = pair();
    const team = unique("T");
    const query = { teamId: team, enterpriseId: undefined, isEnterpriseInstall: false as const };
    await store.storeInstallation({
      ...workspaceInstall(team, "xoxb-sealed-bot-secret"),
      user: {
        id: "UINSTALLER",
        token: "xoxp-sealed-user-secret",
        refreshToken: "xoxe-1-user",
        scopes: ["search:read"],
      },
      incomingWebhook: { url: "https://hooks.slack.com/services/T/B/sealed-hook-secret" },
    });
    const raw = JSON.stringify(await stores[0]?.getRecord(`t:${team}:installation`));
    for (const secret of [
      "xoxb-sealed",
      "xoxp-sealed",
      "refresh-secret",
      "xoxe-1-user",
      "hooks.slack",
    ]) {
      expect(raw).not.toContain(secret);
    }
    expect(raw).toContain(team); // what is not secret stays readable
    const found = await store.fetchInstallation(query);
    expect(found.bot).toMatchObject({
      token: "xoxb-sealed-bot-secret",
      refreshToken: "xoxe-1-refresh-secret",
    });
    expect(found.user).toMatchObject({
      token: "xoxp-sealed-user-secret",
      refreshToken: "xoxe-1-user",
    });
    expect(found.incomingWebhook?.url).toContain("sealed-hook-secret");
    // One person's token revoked: what stays is written sealed again.
    await store.deleteInstallation?.({ ...query, userId: "UINSTALLER" });
    const after = JSON.stringify(await stores[0]?.getRecord(`t:${team}:installation`));
    expect(after).not.toContain("xoxb-sealed");
    expect((await store.fetchInstallation(query)).bot?.token).toBe("xoxb-sealed-bot-secret");
    await closeAll(stores);
  });

  it("does not open an installation copied into another workspace's record, and says what to do", async () => {
    const [store, , stores] = pair();
    const [mine, theirs] = [unique("T"), unique("T")];
    await store.storeInstallation(workspaceInstall(mine, "xoxb-mine-only-secret"));
    const copied = (await stores[0]?.getRecord(`t:${mine}:installation`)) as object;
    await stores[0]?.putRecord(`t:${theirs}:installation`, {
      ...copied,
      team: { id: theirs, name: "Theirs" },
    });
    const err = await store
      .fetchInstallation({ teamId: theirs, enterpriseId: undefined, isEnterpriseInstall: false })
      .catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(InstallationUnreadableError);
    expect(String(err)).toContain(`the stored installation of workspace ${theirs} is unreadable`);
    expect(String(err)).toContain("does not authenticate");
    expect(String(err)).toContain("install the app there again");
    expect(String(err)).not.toContain("xoxb-mine-only-secret");
    await closeAll(stores);
  });

  it("refuses an installation whose tokens are plain text or unbound (v1), and re-sealing leaves it so", async () => {
    const [store, , stores] = pair();
    const raw = stores[0] as ThreadStore;
    const [plain, unbound] = [unique("T"), unique("T")];
    await raw.putRecord(`t:${plain}:installation`, workspaceInstall(plain, `xoxb-plain-${plain}`));
    // A v1 box: the bound box of another record with its version changed.
    await store.storeInstallation(workspaceInstall(unbound, "xoxb-unbound-secret"));
    const sealed = (await raw.getRecord(`t:${unbound}:installation`)) as Installation;
    const token = sealed.bot?.token ?? "";
    await raw.putRecord(`t:${unbound}:installation`, {
      ...sealed,
      bot: { ...sealed.bot, token: token.replace(/^v2\./, "v1.") },
    });
    const query = (teamId: string) => ({
      teamId,
      enterpriseId: undefined,
      isEnterpriseInstall: false as const,
    });
    for (const team of [plain, unbound]) {
      const err = await store.fetchInstallation(query(team)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InstallationUnreadableError);
      expect(String(err)).toBe(
        `InstallationUnreadableError: the stored installation of workspace ${team} is unreadable: a token in it does not open (not sealed in this app's format); install the app there again`,
      );
      expect((err as InstallationUnreadableError).key.teamId).toBe(team);
    }
    // Re-sealing does not seal them either: they stay as they are, counted as unreadable.
    const report = await resealInstallations(raw, KEYS);
    expect(report.unreadable).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(await raw.getRecord(`t:${plain}:installation`))).toContain(
      `xoxb-plain-${plain}`,
    );
    await expect(store.fetchInstallation(query(plain))).rejects.toBeInstanceOf(
      InstallationUnreadableError,
    );
    await closeAll(stores);
  });

  it("rotates: tokens sealed with an older key open while it is listed, and re-sealing moves them", async () => {
    const raw = make();
    const grid = unique("E");
    const older = createInstallationStore(raw, sealingKeys([OLD]));
    await older.storeInstallation(orgInstall(grid, "xoxb-org-rotated-secret"));
    const query = { teamId: undefined, enterpriseId: grid, isEnterpriseInstall: true as const };
    const rotated = sealingKeys([NEW, OLD]);
    expect((await createInstallationStore(raw, rotated).fetchInstallation(query)).bot?.token).toBe(
      "xoxb-org-rotated-secret",
    );
    await resealInstallations(raw, rotated);
    const current = createInstallationStore(raw, KEYS);
    expect((await current.fetchInstallation(query)).bot?.token).toBe("xoxb-org-rotated-secret");
    await raw.close();
  });
});
