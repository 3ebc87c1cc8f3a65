/**
 * `npm run keys:reseal` run as an operator runs it (a child process with the app's environment)
 * against a real embedded store: every workspace key sealed with an older encryption key is
 * sealed again with the first of ENCRYPTION_KEYS, so the older one can be dropped, and so is
 * every installation's Slack tokens; a value not sealed in the app's format (plain text) is not
 * sealed but counted as unreadable. Counts are printed, never a key.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { createInstallationStore } from "../../src/store/installations.ts";
import { createServiceKeyStore } from "../../src/store/service-keys.ts";
import { createSqliteStore, defaultSqlitePath } from "../../src/store/sqlite.ts";
import { sealingKeys } from "../../src/util/secret-box.ts";

const run = promisify(execFile);
const dataDir = mkdtempSync(join(tmpdir(), "taskbot-reseal-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const key = () => randomBytes(32).toString("base64");
const [OLD, NEW, GONE] = [key(), key(), key()];
const NAMESPACE = "resealtest";
const WORKSPACE_KEYS = {
  T1: "he-first-workspace-key-1111",
  T2: "he-second-workspace-key-2222",
  T3: "he-forgotten-workspace-key-3333",
};

/** The app's environment, as `npm start` would read it, plus the encryption keys given. */
const env = (encryption: Record<string, string>) => ({
  PATH: process.env.PATH ?? "",
  TASK_API_URL: "http://127.0.0.1:8787",
  TASK_API_KEY: "he-app-default-key-0000",
  SLACK_BOT_TOKEN: "xoxb-reseal-test",
  SLACK_SIGNING_SECRET: "reseal-test-signing-secret",
  DATA_DIR: dataDir,
  STORE_NAMESPACE: NAMESPACE,
  ...encryption,
});

async function reseal(encryption: Record<string, string>) {
  const script = new URL("../../src/reseal/reseal-keys.ts", import.meta.url).pathname;
  return run(process.execPath, [script], { env: env(encryption) }).catch(
    (err: { stdout: string; stderr: string; code: number }) => err,
  );
}

/** The stored keys as the app would read them with these encryption keys. */
async function readAll(keys: string[]) {
  const store = createSqliteStore(defaultSqlitePath(dataDir), () => {}, { namespace: NAMESPACE });
  try {
    const workspaceKeys = createServiceKeyStore(store, sealingKeys(keys));
    return Object.fromEntries(
      await Promise.all(
        Object.keys(WORKSPACE_KEYS).map(async (t) => [t, (await workspaceKeys.get(t)).state]),
      ),
    );
  } finally {
    await store.close();
  }
}

describe("npm run keys:reseal", () => {
  it("re-encrypts every workspace's key with the first encryption key, printing counts only", async () => {
    const store = createSqliteStore(defaultSqlitePath(dataDir), () => {}, { namespace: NAMESPACE });
    const sealedWith = (k: string) => createServiceKeyStore(store, sealingKeys([k]));
    await sealedWith(OLD).set("T1", WORKSPACE_KEYS.T1, "UADMIN");
    await sealedWith(OLD).set("T2", WORKSPACE_KEYS.T2, "UADMIN");
    await sealedWith(GONE).set("T3", WORKSPACE_KEYS.T3, "UADMIN"); // its key was dropped long ago
    // An installation sealed with the older key, and one whose tokens are plain text.
    await createInstallationStore(store, sealingKeys([OLD])).storeInstallation({
      team: { id: "T1" },
      enterprise: undefined,
      user: { id: "UADMIN", token: "xoxp-sealed-user-token", scopes: undefined },
      bot: { token: "xoxb-sealed-bot-token", id: "B1", userId: "UBOT", scopes: ["chat:write"] },
      isEnterpriseInstall: false,
      authVersion: "v2",
    });
    const plain = {
      team: { id: "T2" },
      user: { id: "UADMIN" },
      bot: { token: "xoxb-plain-bot-token", id: "B2", userId: "UBOT", scopes: ["chat:write"] },
    };
    await store.putRecord("t:T2:installation", plain);
    await store.close();

    const first = await reseal({ ENCRYPTION_KEYS: `${NEW},${OLD}` });
    expect(first.stderr).toBe("");
    expect(first.stdout).toBe(
      "Re-encrypted 2 workspace keys with the first encryption key; 0 were already.\n" +
        "Sealed the Slack tokens of 1 installation with the first encryption key; 0 were already.\n" +
        "1 key could not be opened (sealed with an encryption key no longer listed, or not sealed in the app's format; left as they are, never used): those workspaces' admins must set their key again.\n" +
        "1 installation's tokens could not be opened (sealed with an encryption key no longer listed, or not sealed in the app's format; left as they are, never used): install the app in those workspaces again, or list the key that sealed them.\n",
    );
    const tokens = ["xoxp-sealed-user-token", "xoxb-sealed-bot-token", "xoxb-plain-bot-token"];
    for (const secret of [...Object.values(WORKSPACE_KEYS), ...tokens, OLD, NEW, GONE]) {
      expect(first.stdout).not.toContain(secret);
    }
    // The old encryption key is no longer needed.
    expect(await readAll([NEW])).toEqual({ T1: "set", T2: "set", T3: "unreadable" });
    const store2 = createSqliteStore(defaultSqlitePath(dataDir), () => {}, {
      namespace: NAMESPACE,
    });
    const installations = createInstallationStore(store2, sealingKeys([NEW]));
    const query = (teamId: string) => ({
      teamId,
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    const installation = await installations.fetchInstallation(query("T1"));
    expect(installation.bot?.token).toBe("xoxb-sealed-bot-token");
    expect(installation.user.token).toBe("xoxp-sealed-user-token");
    // The plain one is left as it was, and still refused.
    expect(await store2.getRecord("t:T2:installation")).toEqual(plain);
    await expect(installations.fetchInstallation(query("T2"))).rejects.toThrow(
      "not sealed in this app's format",
    );
    await store2.close();

    const again = await reseal({ ENCRYPTION_KEY: NEW });
    expect(again.stdout).toContain(
      "Re-encrypted 0 workspace keys with the first encryption key; 2 were already.",
    );
    expect(again.stdout).toContain(
      "Sealed the Slack tokens of 0 installations with the first encryption key; 1 was already.",
    );
    expect(again.stdout).toContain("1 installation's tokens could not be opened");
  });

  it("says what is missing when no encryption key is set, and exits 1", async () => {
    const res = await reseal({});
    expect(res).toMatchObject({ code: 1 });
    expect(res.stderr).toContain("ENCRYPTION_KEY (or ENCRYPTION_KEYS) is not set");
  });
});
