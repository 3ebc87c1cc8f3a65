import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testRedisUrl } from "../support/needs.ts";
import { until } from "../support/until.ts";
import { Cluster } from "../support/cluster.ts";
import {
  CHANNEL,
  comparable,
  markdownOf,
  NO_MESSAGE,
  OWNER,
  statusOf,
} from "../support/harness.ts";

const redisUrl = testRedisUrl();

describe.skipIf(!redisUrl)("several instances on one Redis", () => {
  let c: Cluster;
  beforeAll(async () => {
    c = await Cluster.start({
      redisUrl: redisUrl ?? "",
      instances: 3,
      // Long enough that an instance starved of CPU for a moment (three app processes and
      // the test share two cores) keeps the lease it renews every 2 s; a shorter lease let
      // a second instance take a run over from a live one now and then.
      leaseTtlMs: 6000,
      scanIntervalMs: 300,
    });
  }, 60_000);
  afterAll(async () => {
    await c?.close();
  });

  /**
   * Runs a task on i1 until `moment`, kills whichever instance owns it, checks the outcome.
   * `hold`, when given, keeps the owner at that moment until it is killed (it returns what
   * lets go), so that the owner cannot finish the run first on a fast machine.
   */
  async function killOwnerWhen(
    label: string,
    prompt: string,
    moment: (threadTs: string, fromCall: number) => Promise<unknown>,
    hold?: () => () => void,
  ) {
    const from = c.slack.calls.length;
    const letGo = hold?.();
    const { threadTs, id, owner, killedAt } = await (async () => {
      try {
        await c.target("i1").command(`${label} ${prompt}`);
        const threadTs = await c.waitForTaskThread(label);
        await moment(threadTs, from);
        const id = await c.runFor(label);
        const owner = await c.waitForOwner(id);
        await c.kill(owner, "SIGKILL");
        return { threadTs, id, owner, killedAt: Date.now() };
      } finally {
        letGo?.(); // never left on for the tests after this one
      }
    })();
    const replies = await c.waitForFinal(threadTs, 1, 30_000);
    const run = c.sim.run(id);
    // The same message, finished: one answer message, complete text, files once each.
    expect(replies).toHaveLength(1);
    // The status first: when it is not completed, it says why.
    expect(statusOf(replies[0] ?? NO_MESSAGE)).toMatch(/Completed in/);
    expect(comparable(markdownOf(replies[0] ?? NO_MESSAGE))).toBe(comparable(run?.content ?? "x"));
    const files = c.slack.files().filter((f) => f.thread_ts === threadTs && f.completed);
    const names = files.map((f) => f.name).sort();
    expect(names).toEqual([...new Set(names)]);
    expect(names).toHaveLength(run?.files.length ?? -1);
    const resumedBy = [...c.instances.keys()].filter((i) =>
      c.logs(i, "resuming a run").some((l) => l.runId === id),
    );
    expect(resumedBy).toHaveLength(1);
    expect(resumedBy[0]).not.toBe(owner);
    // Bring the killed instance back for the next scenario.
    await c.spawn(owner);
    return { owner, threadTs, killedAt };
  }

  it("finishes a run in the same message when its owner is killed before the first edit", async () => {
    const { threadTs, killedAt } = await killOwnerWhen(
      "Kill before edit",
      // The first chunk comes 1.5 s after the run starts: the kill lands well before it,
      // however slow the machine (it lands about 100 ms after the working message).
      "[sim:delay=1500] [sim:length=200] [sim:chunk=100] [sim:files=2]",
      (threadTs) =>
        c.slack.waitForCall(
          (call) => call.method === "chat.postMessage" && call.args.thread_ts === threadTs,
        ),
    );
    // It really was before any text was shown.
    const answerTs = c.botReplies(threadTs)[0]?.ts;
    const early = c.slack.calls.filter(
      (call) => call.method === "chat.update" && call.args.ts === answerTs && call.at < killedAt,
    );
    expect(early).toEqual([]);
  });

  it("finishes a run in the same message when its owner is killed mid-stream", async () => {
    await killOwnerWhen(
      "Kill mid stream",
      "[sim:delay=25] [sim:length=3000] [sim:files=2]",
      (threadTs) =>
        c.slack.waitFor(() => c.botReplies(threadTs).find((m) => markdownOf(m).length > 400), {
          description: "some streamed text",
        }),
    );
  });

  it("uploads every file exactly once when the owner is killed during the upload", async () => {
    await killOwnerWhen(
      "Kill during upload",
      "[sim:delay=5] [sim:length=600] [sim:files=4]",
      (_threadTs, fromIndex) =>
        c.slack.waitForCall((call) => call.method === "files.completeUploadExternal", {
          timeoutMs: 15_000,
          fromIndex,
        }),
      // Its upload URLs are asked, its bytes sent, and Slack answers the completion with a
      // 429 for longer than the test waits: the owner is mid-upload when it dies.
      () =>
        c.slack.failWhen(({ method }) =>
          method === "files.completeUploadExternal"
            ? { error: "ratelimited", retryAfter: 60 }
            : undefined,
        ),
    );
  });

  it("ends the working message with a clear error when its instance dies while creating the task", async () => {
    const label = "Killed while creating";
    c.sim.injectFault({ endpoint: "create", delayMs: 4000 });
    await c.target("i3").command(`${label} [sim:length=100]`);
    const threadTs = await c.waitForTaskThread(label);
    // Killed once the task being created is recorded (the service has not answered yet).
    const working = await c.slack.waitFor(() => c.botReplies(threadTs)[0], {
      description: "the working message",
    });
    const reservation = await c.waitForRecordWhere(
      (r) => r.kind === "reserved" && JSON.stringify(r.messageTs) === JSON.stringify([working.ts]),
    );
    expect(reservation).toMatchObject({
      kind: "reserved",
      key: { threadTs },
      messageTs: [working.ts],
    });
    expect(await c.kill("i3", "SIGKILL")).toBeNull();
    const replies = await c.waitForFinal(threadTs, 1, 20_000);
    expect(replies).toHaveLength(1);
    expect(statusOf(replies[0] ?? NO_MESSAGE)).toContain(
      "interrupted before the task service answered",
    );
    expect(JSON.stringify(replies[0]?.blocks)).not.toContain('"Stop"');
    await c.spawn("i3");
  });

  it("shows and finishes a task whose instance died after the service answered but before anything was posted", async () => {
    const label = "Killed before posting";
    // Slack's posting budget is spent for this task's messages: the work goes ahead anyway.
    const stopRefusing = c.slack.failWhen(({ method, args }) =>
      method === "chat.postMessage" && JSON.stringify(args).includes(label)
        ? { error: "ratelimited", retryAfter: 30 }
        : undefined,
    );
    await c.target("i2").command(`${label} [sim:delay=20] [sim:length=600] [sim:files=1]`);
    const id = await c.runFor(label);
    // The service's run is recorded with the task's start before any message exists.
    const reservation = await c.waitForRecordWhere(
      (r) => r.kind === "reserved" && JSON.stringify(r).includes(label) && r.created !== undefined,
    );
    expect(reservation).toMatchObject({ created: { runId: id }, messageTs: [] });
    expect(reservation.key.threadTs).toBeUndefined();
    expect(await c.kill("i2", "SIGKILL")).toBeNull();
    stopRefusing();
    // Another instance posts the prompt and the answer, and follows the same run to its end,
    // once i2's lease on the task has lapsed.
    const threadTs = await c.waitForTaskThread(label, 30_000);
    const replies = await c.waitForFinal(threadTs, 1, 30_000);
    expect(replies).toHaveLength(1);
    expect(comparable(markdownOf(replies[0] ?? NO_MESSAGE))).toBe(
      comparable(c.sim.run(id)?.content ?? "x"),
    );
    expect(statusOf(replies[0] ?? NO_MESSAGE)).toMatch(/Completed in/);
    expect(c.sim.runs().filter((r) => r.promptText.includes(label))).toHaveLength(1);
    const prompts = c.slack.calls.filter(
      (call) =>
        call.method === "chat.postMessage" &&
        call.response.ok &&
        JSON.stringify(call.args).includes(label),
    );
    expect(prompts).toHaveLength(1);
    await c.spawn("i2");
  });

  it("hands a run over at once on SIGTERM, and the stopping instance exits 0", async () => {
    const label = "Handover on term";
    // i2 holds its leases for a minute, far longer than the test waits below: only the lease
    // released at shutdown lets another instance take the run over in time (no clock involved).
    await c.kill("i2", "SIGTERM");
    await c.spawn("i2", undefined, { RUN_LEASE_TTL_MS: "60000" });
    await c.target("i2").command(`${label} [sim:delay=25] [sim:length=4000]`);
    const threadTs = await c.waitForTaskThread(label);
    await c.slack.waitFor(() => c.botReplies(threadTs).find((m) => markdownOf(m).length > 300), {
      description: "some streamed text",
    });
    const id = c.sim.runs().find((r) => r.promptText.includes(label))?.id ?? "";
    const owner = (await c.owner(id)) ?? "";
    expect(owner).toBe("i2");
    const exit = await c.kill(owner, "SIGTERM");
    expect(exit).toBe(0);
    // Another instance owns it well before i2's lease (60 s) could have expired.
    await c.slack.waitFor(
      () =>
        [...c.instances.keys()].some(
          (i) => i !== owner && c.logs(i, "resuming a run").some((l) => l.runId === id),
        ),
      { timeoutMs: 10_000, description: "another instance resuming the run" },
    );
    const replies = await c.waitForFinal(threadTs, 1, 30_000);
    expect(replies).toHaveLength(1);
    expect(comparable(markdownOf(replies[0] ?? NO_MESSAGE))).toBe(
      comparable(c.sim.run(id)?.content ?? "x"),
    );
    await c.spawn(owner);
  });

  it("handles an event delivered to three different instances once", async () => {
    const label = "Thrice delivered";
    await c.target("i1").command(`${label} [sim:length=200]`);
    const threadTs = await c.waitForTaskThread(label);
    await c.waitForFinal(threadTs, 1, 20_000);
    const eventId = `EvCluster${Date.now()}`;
    const first = await c
      .target("i1")
      .reply(threadTs, "Follow up once [sim:length=100]", { eventId });
    await Promise.all([
      c
        .target("i2")
        .reply(threadTs, "Follow up once [sim:length=100]", { eventId, ts: first.ts, retryNum: 1 }),
      c
        .target("i3")
        .reply(threadTs, "Follow up once [sim:length=100]", { eventId, ts: first.ts, retryNum: 2 }),
    ]);
    await c.waitForFinal(threadTs, 2, 20_000);
    expect(
      c.sim.runs().filter((r) => r.followUp && r.promptText.includes("Follow up once")),
    ).toHaveLength(1);
    expect(c.botReplies(threadTs)).toHaveLength(2);
  });

  it("lets Stop pressed on any instance stop a run relayed by another", async () => {
    const label = "Stop across instances";
    await c.target("i1").command(`${label} [sim:delay=25] [sim:length=20000]`);
    const threadTs = await c.waitForTaskThread(label);
    const running = await c.slack.waitFor(
      () => c.botReplies(threadTs).find((m) => markdownOf(m).length > 100),
      { description: "streaming" },
    );
    const id = c.sim.runs().find((r) => r.promptText.includes(label))?.id ?? "";
    const owner = await c.owner(id);
    const other =
      [...c.instances.keys()].find((i) => i !== owner && c.instance(i).exitCode === undefined) ??
      "";
    await c.target(other).clickStop(running, OWNER);
    const replies = await c.waitForFinal(threadTs, 1, 20_000);
    expect(statusOf(replies.at(-1) ?? NO_MESSAGE)).toMatch(new RegExp(`Stopped by <@${OWNER}>`));
    expect(c.sim.run(id)?.status).toBe("stopped");
  });

  it("quarantines a run whose relaying instances keep dying while it ends, and serves the others", async () => {
    const label = "Deadly run";
    // Each owner is held while it uploads the run's files (a 429 that lasts longer than the
    // test), as a run whose files kill their instance would be: it dies there.
    const letGo = c.slack.failWhen(({ method }) =>
      method === "files.completeUploadExternal"
        ? { error: "ratelimited", retryAfter: 60 }
        : undefined,
    );
    try {
      await c.target("i1").command(`${label} [sim:length=300] [sim:files=2]`);
      const threadTs = await c.waitForTaskThread(label);
      const id = await c.runFor(label);
      for (let died = 0; died < 3; died++) {
        // The relays begun on it so far (the first owner's, then each one that took it over),
        // the latest one ending it.
        await c.waitForRecordWhere(
          (r) => r.runId === id && r.openRelays === died + 1 && r.finishing === true,
          20_000,
        );
        const owner = await c.waitForOwner(id);
        await c.kill(owner, "SIGKILL");
        await c.spawn(owner);
      }
      // The next instance to find it does not relay it: its thread says why, and where to look.
      const replies = await c.waitForFinal(threadTs, 1, 30_000);
      const final = JSON.stringify(replies.at(-1) ?? NO_MESSAGE);
      expect(final).toContain("the app stopped 3 times while showing it");
      expect(final).toContain("open History under this message");
      // Logged before the message was edited, but the log is written asynchronously (log.ts)
      // and read through a pipe: it may arrive after the edit.
      const said = () =>
        [...c.instances.keys()].flatMap((i) =>
          c.logs(i, "run quarantined: 3 instances died relaying it; it is not relayed again"),
        );
      await until("the quarantine logged", () => said().length > 0);
      expect(said().map((l) => l.runId)).toEqual([id]);
    } finally {
      letGo();
    }
    // Every instance is up, and the next task runs to its end.
    await c.target("i2").command("After the deadly run [sim:length=300]");
    const next = await c.waitForFinal(await c.waitForTaskThread("After the deadly run"), 1);
    expect(statusOf(next.at(-1) ?? NO_MESSAGE)).toMatch(/Completed in/);
  }, 120_000);

  it("keeps every secret out of every instance's output", () => {
    for (const i of c.instances.values()) {
      const out = i.output.join("");
      expect(out).not.toContain(c.slack.botToken);
      expect(out).not.toContain("he-e2eSimulatorKey");
    }
    expect(c.slack.validationErrors).toEqual([]);
    expect(CHANNEL).toBeTruthy();
  });
});
