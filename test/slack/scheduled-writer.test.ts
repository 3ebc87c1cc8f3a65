/**
 * scheduledWriter with a REAL WebClient (rejectRateLimitedCalls: true) against the local Slack
 * double enforcing chat.update's tier with 429 + Retry-After. The budget test runs the double's
 * tier clock and the scheduler's clock 20× faster than real time, so a tier minute takes 3 s.
 * Nothing sleeps: tests wait on conditions (slack.waitFor, the writers' promises).
 */
import { WebClient } from "@slack/web-api";
import { afterEach, describe, expect, it } from "vitest";
import type { MessagePayload } from "../../src/view/render.ts";
import { scheduledWriter } from "../../src/slack/scheduled-writer.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { type Clock, SlackScheduler } from "../../src/slack/scheduler/index.ts";
import type { SlackWriter } from "../../src/runs/ports.ts";
import { webClientWriter } from "../../src/slack/web-writer.ts";
import {
  type LocalSlack,
  type LocalSlackOptions,
  startLocalSlack,
} from "../../tools/local-slack/index.ts";

const TEAM = "T0001";

/** Real time, `factor` times faster: timers fire after ms / factor real milliseconds. */
function fastClock(factor: number): Clock {
  const start = Date.now();
  return {
    now: () => start + (Date.now() - start) * factor,
    setTimeout: (fn, ms) => setTimeout(fn, ms / factor),
    clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  };
}

function payload(text: string): MessagePayload {
  return { text, blocks: [] };
}

let slack: LocalSlack | undefined;
let scheduler: SlackScheduler | undefined;

afterEach(async () => {
  await scheduler?.close();
  await slack?.close();
  slack = undefined;
  scheduler = undefined;
});

async function start(
  slackOptions: LocalSlackOptions,
  clock?: Clock,
): Promise<{ slack: LocalSlack; scheduler: SlackScheduler; writer: SlackWriter }> {
  slack = await startLocalSlack({ defaultWaitTimeoutMs: 20_000, ...slackOptions });
  const client = new WebClient(slack.botToken, {
    slackApiUrl: slack.apiUrl,
    logger: silentLogger,
    // Our scheduler decides about 429s, not WebClient's queue.
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 0 },
  });
  scheduler = new SlackScheduler(clock ? { clock } : {});
  return { slack, scheduler, writer: scheduledWriter(webClientWriter(client), scheduler, TEAM) };
}

describe("scheduledWriter against the local Slack with tier enforcement", () => {
  it("drives 20 messages × 30 updates within chat.update's tier: no 429, every last text shown", async () => {
    const factor = 20;
    const clock = fastClock(factor);
    const s = await start({ tiers: { "chat.update": { perMinute: 50 } }, now: clock.now }, clock);
    const channels = ["C1", "C2", "C3", "C4"];
    const messages = await Promise.all(
      Array.from({ length: 20 }, async (_, m) => {
        const channel = channels[m % channels.length] ?? "C1";
        return { channel, ts: await s.writer.post(channel, payload(`m${m} v0`)) };
      }),
    );

    // Each message gets a new text every (simulated) second for 30 s, without waiting for the
    // previous one, like 20 runs streaming at once: 600 edits for a budget of 50 a minute.
    const updates: Promise<void>[] = [];
    for (let i = 1; i <= 30; i++) {
      clock.setTimeout(() => {
        messages.forEach(({ channel, ts }, m) => {
          updates.push(s.writer.update(channel, ts, payload(`m${m} v${i}`), { final: i === 30 }));
        });
      }, i * 1000);
    }
    await s.slack.waitFor(() => updates.length === 600);
    await Promise.all(updates);

    expect(s.slack.rateLimited).toBe(0);
    for (const [m, { channel, ts }] of messages.entries()) {
      expect(s.slack.message(channel, ts)?.text).toBe(`m${m} v30`);
    }
    const edits = s.slack.calls.filter((c) => c.method === "chat.update");
    expect(edits.every((c) => c.status === 200)).toBe(true);
    // The budget was used, not just respected: the 20 final edits, and interim ones spending
    // most of what the window could spare beside the calls it kept for those finals (45 less
    // 20 × 61 / (age + 61), scheduler/windows.ts), spread over the 30 s.
    expect(edits.length).toBeGreaterThanOrEqual(38);
    expect(s.scheduler.metrics()).toMatchObject({
      rateLimited: {},
      superseded: 600 - edits.length,
      queued: 0,
    });
  });

  it("pauses chat.update on a 429 for Retry-After, then sends the latest text once", async () => {
    const s = await start({});
    const ts = await s.writer.post("C1", payload("v0"));
    s.slack.failNext("chat.update", { error: "ratelimited", status: 429, retryAfter: 1 });
    const updates = [s.writer.update("C1", ts, payload("v1"))];
    const limited = await s.slack.waitForCall(
      (c) => c.method === "chat.update" && c.status === 429,
    );
    for (let i = 2; i <= 10; i++) {
      updates.push(s.writer.update("C1", ts, payload(`v${i}`), { final: i === 10 }));
    }
    // Other methods are not paused meanwhile.
    await s.writer.react("C1", ts, "eyes");
    await s.slack.waitFor(() => s.slack.message("C1", ts)?.text === "v10");
    await Promise.all(updates);

    const after = s.slack.calls.filter((c) => c.method === "chat.update" && c.seq > limited.seq);
    expect(after.map((c) => [c.args.text, c.status])).toEqual([["v10", 200]]);
    expect(after[0]?.at ?? 0).toBeGreaterThanOrEqual(limited.at + 1000);
    const react = s.slack.calls.find((c) => c.method === "reactions.add");
    expect(react?.at ?? Infinity).toBeLessThan(limited.at + 1000);
    expect(s.scheduler.metrics()).toMatchObject({
      rateLimited: { "chat.update": 1 },
      superseded: 9,
      calls: { "chat.update": 2, "reactions.add": 1 },
    });
  });

  it("looks a person up once when several of their requests arrive together, then from memory", async () => {
    const { slack: s, writer } = await start({});
    s.addUser({ id: "U0BURST", name: "burst", team_id: TEAM, is_restricted: true });
    const people = await Promise.all(Array.from({ length: 10 }, () => writer.person("U0BURST")));
    expect(people.every((p) => p?.guest === true && p.teamId === TEAM)).toBe(true);
    expect(await writer.person("U0BURST")).toEqual(people[0]);
    expect(s.calls.filter((c) => c.method === "users.info")).toHaveLength(1);
  });

  it("in auto mode edits a run alone, then spreads runs over streams and edits by their shares of the budgets", async () => {
    const s = await start({ users: [{ id: "U1", name: "ada" }] });
    const recipient = { userId: "U1", teamId: TEAM };
    const thread = await s.writer.post("C1", payload("the task"));
    const streams = s.writer.streams;
    if (!streams) throw new Error("the scheduled writer knows no stream budget");
    const choices: string[] = [];
    for (let i = 0; i < 13; i++) {
      const ts = await streams.tryStart("C1", thread, recipient, `part ${i}\n`);
      choices.push(ts === undefined ? "edit" : "stream");
    }
    // Alone, a run edits (about one edit a second, no waiting for whole lines). Then each run
    // goes where its share is larger: chat.update's 45 a minute (after the safety margin) over
    // the runs editing, or chat.appendStream's 90 over the streams, an append worth half an
    // edit (whole lines only): runs alternate. A minute's starts (18 after the margin) may go
    // at once, so every run that chose to stream started its stream.
    const [edit, stream] = ["edit", "stream"];
    const alternating = Array.from({ length: 5 }, () => [edit, stream]).flat();
    expect(choices).toEqual([edit, stream, stream, ...alternating]);
    expect(s.slack.calls.filter((c) => c.method === "chat.startStream")).toHaveLength(7);
    expect(s.scheduler.metrics().queued).toBe(0);
  });

  it("routes every writer method through its method's budget", async () => {
    // 20× time: the 12 file tokens need a few seconds of refill otherwise.
    const s = await start({ users: [{ id: "U1", name: "ada", is_admin: true }] }, fastClock(20));
    const ts = await s.writer.post("C1", payload("hello"));
    await s.writer.update("C1", ts, payload("hello again"), { final: true });
    await s.writer.ephemeral("C1", "U1", "just for you", ts);
    await s.writer.react("C1", ts, "eyes");
    await s.writer.unreact("C1", ts, "eyes");
    const files = Array.from({ length: 12 }, (_, i) => ({
      filename: `f${i}.txt`,
      bytes: Buffer.from(`file ${i}`),
    }));
    await s.writer.upload("C1", ts, files);
    expect(await s.writer.sharedFileNames("C1", ts)).toEqual(new Set(files.map((f) => f.filename)));
    expect(await s.writer.join("C1")).toBe(true);
    expect(await s.writer.isAdmin("U1")).toBe(true);
    await s.writer.remove("C1", ts);

    expect(s.slack.validationErrors).toEqual([]);
    expect(s.slack.files().filter((f) => f.completed)).toHaveLength(12);
    expect(s.scheduler.metrics().calls).toEqual({
      "chat.postMessage": 1,
      "chat.update": 1,
      "chat.postEphemeral": 1,
      "reactions.add": 1,
      "reactions.remove": 1,
      // A token per file, then one batch of up to 10 files per completeUploadExternal.
      "files.getUploadURLExternal": 12,
      "files.completeUploadExternal": 2,
      "conversations.replies": 1,
      "conversations.join": 1,
      "users.info": 1,
      "chat.delete": 1,
    });
    const slackCalls = s.slack.calls.map((c) => c.method);
    expect(slackCalls.filter((m) => m === "files.getUploadURLExternal")).toHaveLength(12);
    expect(slackCalls.filter((m) => m === "files.completeUploadExternal")).toHaveLength(2);
  });
});
