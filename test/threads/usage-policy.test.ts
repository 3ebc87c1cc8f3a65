/**
 * A workspace's usage policy as people meet it: someone outside the allowed user groups, or in
 * a channel not on the list, is told why privately and nothing reaches the service; the hourly
 * quota counts every instance's tasks and says when the next one may start; the service's 402
 * and 429 are kept for the workspace's admins and cleared once a task starts again.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";
import { testRedisUrl } from "../support/needs.ts";
import { type TellUser, TaskCoordinator } from "../../src/threads/coordinator.ts";
import {
  type GroupMembers,
  POLICY_UNREADABLE,
  storedServiceAlerts,
  usageRefusal,
} from "../../src/threads/access/usage-policy.ts";
import { TaskServiceError } from "../../src/service/errors.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import { createRedisStore } from "../../src/store/redis.ts";
import { createSqliteStore } from "../../src/store/sqlite.ts";
import type { ThreadStore } from "../../src/store/types.ts";
import { getServiceAlert, putUsagePolicy, type UsagePolicy } from "../../src/store/usage-policy.ts";
import { oneWorkspace } from "../support/fakes/workspaces.ts";
import { FakeFiles } from "../support/fakes/file-source.ts";
import { FakeRelay } from "../support/fakes/recording-relay.ts";
import { FakeTaskService } from "../support/fakes/task-service.ts";
import { FakeSlackWriter } from "../support/fakes/slack-writer.ts";

const TEAM = "T1";
const ENG = "S0ENG";
const OPS = "S0OPS";
const HOUR = 3_600_000;
const logger = pino({ level: "silent" });
/** 10:00 UTC sharp. */
const TEN = Date.UTC(2027, 0, 15, 10, 0, 0);

const everyone: UsagePolicy = {
  who: { kind: "everyone" },
  where: { kind: "all" },
  perUserPerHour: 0,
  joinPublicChannels: false,
};
const req = (userId: string, channelId = "C0GENERAL") => ({ teamId: TEAM, channelId, userId });

/** Slack's user groups: ENG has alice, OPS has bob; each question is counted. */
function slackGroups(): { members: GroupMembers; asked: string[] } {
  const groups: Record<string, string[]> = { [ENG]: ["UALICE"], [OPS]: ["UBOB"] };
  const asked: string[] = [];
  return {
    asked,
    members: async (teamId, groupId) => {
      asked.push(`${teamId}/${groupId}`);
      return new Set(groups[groupId] ?? []);
    },
  };
}

describe("who may start tasks", () => {
  let store: ThreadStore;
  beforeEach(async () => {
    store = createMemoryStore();
    await putUsagePolicy(store, TEAM, {
      ...everyone,
      who: { kind: "groups", groupIds: [ENG, OPS] },
    });
  });

  it("lets members of any allowed group start tasks, and tells anyone else which groups may", async () => {
    const slack = slackGroups();
    const deps = { store, groupMembers: slack.members, logger, now: () => TEN };
    expect(await usageRefusal(deps, req("UALICE"))).toBeUndefined();
    expect(await usageRefusal(deps, req("UBOB"))).toBeUndefined();
    expect(await usageRefusal(deps, req("UCAROL"))).toBe(
      "Only members of <!subteam^S0ENG> or <!subteam^S0OPS> may start tasks in this workspace (set by its admins).",
    );
    expect(slack.asked).toContain(`${TEAM}/${ENG}`);
  });

  it("refuses when Slack cannot say who is in the groups (fail closed), and says so", async () => {
    const deps = {
      store,
      groupMembers: async () => {
        throw new Error("ratelimited");
      },
      logger,
      now: () => TEN,
    };
    expect(await usageRefusal(deps, req("UALICE"))).toBe(
      "Only members of <!subteam^S0ENG> or <!subteam^S0OPS> may start tasks in this workspace, and Slack could not tell me whether you are one right now. Please try again in a minute.",
    );
    // Without a way to ask Slack at all, the same.
    expect(await usageRefusal({ store, logger, now: () => TEN }, req("UALICE"))).toMatch(
      /could not tell me whether you are one/,
    );
  });

  it("lets a member through when only another group could not be listed", async () => {
    const deps = {
      store,
      groupMembers: async (_team: string, group: string) => {
        if (group === ENG) throw new Error("no answer");
        return new Set(["UBOB"]);
      },
      logger,
      now: () => TEN,
    };
    expect(await usageRefusal(deps, req("UBOB"))).toBeUndefined();
  });

  it("refuses everyone while the stored policy is unreadable, and tells them an admin can fix it", async () => {
    await store.putRecord(`t:${TEAM}:usage-policy`, { who: "?" });
    const deps = { store, groupMembers: slackGroups().members, logger, now: () => TEN };
    expect(await usageRefusal(deps, req("UALICE"))).toBe(POLICY_UNREADABLE);
    expect(POLICY_UNREADABLE).toContain("Home tab");
  });
});

describe("where tasks may start", () => {
  it("refuses a channel not on the list, naming the ones that are, and direct messages too", async () => {
    const store = createMemoryStore();
    await putUsagePolicy(store, TEAM, {
      ...everyone,
      where: { kind: "channels", channelIds: ["C0TASKS", "C0BUILD"] },
    });
    const deps = { store, logger, now: () => TEN };
    expect(await usageRefusal(deps, req("UALICE", "C0TASKS"))).toBeUndefined();
    expect(await usageRefusal(deps, req("UALICE", "C0RANDOM"))).toBe(
      "Tasks can't be started in this channel: this workspace allows them only in <#C0TASKS> or <#C0BUILD> (set by its admins).",
    );
    expect(await usageRefusal(deps, req("UALICE", "D0ALICE"))).toMatch(
      /^Tasks can't be started in direct messages: .*<#C0TASKS>/,
    );
  });
});

const dir = mkdtempSync(join(tmpdir(), "taskbot-quota-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const namespace = `quota${process.pid}x${Date.now()}`;
const backends: Array<[string, () => ThreadStore]> = [
  [
    "memory",
    (() => {
      const shared = createMemoryStore({ namespace });
      return () => shared;
    })(),
  ],
  ["embedded SQLite", () => createSqliteStore(join(dir, "q.sqlite"), () => {}, { namespace })],
];
const redisUrl = testRedisUrl();
if (redisUrl) backends.push(["Redis", () => createRedisStore(redisUrl, () => {}, { namespace })]);

let teams = 0;

describe.each(backends)("the hourly quota per person on %s", (_name, make) => {
  it("refuses the fourth task in any hour, saying when the next may start: an hour after the first", async () => {
    const store = make();
    const team = `TQ${++teams}x${Date.now()}`;
    await putUsagePolicy(store, team, { ...everyone, perUserPerHour: 3 });
    let now = TEN + 5 * 60_000;
    const deps = { store, logger, now: () => now };
    const ask = (user = "UALICE") => usageRefusal(deps, { ...req(user), teamId: team });
    for (let i = 0; i < 3; i++) expect(await ask()).toBeUndefined();
    now = TEN + 42 * 60_000 + 30_000; // 10:42:30
    // A sliding hour: the first of the three leaves it at 11:05, not at 11:00.
    expect(await ask()).toBe(
      "You have started 3 tasks in the last hour (follow-ups included), the most this workspace allows per person. You can start another in 23 min.",
    );
    // Another person has their own quota.
    expect(await ask("UBOB")).toBeUndefined();
    now = TEN + HOUR;
    expect(await ask()).toBeDefined();
    now = TEN + HOUR + 5 * 60_000;
    expect(await ask()).toBeUndefined();
    await store.close();
  });

  it("counts every instance's tasks: ten at once from two instances, three go ahead", async () => {
    const [a, b] = [make(), make()];
    const team = `TQ${++teams}x${Date.now()}`;
    await putUsagePolicy(a, team, { ...everyone, perUserPerHour: 3 });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        usageRefusal(
          { store: i % 2 ? a : b, logger, now: () => TEN },
          { ...req("UALICE"), teamId: team },
        ),
      ),
    );
    expect(results.filter((r) => r === undefined)).toHaveLength(3);
    await Promise.all([a.close(), b.close()]);
  });
});

describe("the policy in the coordinator", () => {
  let store: ThreadStore;
  let service: FakeTaskService;
  let writer: FakeSlackWriter;
  let relay: FakeRelay;
  let told: string[];
  const tell: TellUser = async (text) => {
    told.push(text);
  };
  const coordinator = () =>
    new TaskCoordinator({
      workspaces: oneWorkspace(writer, service),
      store,
      relay,
      files: new FakeFiles(),
      logger,
      now: () => TEN,
      groupMembers: slackGroups().members,
    });
  const task = (userId: string, prompt: string, channelId = "C0GENERAL") => ({
    teamId: TEAM,
    channelId,
    userId,
    prompt,
  });

  beforeEach(() => {
    store = createMemoryStore();
    service = new FakeTaskService();
    writer = new FakeSlackWriter();
    relay = new FakeRelay();
    told = [];
  });

  it("tells someone outside the allowed groups why, privately, and creates nothing", async () => {
    await putUsagePolicy(store, TEAM, { ...everyone, who: { kind: "groups", groupIds: [ENG] } });
    const c = coordinator();
    await c.startTask(task("UCAROL", "Build a shop"), tell);
    expect(told).toEqual([
      "Only members of <!subteam^S0ENG> may start tasks in this workspace (set by its admins).",
    ]);
    expect(service.prompts).toEqual([]);
    await c.startTask(task("UALICE", "Build a shop"), tell);
    expect(service.prompts).toEqual(["Build a shop"]);
  });

  it("asks the service nothing for a task in a public channel the app is not in and may not join", async () => {
    const asked: string[] = [];
    const botMembership = async (_team: string, channelId: string) => {
      asked.push(channelId);
      return channelId === "C0IN";
    };
    const c = new TaskCoordinator({
      workspaces: oneWorkspace(writer, service),
      store,
      relay,
      files: new FakeFiles(),
      logger,
      now: () => TEN,
      botMembership,
    });
    writer.failPosts("not_in_channel"); // as Slack answers where the app is not
    await c.startTask(task("UALICE", "Draft the notes", "C0OUT"), tell);
    expect(told).toEqual([expect.stringContaining("Invite me with `/invite @Task Agent`")]);
    expect(service.prompts).toEqual([]);
    // Where it is, the service is asked at once; a private channel or a DM is not asked about.
    writer.failPosts("");
    await c.startTask(task("UALICE", "Draft it here", "C0IN"), tell);
    await c.startTask(task("UALICE", "Draft it in private", "G0PRIVATE"), tell);
    expect(service.prompts).toEqual(["Draft it here", "Draft it in private"]);
    expect(asked).toEqual(["C0OUT", "C0IN"]);
    // Once the admins let it join public channels, nobody is asked.
    await putUsagePolicy(store, TEAM, { ...everyone, joinPublicChannels: true });
    await c.startTask(task("UALICE", "Draft it anywhere", "C0OUT"), tell);
    expect(service.prompts).toContain("Draft it anywhere");
    expect(asked).toEqual(["C0OUT", "C0IN"]);
  });

  it("applies the policy to follow-ups too: a reply past the quota is refused in the thread", async () => {
    await putUsagePolicy(store, TEAM, { ...everyone, perUserPerHour: 1 });
    const c = coordinator();
    await c.startTask(task("UALICE", "Build a shop"), tell);
    const run = relay.started.at(-1);
    if (!run) throw new Error(`no task started; told: ${told.join(" / ")}`);
    await c.onRunEnded({ target: run, state: "completed", text: "", messageTs: [] });
    await c.handleReply({
      key: run.key,
      userId: "UALICE",
      text: "Add a cart",
      ts: "1800000000.000200",
      files: [],
    });
    expect(service.prompts).toEqual(["Build a shop"]);
    expect(writer.ephemerals.at(-1)).toMatchObject({
      channelId: run.key.channelId,
      userId: "UALICE",
      threadTs: run.key.threadTs,
      text: expect.stringMatching(/^You have started 1 task in the last hour/),
    });
  });

  it("keeps the service's 402 for the admins, and clears it once a task is created again", async () => {
    const c = coordinator();
    const create = service.createTask;
    service.createTask = async () => {
      throw new TaskServiceError({ kind: "credits", status: 402, message: "HTTP 402" });
    };
    await c.startTask(task("UALICE", "Build a shop"), tell);
    await vi.waitFor(async () =>
      expect(await getServiceAlert(store, TEAM, TEN)).toEqual({ status: 402, at: TEN }),
    );
    service.createTask = create;
    await c.startTask(task("UALICE", "Build a shop again"), tell);
    await vi.waitFor(async () =>
      expect(await store.getRecord(`t:${TEAM}:service-alert`)).toBeUndefined(),
    );
  });
});

describe("the service's refusals of the account", () => {
  it("keeps a 429 with its reset time, and leaves other failures to the person's own message", async () => {
    const store = createMemoryStore();
    const alerts = storedServiceAlerts({ store, logger, now: () => TEN });
    alerts.refused(
      TEAM,
      new TaskServiceError({ kind: "server", status: 500, message: "HTTP 500" }),
    );
    alerts.refused(TEAM, new Error("not the service"));
    alerts.refused(
      TEAM,
      new TaskServiceError({
        kind: "rate_limited",
        status: 429,
        message: "HTTP 429",
        retryAfterMs: 7_000,
      }),
    );
    await vi.waitFor(async () =>
      expect(await getServiceAlert(store, TEAM, TEN)).toEqual({
        status: 429,
        at: TEN,
        resetAt: TEN + 7_000,
      }),
    );
  });
});
