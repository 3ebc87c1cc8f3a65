/**
 * The service client with each workspace's own key, against the simulator accepting several
 * keys: the key is asked for at each request (a key changed between two calls is used by the
 * second), a supplier that has no key fails the call with a typed error before anything is
 * sent, and `checkKey` tells a refused key (401) from a valid one and from an unreachable service.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keySupplier } from "../../src/service-key.ts";
import { createTaskServiceClient } from "../../src/service/client.ts";
import {
  ServiceKeyMissingError,
  ServiceKeyUnreadableError,
  TaskServiceError,
} from "../../src/service/errors.ts";
import { type Simulator, startSimulator } from "../../tools/simulator/server.ts";
import type { ServiceKeyState } from "../../src/store/service-keys.ts";
import { describeServiceError } from "../../src/view/errors.ts";

const APP_KEY = "he-app-default-key-0000";
const ACME_KEY = "he-acme-workspace-key-1111";
const GLOBEX_KEY = "he-globex-workspace-key-2222";

/** A workspace's stored key as the store answers it (the store has its own tests). */
const stored = (state: ServiceKeyState) => ({ get: async () => state });
const set = (key: string): ServiceKeyState => ({
  state: "set",
  key,
  lastFour: `…${key.slice(-4)}`,
  setBy: "UADMIN",
  setAt: 0,
});

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [APP_KEY, ACME_KEY, GLOBEX_KEY], chunkDelayMs: 1 });
});
afterAll(async () => {
  await sim?.close();
});

const client = (apiKey: string | (() => Promise<string>)) =>
  createTaskServiceClient({ baseUrl: sim.url, apiKey, retryMinDelayMs: 5, retryMaxDelayMs: 10 });

describe("a workspace's key, per request", () => {
  it("sends each call with the key the supplier gives at that moment, and the simulator records which", async () => {
    let current = ACME_KEY;
    const service = client(async () => current);
    const before = sim.requests.length;
    const created = await service.createTask({ prompt: "Plan the offsite" });
    current = GLOBEX_KEY; // an admin changed the workspace's key
    await service.getTaskResult(
      { threadId: created.thread_id, projectId: created.project_id },
      { timeout: 5 },
    );
    const calls = sim.requests.slice(before);
    expect(calls.map((r) => [r.path.split("/").pop(), r.keyIndex])).toEqual([
      ["quick-action", 1],
      ["response", 2],
    ]);
    expect(sim.requestsWithKey(ACME_KEY).some((r) => r.path.endsWith("/quick-action"))).toBe(true);
    expect(sim.requestsWithKey("he-not-accepted")).toEqual([]);
    // The key itself is never recorded.
    expect(JSON.stringify(sim.requests)).not.toContain(ACME_KEY);
  });

  it("uses the workspace's key, else the app's; none at all, or an unreadable one, fails before anything is sent", async () => {
    expect(await keySupplier(stored(set(ACME_KEY)), "T1", APP_KEY)()).toBe(ACME_KEY);
    expect(await keySupplier(stored({ state: "none" }), "T1", APP_KEY)()).toBe(APP_KEY);
    expect(await keySupplier(undefined, "T1", APP_KEY)()).toBe(APP_KEY);
    const before = sim.requests.length;
    const missing = client(keySupplier(stored({ state: "none" }), "T1", undefined));
    const err = await missing.createTask({ prompt: "Anything" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceKeyMissingError);
    expect(err).toBeInstanceOf(TaskServiceError);
    expect(describeServiceError(err)).toBe(
      "This workspace has no Task service API key yet. A workspace admin can set it in the app's Home tab (Workspace settings) or with `/task settings`.",
    );
    // Sealed with an encryption key no longer listed: not silently charged to the app's account.
    const why = "sealed with an encryption key that is no longer listed";
    const heard: string[] = [];
    const lost = keySupplier(
      stored({ state: "unreadable", why, lastFour: "…9999" }),
      "T1",
      APP_KEY,
      (w) => heard.push(w),
    );
    const reads = client(lost);
    const ref = { threadId: "thr_x", projectId: "proj_x" };
    const unreadable = await reads.getHistory(ref).catch((e: unknown) => e);
    expect(unreadable).toBeInstanceOf(ServiceKeyUnreadableError);
    expect(describeServiceError(unreadable)).toContain("A workspace admin needs to set it again");
    expect(heard).toEqual([why]);
    expect(sim.requests.length).toBe(before);
  });

  it("lends the app's key only when the workspace may use it (TASK_API_KEY_FOR), asked at each call", async () => {
    let lent = false;
    const supply = keySupplier(stored({ state: "none" }), "T1", async () =>
      lent ? APP_KEY : undefined,
    );
    await expect(supply()).rejects.toBeInstanceOf(ServiceKeyMissingError);
    lent = true;
    expect(await supply()).toBe(APP_KEY);
    // Its own key always comes first.
    expect(await keySupplier(stored(set(ACME_KEY)), "T1", async () => APP_KEY)()).toBe(ACME_KEY);
  });
});

describe("checking a key before it is saved", () => {
  it("says valid for an accepted key and refused for an unknown one (the simulator's 401 {detail})", async () => {
    const service = client(APP_KEY);
    const before = sim.requests.length;
    expect(await service.checkKey(GLOBEX_KEY)).toBe("valid");
    expect(await service.checkKey("he-never-issued-key-0000")).toBe("refused");
    const [valid, refused] = sim.requests.slice(before);
    // One read-only GET each, with the key being checked (not the client's).
    expect(valid).toMatchObject({ method: "GET", status: 404, keyIndex: 2 });
    expect(valid?.path).toMatch(/\/threads\/key-check-[0-9a-f-]+\/history$/);
    expect(refused).toMatchObject({ method: "GET", status: 401 });
    expect(refused?.keyIndex).toBeUndefined();
  });

  it("tells a service that failed or could not be reached from a refusal", async () => {
    const service = client(APP_KEY);
    sim.injectFault({ endpoint: "history", status: 503 });
    expect(await service.checkKey(ACME_KEY)).toEqual({ error: "HTTP 503" });
    sim.injectFault({ endpoint: "history", status: 402 });
    expect(await service.checkKey(ACME_KEY)).toBe("valid"); // out of credits, but the key is fine
    const nowhere = createTaskServiceClient({ baseUrl: "http://127.0.0.1:1", apiKey: APP_KEY });
    expect(await nowhere.checkKey(ACME_KEY)).toEqual({ error: "network" });
  });
});
