/**
 * Burst scenarios: N tasks asked at the same moment in C channels of one workspace (a team
 * channel after a meeting), by `/task` or by mentioning the bot. Measures, per task, the time
 * from the request to the create at the service, to its first visible answer text and to its
 * final answer, whether its messages were posted in the order the requests arrived, and the
 * 429s. Slack's real budgets: about one post per second per channel.
 */
import { startSimulator } from "../tools/simulator/server.ts";
import { API_KEY, appEnv, SIGNING_SECRET, TEAM } from "../test/support/harness.ts";
import { type RecordedCall, startLocalSlack } from "../tools/local-slack/index.ts";
import { sendEvent, sendSlashCommand } from "../tools/local-slack/slack-requests.ts";
import { startAppProcess } from "./app-process.ts";
import { percentile } from "./measure.ts";
import {
  limitPostsPerChannel,
  POST_PER_CHANNEL_PER_MINUTE,
  SLACK_TIERS,
  shownMarkdown,
  statusOf,
} from "./scenario.ts";

export interface BurstOptions {
  readonly tasks: number;
  readonly channels: number;
  /** `/task` (the bot posts the prompt, then the answer) or a mention (the answer only). */
  readonly via: "command" | "mention";
  readonly answerLength: number;
  readonly timeoutMs: number;
  readonly progress: (line: string) => void;
  readonly appDir?: string | undefined;
}

interface Spread {
  readonly p50: number | undefined;
  readonly max: number | undefined;
}

export interface BurstResult {
  readonly tasks: number;
  readonly channels: number;
  readonly via: "command" | "mention";
  /** From each request to its create at the service. */
  readonly toCreate: Spread;
  readonly toFirstText: Spread;
  readonly toFinal: Spread;
  /** Pairs of tasks of one channel whose first messages were posted against arrival order. */
  readonly postInversions: number;
  /** The same, for the creates at the service (over the whole burst). */
  readonly createInversions: number;
  readonly rateLimited: number;
  readonly complete: number;
  readonly wallMs: number;
  readonly problems: readonly string[];
}

interface Track {
  readonly index: number;
  readonly channel: string;
  sentAt: number;
  createdAt?: number;
  /** The bot's first message for the task (the prompt for a command, the answer for a mention). */
  firstPostAt?: number;
  /** The thread the answer is in. */
  threadTs?: string;
  firstTextAt?: number;
  finalAt?: number;
}

const LABEL = /burst-(\d+)\b/;
const FINAL = /Completed in|Failed after|Stopped|:warning:/;
const USER = "U0BURST";
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const spread = (values: readonly number[]): Spread => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), max: sorted.at(-1) };
};

/** Pairs (i < j, by arrival) whose `at` came in the other order. */
function inversions(items: readonly { index: number; at: number }[]): number {
  let n = 0;
  for (const a of items) for (const b of items) if (a.index < b.index && a.at > b.at) n++;
  return n;
}

export async function runBurst(o: BurstOptions): Promise<BurstResult> {
  const problems: string[] = [];
  const sim = await startSimulator({
    apiKeys: [API_KEY],
    chunkChars: 24,
    answerLength: o.answerLength,
    chunkDelayMs: 40,
    maxThreads: 10_000,
    maxRequestLog: 1000,
  });
  const tiers = Object.fromEntries(
    Object.entries(SLACK_TIERS).map(([m, perMinute]) => [m, { perMinute }]),
  );
  // The person every task comes from: the app asks Slack who they are (users.info).
  const slack = await startLocalSlack({
    teamId: TEAM,
    users: [{ id: USER, name: "burst" }],
    tiers,
    defaultWaitTimeoutMs: 60_000,
  });
  const postLimited = limitPostsPerChannel(slack, POST_PER_CHANNEL_PER_MINUTE);
  const tracks: Track[] = Array.from({ length: o.tasks }, (_, index) => ({
    index,
    channel: `CBURST${index % o.channels}`,
    sentAt: 0,
  }));
  const byThread = new Map<string, Track>();
  sim.events.on("run", (info) => {
    const track = tracks[Number(LABEL.exec(info.promptText)?.[1] ?? -1)];
    if (track && track.createdAt === undefined) track.createdAt = Date.now();
  });
  let finals = 0;
  let allFinal = () => {};
  const allDone = new Promise<void>((resolve) => (allFinal = resolve));
  const onCall = (call: RecordedCall) => observe(call);
  /** Bot messages in a task's thread, to the task. */
  const byMessage = new Map<string, Track>();
  const observe = (call: RecordedCall) => {
    if (call.status !== 200 || !call.response.ok) return;
    const channel = str(call.args.channel) ?? "";
    let track: Track | undefined;
    if (call.method === "chat.postMessage") {
      const threadTs = str(call.args.thread_ts);
      if (threadTs === undefined) {
        // A command's prompt: it opens the task's thread.
        track = tracks[Number(LABEL.exec(JSON.stringify(call.args.blocks ?? ""))?.[1] ?? -1)];
        if (!track) return;
        track.threadTs = str(call.response.ts);
        byThread.set(`${channel}:${track.threadTs}`, track);
      } else {
        track = byThread.get(`${channel}:${threadTs}`);
        if (!track) return;
        byMessage.set(`${channel}:${str(call.response.ts)}`, track);
      }
      track.firstPostAt ??= call.at;
    } else if (call.method === "chat.update") {
      track = byMessage.get(`${channel}:${str(call.args.ts)}`);
    }
    if (!track?.threadTs) return;
    const opened = track.threadTs;
    const replies = slack
      .thread(channel, opened)
      .filter((m) => m.ts !== opened && m.user === slack.botUserId);
    if (track.firstTextAt === undefined && replies.some((m) => shownMarkdown(m) !== "")) {
      track.firstTextAt = call.at;
    }
    const status = replies.map(statusOf).findLast((s) => s !== "") ?? "";
    if (track.finalAt === undefined && FINAL.test(status)) {
      track.finalAt = call.at;
      if (++finals === o.tasks) allFinal();
    }
  };
  slack.on("call", onCall);
  const app = await startAppProcess(
    appEnv(sim, slack, {
      SLACK_EDIT_INTERVAL_MS: "1000",
      SLACK_RATE_LIMITS: "",
      LOG_LEVEL: "warn",
    }),
    { appDir: o.appDir },
  ).catch(async (err: unknown) => {
    await Promise.allSettled([sim.close(), slack.close()]);
    throw err;
  });
  const started = Date.now();
  let wallMs = 0;
  try {
    // One after the other, as fast as Slack delivers them: the arrival order is known.
    for (const track of tracks) await send(track);
    const outcome = await Promise.race([
      allDone.then(() => "ok" as const),
      new Promise<"timeout">((r) => setTimeout(() => r("timeout"), o.timeoutMs).unref()),
    ]);
    if (outcome === "timeout") problems.push(`timed out with ${finals}/${o.tasks} final`);
    wallMs = Date.now() - started;
  } finally {
    slack.off("call", onCall);
    await app.stop();
    await Promise.allSettled([sim.close(), slack.close()]);
  }
  return figures();

  async function send(track: Track): Promise<void> {
    const text = `burst-${track.index} Summarise the meeting [sim:length=${o.answerLength}]`;
    track.sentAt = Date.now();
    const res =
      o.via === "command"
        ? await sendSlashCommand(app.eventsUrl, SIGNING_SECRET, {
            text,
            team_id: TEAM,
            user_id: USER,
            channel_id: track.channel,
            response_url: slack.responseUrl(`burst-${track.index}`),
            trigger_id: `burst.${track.index}.${Date.now()}`,
          })
        : await mention(track, text);
    if (res.status !== 200) problems.push(`task ${track.index}: HTTP ${res.status}`);
  }

  function mention(track: Track, text: string) {
    const typed = `<@${slack.botUserId}> ${text}`;
    const ts = slack.addMessage({ channel: track.channel, user: USER, text: typed });
    track.threadTs = ts;
    byThread.set(`${track.channel}:${ts}`, track);
    return sendEvent(app.eventsUrl, SIGNING_SECRET, {
      event_id: `EvBurst${track.index}x${Date.now()}`,
      team_id: TEAM,
      event: { type: "app_mention", channel: track.channel, user: USER, text: typed, ts },
    });
  }

  function figures(): BurstResult {
    const since = (t: Track, at: number | undefined) => (at === undefined ? [] : [at - t.sentAt]);
    const missing = tracks.filter((t) => t.createdAt === undefined).length;
    if (missing > 0) problems.push(`${missing} tasks never reached the service`);
    let postInversions = 0;
    for (let c = 0; c < o.channels; c++) {
      const inChannel = tracks.filter((t) => t.channel === `CBURST${c}`);
      postInversions += inversions(
        inChannel.map((t) => ({ index: t.index, at: t.firstPostAt ?? Infinity })),
      );
    }
    return {
      tasks: o.tasks,
      channels: o.channels,
      via: o.via,
      toCreate: spread(tracks.flatMap((t) => since(t, t.createdAt))),
      toFirstText: spread(tracks.flatMap((t) => since(t, t.firstTextAt))),
      toFinal: spread(tracks.flatMap((t) => since(t, t.finalAt))),
      postInversions,
      createInversions: inversions(
        tracks.map((t) => ({ index: t.index, at: t.createdAt ?? Infinity })),
      ),
      rateLimited: slack.rateLimited + postLimited(),
      complete: tracks.filter((t) => t.finalAt !== undefined).length,
      wallMs,
      problems,
    };
  }
}

const sec = (ms: number | undefined) => (ms === undefined ? "–" : (ms / 1000).toFixed(1));

/** The burst table and its targets: create ≤ 2 s for all, order kept, 0 × 429, all complete. */
export function burstReport(results: readonly BurstResult[]): string {
  const head = [
    "burst",
    "to create p50 / max (s)",
    "to first text p50 / max (s)",
    "to final p50 / max (s)",
    "posted out of order",
    "429s",
    "complete",
    "verdict",
  ];
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  const rows = results.map((r) => {
    const pass =
      (r.toCreate.max ?? Infinity) <= 2000 &&
      r.postInversions === 0 &&
      r.rateLimited === 0 &&
      r.complete === r.tasks &&
      r.problems.length === 0;
    return line([
      `${r.tasks} ${r.via === "command" ? "/task" : "mentions"} in ${r.channels} channel${r.channels > 1 ? "s" : ""}`,
      `${sec(r.toCreate.p50)} / ${sec(r.toCreate.max)}`,
      `${sec(r.toFirstText.p50)} / ${sec(r.toFirstText.max)}`,
      `${sec(r.toFinal.p50)} / ${sec(r.toFinal.max)}`,
      `${r.postInversions} pairs (creates: ${r.createInversions})`,
      String(r.rateLimited),
      `${r.complete}/${r.tasks}`,
      pass ? "PASS" : `FAIL${r.problems.length > 0 ? ` (${r.problems.join("; ")})` : ""}`,
    ]);
  });
  return [
    "Bursts: every task asked at the same moment; targets: each reaches the service ≤ 2 s after it was asked, messages posted in arrival order within a channel, 0 × 429, all complete.",
    "",
    line(head),
    line(head.map(() => "---")),
    ...rows,
  ].join("\n");
}
