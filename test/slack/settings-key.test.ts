/**
 * Removing a workspace's service key from Workspace settings: the admin is always told what
 * happens next, even when the app cannot read whether the workspace may use TASK_API_KEY.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.ts";
import { applyKeyChange } from "../../src/slack/listeners/workspace-settings.ts";
import type { WorkspaceKeys } from "../../src/slack/listeners/surface.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import { createServiceKeyStore } from "../../src/store/service-keys.ts";
import { sealingKeys } from "../../src/util/secret-box.ts";

const TEAM = "T0KEYS";
const req = { teamId: TEAM, userId: "U0ADMIN" };
const logger = createLogger({ level: "silent" });

async function keysWith(fallback: WorkspaceKeys["fallback"]): Promise<WorkspaceKeys> {
  const store = createServiceKeyStore(
    createMemoryStore(),
    sealingKeys([randomBytes(32).toString("base64")]),
  );
  await store.set(TEAM, "he-workspace-own-key", "U0ADMIN");
  return { store, checker: { checkKey: () => Promise.resolve("valid" as const) }, fallback };
}

describe("removing a workspace's service key", () => {
  it("says tasks use the app's default key when it is lent, or cannot start when not", async () => {
    const lent = await applyKeyChange(await keysWith(async () => true), { logger }, req, {
      kind: "remove",
    });
    expect(lent).toEqual({
      confirm: "The workspace's Task service API key is removed: tasks use the app's default key.",
    });
    const notLent = await applyKeyChange(await keysWith(async () => false), { logger }, req, {
      kind: "remove",
    });
    expect(notLent).toEqual({
      confirm: "The workspace's Task service API key is removed: tasks cannot start.",
    });
  });

  it("still confirms the removal, saying what depends on the operator, when lending cannot be read", async () => {
    const keys = await keysWith(() => Promise.reject(new Error("store unreachable")));
    const done = await applyKeyChange(keys, { logger }, req, { kind: "remove" });
    expect(done).toEqual({
      confirm:
        "The workspace's Task service API key is removed: tasks use the app's default key if the operator lends it to this workspace, else they cannot start.",
    });
    expect(await keys.store.get(TEAM)).toEqual({ state: "none" });
  });
});
