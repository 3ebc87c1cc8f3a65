/**
 * A workspace's usage policy and the service's last refusal of its account, on each backend,
 * read back through another handle as another instance would: the default when nothing was
 * saved, a damaged record never read as "everyone, everywhere", and a 429 gone once it reset.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { testRedisUrl } from "../support/needs.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import { createRedisStore } from "../../src/store/redis.ts";
import { createSqliteStore } from "../../src/store/sqlite.ts";
import type { ThreadStore } from "../../src/store/types.ts";
import {
  clearServiceAlert,
  DEFAULT_USAGE_POLICY,
  getServiceAlert,
  getUsagePolicy,
  putServiceAlert,
  putUsagePolicy,
  type UsagePolicy,
  UsagePolicyUnreadableError,
} from "../../src/store/usage-policy.ts";

const dir = mkdtempSync(join(tmpdir(), "taskbot-usage-policy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const redisUrl = testRedisUrl();
let n = 0;
const unique = (prefix: string) => `${prefix}${process.pid}X${Date.now()}X${n++}`;
const namespace = unique("usage");

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

const strict: UsagePolicy = {
  who: { kind: "groups", groupIds: ["S0ENG", "S0OPS"] },
  where: { kind: "channels", channelIds: ["C0GENERAL", "G0PRIVATE"] },
  perUserPerHour: 5,
  joinPublicChannels: true,
};

describe.each(backends)("usage policy records on %s", (_name, make) => {
  /** Two handles on the same data, as two instances have. */
  const pair = (): [ThreadStore, ThreadStore] => [make(), make()];
  const closeAll = (stores: ThreadStore[]) => Promise.all(stores.map((s) => s.close()));

  it("lets everyone start tasks everywhere without a quota, and joins no channel by itself, until an admin saves a policy", async () => {
    const [a, b] = pair();
    const team = unique("T");
    expect(await getUsagePolicy(b, team)).toEqual(DEFAULT_USAGE_POLICY);
    expect(DEFAULT_USAGE_POLICY).toEqual({
      who: { kind: "everyone" },
      where: { kind: "all" },
      perUserPerHour: 0,
      joinPublicChannels: false,
    });
    await putUsagePolicy(a, team, strict);
    // Another instance reads it; it is kept with the workspace's other records.
    expect(await getUsagePolicy(b, team)).toEqual(strict);
    expect(await b.getRecord(`t:${team}:usage-policy`)).toEqual(strict);
    // Another workspace keeps its own (none).
    expect(await getUsagePolicy(b, unique("T"))).toEqual(DEFAULT_USAGE_POLICY);
    await closeAll([a, b]);
  });

  it("never stores a bad policy, and never reads a damaged one as 'everyone'", async () => {
    const [a, b] = pair();
    const team = unique("T");
    await expect(
      putUsagePolicy(a, team, { ...strict, perUserPerHour: -1 } as UsagePolicy),
    ).rejects.toThrow();
    await expect(
      putUsagePolicy(a, team, { ...strict, who: { kind: "groups", groupIds: [] } }),
    ).rejects.toThrow();
    expect(await getUsagePolicy(b, team)).toEqual(DEFAULT_USAGE_POLICY);
    await a.putRecord(`t:${team}:usage-policy`, { who: "engineering only" });
    await expect(getUsagePolicy(b, team)).rejects.toBeInstanceOf(UsagePolicyUnreadableError);
    await closeAll([a, b]);
  });

  it("keeps the service's 402 for the admins until a task starts again", async () => {
    const [a, b] = pair();
    const team = unique("T");
    const at = 1_800_000_000_000;
    expect(await getServiceAlert(b, team, at)).toBeUndefined();
    await putServiceAlert(a, team, { status: 402, at });
    expect(await getServiceAlert(b, team, at + 3_600_000)).toEqual({ status: 402, at });
    // Not shown for ever when nobody tries again.
    expect(await getServiceAlert(b, team, at + 25 * 3_600_000)).toBeUndefined();
    await clearServiceAlert(b, team);
    expect(await a.getRecord(`t:${team}:service-alert`)).toBeUndefined();
    expect(await getServiceAlert(a, team, at)).toBeUndefined();
    await clearServiceAlert(b, team); // nothing to clear is not an error
    await closeAll([a, b]);
  });

  it("shows a 429 until its limit resets", async () => {
    const [a, b] = pair();
    const team = unique("T");
    const at = 1_800_000_000_000;
    await putServiceAlert(a, team, { status: 429, at, resetAt: at + 7_000 });
    expect(await getServiceAlert(b, team, at + 6_000)).toEqual({
      status: 429,
      at,
      resetAt: at + 7_000,
    });
    expect(await getServiceAlert(b, team, at + 8_000)).toBeUndefined();
    await closeAll([a, b]);
  });
});
