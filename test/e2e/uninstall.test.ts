/**
 * Uninstalling the app, end to end: the admin removes it in Slack (the local double revokes the
 * workspace's token and sends `app_uninstalled` and `tokens_revoked`), and the app stops that
 * workspace's running task at the service, posts nothing more there, and keeps nothing of it
 * in its store (the embedded one and Redis, read key by key), while another workspace's
 * records stay exactly as they were.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CHANNEL,
  comparable,
  Harness,
  markdownOf,
  OWNER,
  SIGNING_SECRET,
  TEAM,
} from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";
import { rawKeys } from "../support/raw-keys.ts";
import { seedWorkspace } from "../support/workspace-records.ts";
import { until } from "../support/until.ts";

describe.each(storeBackends())("uninstalling the app (one workspace, %s)", (_name, redisUrl) => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ redisUrl });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("stops the running task at the service, posts nothing more, and forgets every record of the workspace", async () => {
    const other = "T0OTHERWS";
    await seedWorkspace(h.app.store, other);
    // A task held open at the service, a reply queued behind it, defaults of the person.
    await h.command("Plan the offsite [sim:stall=60000] [sim:delay=5]");
    const threadTs = await h.waitForTaskThread("Plan the offsite");
    const run = await h.slack.waitFor(() =>
      h.sim.runs().find((r) => r.promptText.includes("Plan the offsite")),
    );
    // It stalls after its third chunk: once those are shown, no edit of it is still on its way.
    await h.slack.waitFor(() => {
      const now = h.sim.runs().find((r) => r.id === run.id);
      const shown = h.botReplies(threadTs).map((m) => comparable(markdownOf(m)));
      return (now?.chunks ?? 0) >= 3 && shown.includes(comparable(now?.content ?? "x"));
    });
    const queued = await h.reply(threadTs, "Also book the venue");
    // Slack shows it queued (a reaction, and a word to the person) before the uninstall.
    await h.slack.waitFor(() => h.slack.reactions(CHANNEL, queued.ts).length > 0);
    await h.slack.waitFor(() =>
      h.slack.ephemerals(CHANNEL, OWNER).some((e) => e.text.includes("queued")),
    );
    await h.app.store.putDefaults(TEAM, { kind: "user", userId: OWNER }, { model: "m1" });
    const key = { teamId: TEAM, channelId: CHANNEL, threadTs };
    await until(
      "the reply queued",
      async () => ((await h.app.store.getThread(key))?.queue.length ?? 0) > 0,
    );
    const before = await rawKeys({ namespace: h.namespace, dataDir: h.dataDir, redisUrl });
    const ofTeam = (k: string, v: string) =>
      [TEAM, run.id].some((s) => k.includes(s) || v.includes(s));
    expect([...before].filter(([k, v]) => ofTeam(k, v)).length).toBeGreaterThan(3);

    const from = h.slack.calls.length;
    await h.slack.uninstall(TEAM, { url: h.eventsUrl, signingSecret: SIGNING_SECRET });

    // Stopped at the service.
    const ended = await h.sim.waitForRun(run.id, 10_000);
    expect(ended.status).toBe("stopped");
    // Both of the uninstall's events (`app_uninstalled`, and `tokens_revoked` with the bot's
    // token) are handled after their acknowledgement, each forgetting the workspace: the store
    // is read once both are done.
    await until(
      "the workspace forgotten",
      () =>
        h.logLines.filter((l) => l.includes("every record of the workspace forgotten")).length >= 2,
    );
    await h.app.relay.idle();
    expect(h.app.relay.activeRuns).toBe(0);
    // Nothing more was posted (or even tried) in the workspace: its token is gone.
    expect(h.slack.calls.slice(from).map((c) => [c.method, c.response.error, c.args])).toEqual([]);
    expect(
      h.slack.thread(CHANNEL, threadTs).some((m) => /Stopped/.test(JSON.stringify(m.blocks))),
    ).toBe(false);
    // The uninstall is an audit event (its line in the log; the workspace's own list went with it).
    expect(
      h.logLines.some((l) => l.includes('"audit":{"what":"app.uninstalled","who":"slack"')),
    ).toBe(true);
    // The operator is told the token no longer works.
    expect(h.logLines.some((l) => l.includes("SLACK_BOT_TOKEN is no longer valid"))).toBe(true);

    // Nothing of the workspace is left in the store; the other workspace's records all are.
    const after = await rawKeys({ namespace: h.namespace, dataDir: h.dataDir, redisUrl });
    expect(
      [...after].filter(([k, v]) => ofTeam(k, v)).map(([k, v]) => `${k} = ${v.slice(0, 80)}`),
    ).toEqual([]);
    const others = (m: Map<string, string>) =>
      new Map([...m].filter(([k, v]) => k.includes(other) || v.includes(other)));
    expect(others(after)).toEqual(others(before));
    expect(others(after).size).toBeGreaterThanOrEqual(6);
    expect(await h.app.store.getDefaults(other, { kind: "channel", channelId: "C0OTHER" })).toEqual(
      { effort: "low" },
    );
  });
});
