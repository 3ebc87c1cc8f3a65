/**
 * Each workspace's service key on the project's store, on each backend: sealed at rest (the raw
 * record never holds the key), read back by another handle as another instance would, rotated
 * (an older encryption key listed second still opens; re-sealing makes it unnecessary), and a
 * key sealed with an encryption key no longer listed (or altered), or not sealed in the app's
 * format (plain text, the unbound `v1`), reads as "unreadable", never a crash, never used.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { testRedisUrl } from "../support/needs.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import { createRedisStore } from "../../src/store/redis.ts";
import { createServiceKeyStore, type ServiceKeyStore } from "../../src/store/service-keys.ts";
import { createSqliteStore } from "../../src/store/sqlite.ts";
import type { ThreadStore } from "../../src/store/types.ts";
import { KEY_NOT_LISTED, NOT_SEALED, sealingKeys } from "../../src/util/secret-box.ts";

const dir = mkdtempSync(join(tmpdir(), "taskbot-service-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const redisUrl = testRedisUrl();
let n = 0;
const unique = (prefix: string) => `${prefix}${process.pid}x${Date.now()}x${n++}`;

const newKey = () => randomBytes(32).toString("base64");
const OLD = newKey();
const NEW = newKey();
const GONE = newKey();

const backends: Array<[string, (namespace: string) => ThreadStore]> = [
  [
    "memory",
    (() => {
      const shared = new Map<string, ThreadStore>();
      return (namespace: string) => {
        const found = shared.get(namespace) ?? createMemoryStore({ namespace });
        shared.set(namespace, found);
        return found;
      };
    })(),
  ],
  [
    "embedded SQLite",
    (namespace) => createSqliteStore(join(dir, "shared.sqlite"), () => {}, { namespace }),
  ],
];
if (redisUrl) {
  backends.push(["Redis", (namespace) => createRedisStore(redisUrl, () => {}, { namespace })]);
}

describe.each(backends)("workspace service keys on %s", (_name, open) => {
  const opened: ThreadStore[] = [];
  afterAll(async () => {
    await Promise.all([...new Set(opened)].map((s) => s.close()));
  });

  /** A store handle on the namespace with these encryption keys (base64, the first seals). */
  function handle(namespace: string, keys: string[]): [ServiceKeyStore, ThreadStore] {
    const store = open(namespace);
    opened.push(store);
    let clock = 1_700_000_000_000;
    return [createServiceKeyStore(store, sealingKeys(keys), () => clock++), store];
  }

  it("stores a workspace's key sealed, and another instance reads it back with who set it and when", async () => {
    const ns = unique("keys");
    const [a, raw] = handle(ns, [NEW]);
    const [b] = handle(ns, [NEW]);
    expect(await b.get("T1")).toEqual({ state: "none" });
    expect(await a.set("T1", "he-workspace-one-key-abcd", "UADMIN")).toBe("…abcd");
    expect(await b.get("T1")).toEqual({
      state: "set",
      key: "he-workspace-one-key-abcd",
      lastFour: "…abcd",
      setBy: "UADMIN",
      setAt: 1_700_000_000_000,
    });
    // At rest: only the box and what may be shown.
    const record = JSON.stringify(await raw.getRecord("t:T1:service-key"));
    expect(record).not.toContain("he-workspace-one-key");
    expect(record).toContain("…abcd");
    // Another workspace has none; deleting is per workspace.
    expect(await b.get("T2")).toEqual({ state: "none" });
    await a.set("T2", "he-workspace-two-key-wxyz", "UOTHER");
    await b.delete("T1");
    expect(await a.get("T1")).toEqual({ state: "none" });
    expect(await a.get("T2")).toMatchObject({ state: "set", key: "he-workspace-two-key-wxyz" });
  });

  it("rotates: a key sealed with the old encryption key opens while it is listed second, and re-sealing makes it unnecessary", async () => {
    const ns = unique("rotate");
    const [before, raw] = handle(ns, [OLD]);
    await before.set("T1", "he-first-workspace-1111", "U1");
    await before.set("T2", "he-second-workspace-2222", "U2");
    // Something else of a workspace beside the keys is left alone.
    await raw.putRecord("t:T1:installation", { bot: { token: "xoxb-not-a-service-key" } });

    const [during] = handle(ns, [NEW, OLD]);
    expect(await during.get("T1")).toMatchObject({ state: "set", key: "he-first-workspace-1111" });
    await during.set("T3", "he-third-workspace-3333", "U3"); // sealed with NEW already
    expect(await during.resealAll()).toEqual({ resealed: 2, current: 1, unreadable: 0 });
    expect(await during.resealAll()).toEqual({ resealed: 0, current: 3, unreadable: 0 });
    expect(await raw.getRecord("t:T1:installation")).toEqual({
      bot: { token: "xoxb-not-a-service-key" },
    });

    const [after] = handle(ns, [NEW]);
    expect(await after.get("T1")).toMatchObject({ state: "set", key: "he-first-workspace-1111" });
    expect(await after.get("T2")).toMatchObject({
      state: "set",
      key: "he-second-workspace-2222",
      setBy: "U2",
    });
    expect(await after.get("T3")).toMatchObject({ state: "set", key: "he-third-workspace-3333" });
  });

  it("reads a key sealed with an encryption key no longer listed as unreadable (never a crash), and re-sealing leaves it", async () => {
    const ns = unique("gone");
    const [old] = handle(ns, [GONE]);
    await old.set("T1", "he-lost-workspace-key-9876", "UADMIN");
    const [now, raw] = handle(ns, [NEW]);
    expect(await now.get("T1")).toEqual({
      state: "unreadable",
      why: KEY_NOT_LISTED,
      lastFour: "…9876",
      setBy: "UADMIN",
      setAt: 1_700_000_000_000,
    });
    expect(await now.resealAll()).toEqual({ resealed: 0, current: 0, unreadable: 1 });
    // Altered at rest, or not a record this store wrote: unreadable too.
    await now.set("T2", "he-tampered-workspace-5555", "UADMIN");
    const stored = (await raw.getRecord("t:T2:service-key")) as { box: string };
    const box = stored.box.replace(/\.([^.])([^.]*)$/, (_m, c: string, rest: string) =>
      c === "A" ? `.B${rest}` : `.A${rest}`,
    );
    await raw.putRecord("t:T2:service-key", { ...stored, box });
    expect(await now.get("T2")).toMatchObject({ state: "unreadable", lastFour: "…5555" });
    await raw.putRecord("t:T3:service-key", { something: "else" });
    expect(await now.get("T3")).toEqual({
      state: "unreadable",
      why: "not a key's record",
      lastFour: undefined,
    });
    // Setting it again makes it readable.
    await now.set("T1", "he-new-workspace-key-4321", "UADMIN");
    expect(await now.get("T1")).toMatchObject({ state: "set", key: "he-new-workspace-key-4321" });
  });

  it("does not open a workspace's sealed key copied into another workspace's record", async () => {
    const ns = unique("copied");
    const [keys, raw] = handle(ns, [NEW]);
    await keys.set("T1", "he-workspace-one-only-7777", "UADMIN");
    // Someone with write access to the store gives T2 the record of T1 (box and all).
    await raw.putRecord("t:T2:service-key", await raw.getRecord("t:T1:service-key"));
    expect(await keys.get("T2")).toMatchObject({ state: "unreadable", lastFour: "…7777" });
    expect(await keys.resealAll()).toEqual({ resealed: 0, current: 1, unreadable: 1 });
    expect(await keys.get("T1")).toMatchObject({ key: "he-workspace-one-only-7777" });
  });

  it("refuses a key stored in plain text or in the unbound v1 format, and re-sealing leaves it so", async () => {
    const ns = unique("unsealed");
    const [keys, raw] = handle(ns, [NEW]);
    await keys.set("T1", "he-bound-workspace-key-1111", "UADMIN");
    const { box } = (await raw.getRecord("t:T1:service-key")) as { box: string };
    const stored = (value: string, four: string) => ({
      box: value,
      lastFour: four,
      setBy: "UADMIN",
      setAt: 1,
    });
    // Plain text, and a box of the unbound format (its version changed: the rest as sealed).
    await raw.putRecord("t:T2:service-key", stored("he-plain-workspace-key-6666", "…6666"));
    await raw.putRecord("t:T3:service-key", stored(box.replace(/^v2\./, "v1."), "…1111"));
    for (const [team, four] of [
      ["T2", "…6666"],
      ["T3", "…1111"],
    ] as const) {
      const state = await keys.get(team);
      expect(state).toEqual({
        state: "unreadable",
        why: NOT_SEALED,
        lastFour: four,
        setBy: "UADMIN",
        setAt: 1,
      });
      expect(JSON.stringify(state)).not.toContain("he-plain");
    }
    expect(await keys.resealAll()).toEqual({ resealed: 0, current: 1, unreadable: 2 });
    expect(((await raw.getRecord("t:T2:service-key")) as { box: string }).box).toBe(
      "he-plain-workspace-key-6666",
    );
  });

  it("lists record keys by prefix, and nothing of the store's own entries (leases, claims)", async () => {
    const ns = unique("list");
    const [, store] = handle(ns, [NEW]);
    await store.putRecord("t:T1:service-key", { a: 1 });
    await store.putRecord("t:T2:installation", { b: 2 });
    await store.putRecord("e:E1:installation", { c: 3 });
    await store.acquireLease("t:T9:lease", "owner-1", 60_000);
    await store.claimOnce("T1", "event-1", 60_000);
    expect((await store.recordKeys("t:")).sort()).toEqual([
      "t:T1:service-key",
      "t:T2:installation",
    ]);
    expect(await store.recordKeys("e:")).toEqual(["e:E1:installation"]);
    await store.deleteRecord("t:T1:service-key");
    expect(await store.recordKeys("t:T1:")).toEqual([]);
  });
});
