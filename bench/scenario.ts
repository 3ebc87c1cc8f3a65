/**
 * One benchmark scenario: N concurrent `/task` runs in one workspace, against a fresh
 * simulator, a fresh local Slack that enforces the tier budgets, and a fresh app process.
 */
import { DEFAULT_BUDGETS } from "../src/slack/scheduler/index.ts";
import { startSimulator } from "../tools/simulator/server.ts";
import { API_KEY, appEnv, SIGNING_SECRET, TEAM } from "../test/support/harness.ts";
import {
  type LocalSlack,
  type RecordedCall,
  type SlackMessage,
  startLocalSlack,
} from "../tools/local-slack/index.ts";
import { sendSlashCommand } from "../tools/local-slack/slack-requests.ts";
import { type AppMetrics, startAppProcess } from "./app-process.ts";
import { type BucketUse, bucketUse } from "./budgets.ts";
import { chunkDelayOf } from "./shapes.ts";
import {
  type ChunkMark,
  chunkLags,
  comparable,
  countInWindows,
  peakOverlap,
  percentile,
  type VisibleMark,
  windowsWithAtLeast,
} from "./measure.ts";

/** Slack's tiers, calls per minute per workspace (slack-platform-facts.md). */
export const SLACK_TIERS: Readonly<Record<string, number>> = {
  "chat.update": 50, // Tier 3
  "chat.delete": 50,
  "reactions.add": 50,
  "reactions.remove": 50,
  "conversations.join": 50,
  "conversations.replies": 50,
  "chat.postEphemeral": 100, // Tier 4
  "files.getUploadURLExternal": 100,
  "files.completeUploadExternal": 100,
  "chat.appendStream": 100,
  "users.info": 100,
  "chat.startStream": 20, // Tier 2
  "chat.stopStream": 20,
  // Beyond one per second per channel (enforced per channel below), "several hundred
  // messages per minute" per workspace: the low end of that.
  "chat.postMessage": 300,
};
/** chat.postMessage: about one per second per channel (enforced per channel, see below). */
export const POST_PER_CHANNEL_PER_MINUTE = 60;
export const EDIT_TIER = 50;
/** Calls that put answer text into Slack (what an edit-per-chunk baseline would make). */
const TEXT_METHODS = new Set([
  "chat.update",
  "chat.postMessage",
  "chat.startStream",
  "chat.appendStream",
  "chat.stopStream",
]);
const FINAL_STATUS = /Completed in|Failed after|Stopped|:warning:/;
const STREAMING_RUNS = 5;
/** A shorter window says little about a per-minute rate (a burst of 3 alone can exceed it). */
const MIN_WINDOW_MS = 30_000;
const USER = "U0BENCH";

/** How the app streams answers (SLACK_STREAMING); `auto` is issue 24's. */
export type StreamingMode = "auto" | "edit" | "native";

export interface ScenarioOptions {
  readonly runs: number;
  /** Common factor of the local Slack's tiers and the app's budgets (1 = Slack's real tiers). */
  readonly scale: number;
  readonly answerLength: number;
  readonly chunkChars: number;
  /** Each run gets a fixed chunk delay in this range (ms). */
  readonly delayMs: readonly [number, number];
  readonly timeoutMs: number;
  /** `/task` requests in flight at once while the runs are started. */
  readonly sendConcurrency: number;
  /** When run `index` sends its `/task`, in ms from the scenario's start (default: at once). */
  readonly startOffsetMs?: ((index: number) => number) | undefined;
  readonly streaming: StreamingMode;
  /** More settings of the app's environment (`--app-env`). */
  readonly appEnv?: Readonly<Record<string, string>> | undefined;
  /** How long the local Slack keeps a native stream open (default: its five minutes). */
  readonly streamLifetimeMs?: number | undefined;
  /**
   * A person presses Slack's stop control on the first native stream this long after it
   * started (`stopped_by_user` from then on).
   */
  readonly userStopAfterMs?: number | undefined;
  /** Keep each run's shown text and the service's answer in the result (`answers`). */
  readonly keepText?: boolean | undefined;
  readonly progress: (line: string) => void;
  /** Write a V8 CPU profile of the app to this directory (`node --cpu-prof`). */
  readonly cpuProfileDir?: string | undefined;
  /** Run `src/main.ts` of another checkout (e.g. an exported commit) instead of this one. */
  readonly appDir?: string | undefined;
}

export interface ScenarioResult {
  readonly runs: number;
  readonly mode: StreamingMode;
  readonly scale: number;
  readonly wallMs: number;
  /** From the first `/task` to the last run's first chunk. */
  readonly startSpreadMs: number;
  readonly peakStreaming: number;
  readonly chunks: number;
  readonly lag: {
    readonly p50: number | undefined;
    readonly p95: number | undefined;
    readonly max: number | undefined;
    readonly count: number;
    readonly unseen: number;
  };
  /** Calls the local Slack received per run, by method (429-answered ones included). */
  readonly callsPerRun: Readonly<Record<string, number>>;
  readonly textCalls: number;
  /** One edit per chunk. */
  readonly baselineCalls: number;
  readonly rateLimited: { readonly slack: number; readonly app: number };
  /** chat.update use of the (scaled) tier while ≥ 5 runs stream. */
  readonly budget: {
    readonly windowMs: number;
    readonly updates: number;
    readonly share: number | undefined;
  };
  readonly cpuUsPerChunk: number | undefined;
  /** The app's user + system CPU time over the scenario (µs). */
  readonly cpuUs: number | undefined;
  readonly answerLength: number;
  readonly peakRssBytes: number | undefined;
  readonly complete: number;
  readonly problems: readonly string[];
  readonly appLagMs: { readonly mean: number | undefined; readonly max: number };
  /** Edits the app's scheduler dropped because a newer text of the message replaced them. */
  readonly superseded: number;
  /** CPU time of this (benchmark) process per wall second: simulator, local Slack, measuring. */
  readonly benchCpuShare: number;
  /** The app's scheduler: mean and max wait from queueing to the call, by method. */
  readonly queueWaitMs: Readonly<Record<string, { readonly mean: number; readonly max: number }>>;
  /** The bot's messages in each run's thread at the end (the channel message aside), mean. */
  readonly messagesPerAnswer: number;
  /** How each of Slack's text budgets was used (which one ran out). */
  readonly budgets: readonly BucketUse[];
  /** Failed calls by "method error" (e.g. "chat.appendStream message_not_in_streaming_state"). */
  readonly errors: Readonly<Record<string, number>>;
  /** With `keepText`: each run's thread text as shown, in order, and the service's answer. */
  readonly answers?: readonly { readonly shown: string; readonly content: string }[];
}

interface RunTrack {
  readonly index: number;
  readonly channel: string;
  simRunId: string | undefined;
  parentTs: string | undefined;
  readonly visible: VisibleMark[];
  final: boolean;
  /** When Slack received the call that showed the run as finished. */
  finalAt: number | undefined;
}

interface ChunkLog {
  text: string;
  readonly marks: ChunkMark[];
  firstAt: number | undefined;
  lastAt: number | undefined;
}

interface Block {
  type?: unknown;
  text?: unknown;
  elements?: unknown;
}

function blocksOf(m: SlackMessage): Block[] {
  return (m.blocks ?? []).filter((b): b is Block => typeof b === "object" && b !== null);
}

/** A stand-in the app shows where there is no answer text ("_Working on it…_"). */
const PLACEHOLDER = /^_[^_\n]+_$/;

/** The answer Markdown a bot message shows: its markdown blocks, or the streamed text. */
export function shownMarkdown(m: SlackMessage): string {
  const parts = blocksOf(m)
    .filter((b) => b.type === "markdown" && typeof b.text === "string")
    .map((b) => b.text as string)
    .filter((t) => !PLACEHOLDER.test(t.trim()));
  if (parts.length > 0) return parts.join("\n\n");
  return m.streaming_state !== undefined ? m.text : "";
}

/** The text of a message's last context block (the run's status line), or "". */
export function statusOf(m: SlackMessage): string {
  const context = blocksOf(m)
    .filter((b) => b.type === "context" && Array.isArray(b.elements))
    .at(-1);
  if (!context || !Array.isArray(context.elements)) return "";
  return context.elements
    .map((e: unknown) =>
      typeof e === "object" && e !== null && "text" in e && typeof e.text === "string"
        ? e.text
        : "",
    )
    .join(" ");
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const channelOf = (index: number) => `CB${String(index).padStart(5, "0")}`;
const LABEL = /bench-run-(\d+)\b/;

/**
 * The double's tiers are per method and workspace; chat.postMessage's limit is per channel:
 * a sliding minute per channel is enforced here. Returns the count of posts it refused.
 */
export function limitPostsPerChannel(slack: LocalSlack, perMinute: number): () => number {
  const postsByChannel = new Map<string, number[]>();
  let refused = 0;
  slack.failWhen(({ method, args }) => {
    if (method !== "chat.postMessage") return undefined;
    const channel = str(args.channel) ?? "";
    const now = Date.now();
    const window = (postsByChannel.get(channel) ?? []).filter((t) => t > now - 60_000);
    postsByChannel.set(channel, window);
    if (window.length >= perMinute) {
      refused++;
      const oldest = window[0] ?? now;
      return {
        error: "ratelimited",
        retryAfter: Math.max(1, Math.ceil((oldest + 60_000 - now) / 1000)),
      };
    }
    window.push(now);
    return undefined;
  });
  return () => refused;
}

/** Runs `fn` over `items` with at most `limit` at once. */
async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export async function runScenario(o: ScenarioOptions): Promise<ScenarioResult> {
  const problems: string[] = [];
  const chunkLogs = new Map<string, ChunkLog>();
  const sim = await startSimulator({
    apiKeys: [API_KEY],
    chunkChars: o.chunkChars,
    answerLength: o.answerLength,
    chunkDelayMs: o.delayMs[0],
    maxThreads: Math.max(10_000, o.runs * 2),
    maxRequestLog: 1000,
    onChunk: (runId, chunk, at) => {
      let log = chunkLogs.get(runId);
      if (!log) {
        log = { text: "", marks: [], firstAt: undefined, lastAt: undefined };
        chunkLogs.set(runId, log);
      }
      log.text += chunk;
      log.marks.push({ end: log.text.length, at });
      log.firstAt ??= at;
      log.lastAt = at;
    },
  });
  const tiers = Object.fromEntries(
    Object.entries(SLACK_TIERS).map(([m, perMinute]) => [m, { perMinute: perMinute * o.scale }]),
  );
  const slack = await startLocalSlack({
    teamId: TEAM,
    // The person every task comes from: the app asks Slack who they are (users.info).
    users: [{ id: USER, name: "bench" }],
    tiers,
    defaultWaitTimeoutMs: 60_000,
    ...(o.streamLifetimeMs === undefined ? {} : { streamLifetimeMs: o.streamLifetimeMs }),
  });
  const postLimited = limitPostsPerChannel(slack, POST_PER_CHANNEL_PER_MINUTE * o.scale);

  const tracks: RunTrack[] = Array.from({ length: o.runs }, (_, index) => ({
    index,
    channel: channelOf(index),
    simRunId: undefined,
    parentTs: undefined,
    visible: [],
    final: false,
    finalAt: undefined,
  }));
  const byChannel = new Map(tracks.map((t) => [t.channel, t]));
  const simEnded = new Map<string, { at: number; content: string; status: string }>();
  sim.events.on("run", (info) => {
    const index = Number(LABEL.exec(info.promptText)?.[1] ?? -1);
    const track = tracks[index];
    if (!track) return;
    track.simRunId = info.id;
  });
  sim.events.on("runEnd", (info) => {
    simEnded.set(info.id, {
      at: info.endedAt ?? Date.now(),
      content: info.content,
      status: info.status,
    });
  });

  const botReplies = (track: RunTrack): SlackMessage[] =>
    track.parentTs === undefined
      ? []
      : slack
          .thread(track.channel, track.parentTs)
          .filter((m) => m.ts !== track.parentTs && m.user === slack.botUserId);

  let finals = 0;
  let allFinal: () => void = () => {};
  const allFinalPromise = new Promise<void>((resolve) => {
    allFinal = resolve;
  });
  let scenarioStart = Infinity;
  const onCall = (call: RecordedCall) => {
    if (call.status !== 200 || !call.response.ok || !TEXT_METHODS.has(call.method)) return;
    const track = byChannel.get(str(call.args.channel) ?? "");
    if (!track) return;
    if (
      call.method === "chat.postMessage" &&
      call.args.thread_ts === undefined &&
      track.parentTs === undefined
    ) {
      track.parentTs = str(call.response.ts);
      return; // the channel message echoing the prompt
    }
    const replies = botReplies(track);
    const norm = comparable(replies.map(shownMarkdown).join("\n\n"));
    if (track.visible.at(-1)?.norm !== norm) track.visible.push({ at: call.at, norm });
    const status =
      [...replies]
        .reverse()
        .map(statusOf)
        .find((s) => s !== "") ?? "";
    if (!track.final && FINAL_STATUS.test(status)) {
      track.final = true;
      track.finalAt = call.at;
      if (++finals === o.runs) allFinal();
    }
  };
  slack.on("call", onCall);
  let userStop: NodeJS.Timeout | undefined;
  const stopFirstStream = (call: RecordedCall) => {
    if (call.method !== "chat.startStream" || !call.response.ok) return;
    slack.off("call", stopFirstStream);
    const channel = str(call.response.channel) ?? "";
    const ts = str(call.response.ts) ?? "";
    userStop = setTimeout(() => {
      if (slack.message(channel, ts)?.streaming_state !== "in_progress") return;
      slack.stopStreamByUser(channel, ts);
      o.progress(`  a person pressed stop on the stream ${ts}`);
    }, o.userStopAfterMs);
  };
  if (o.userStopAfterMs !== undefined) slack.on("call", stopFirstStream);

  const budgetEnv =
    o.scale === 1
      ? ""
      : JSON.stringify(
          Object.fromEntries(
            Object.entries(DEFAULT_BUDGETS).map(([m, b]) => [m, b.perMinute * o.scale]),
          ),
        );
  const app = await startAppProcess(
    appEnv(sim, slack, {
      SLACK_RATE_LIMITS: budgetEnv,
      SLACK_EDIT_INTERVAL_MS: "1000",
      SLACK_STREAMING: o.streaming,
      LOG_LEVEL: "warn",
      ...o.appEnv,
    }),
    { cpuProfileDir: o.cpuProfileDir, appDir: o.appDir },
  ).catch(async (err: unknown) => {
    await Promise.allSettled([sim.close(), slack.close()]);
    throw err;
  });

  let rssMax = 0;
  let cpuBefore: AppMetrics["process"]["cpu"] | undefined;
  let after: AppMetrics | undefined;
  let peakRss: number | undefined;
  let wallMs: number;
  let benchCpuBefore: NodeJS.CpuUsage | undefined;
  let benchCpuShare: number;
  let sampler: NodeJS.Timeout | undefined;
  const firstCall = slack.calls.length;
  try {
    cpuBefore = (await app.metrics()).process.cpu;
    scenarioStart = Date.now();
    benchCpuBefore = process.cpuUsage();
    let lastProgress = 0;
    // RSS fallback where /proc is missing (VmHWM is read at the end), and progress on stderr.
    // Every 5 s: polling /metrics costs the app CPU too.
    sampler = setInterval(() => {
      void app
        .metrics()
        .then((m) => {
          rssMax = Math.max(rssMax, m.process.rssBytes);
        })
        .catch(() => undefined);
      const now = Date.now();
      if (now - lastProgress >= 10_000) {
        lastProgress = now;
        const started = [...chunkLogs.keys()].length;
        let streaming = 0;
        for (const [id, log] of chunkLogs)
          if (log.firstAt !== undefined && !simEnded.has(id)) streaming++;
        o.progress(
          `  ${o.runs} runs, ${Math.round((now - scenarioStart) / 1000)} s: ${started} started, ${streaming} streaming, ${finals} final, ${slack.rateLimited + postLimited()} × 429`,
        );
      }
    }, 5000);

    const sendErrors: string[] = [];
    await pool(tracks, o.sendConcurrency, async (track) => {
      const wait = scenarioStart + (o.startOffsetMs?.(track.index) ?? 0) - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const delay = chunkDelayOf(track.index, o.delayMs);
      const prompt = `bench-run-${track.index} Write a status report on the migration [sim:length=${o.answerLength}] [sim:chunk=${o.chunkChars}] [sim:delay=${delay}]`;
      const res = await sendSlashCommand(app.eventsUrl, SIGNING_SECRET, {
        text: prompt,
        team_id: TEAM,
        user_id: USER,
        channel_id: track.channel,
        response_url: slack.responseUrl(`bench-${track.index}`),
        trigger_id: `bench.${track.index}.${Date.now()}`,
      }).catch((err: unknown) => ({ status: 0, body: String(err) }));
      if (res.status !== 200)
        sendErrors.push(`run ${track.index}: /task → ${res.status} ${res.body}`);
    });
    if (sendErrors.length > 0)
      problems.push(`${sendErrors.length} /task requests failed: ${sendErrors[0]}`);

    const deadline = Date.now() + o.timeoutMs;
    const outcome = await new Promise<"ok" | "timeout" | "died">((resolve) => {
      const done = (result: "ok" | "timeout" | "died") => {
        clearInterval(watch);
        resolve(result);
      };
      const watch = setInterval(() => {
        if (app.exited()) done("died");
        else if (Date.now() > deadline) done("timeout");
      }, 250);
      void allFinalPromise.then(() => done("ok"));
    });
    if (outcome === "timeout")
      problems.push(`timed out after ${o.timeoutMs / 1000} s with ${finals}/${o.runs} runs final`);
    if (outcome === "died") problems.push(`the app exited: ${app.output.join("").slice(-2000)}`);
    wallMs = Date.now() - scenarioStart;
    const benchCpu = process.cpuUsage(benchCpuBefore);
    benchCpuShare = (benchCpu.user + benchCpu.system) / 1000 / Math.max(1, wallMs);
    // Calls that follow a final edit (surplus messages removed) still count.
    if (outcome === "ok") await new Promise((r) => setTimeout(r, 1500));
    if (!app.exited()) {
      after = await app.metrics();
      rssMax = Math.max(rssMax, after.process.rssBytes);
      peakRss = app.peakRssBytes();
    }
  } finally {
    if (sampler) clearInterval(sampler);
    if (userStop) clearTimeout(userStop);
    slack.off("call", onCall);
    slack.off("call", stopFirstStream);
    await app.stop();
    await Promise.allSettled([sim.close(), slack.close()]);
  }

  // ---- figures ----------------------------------------------------------------------------
  const calls = slack.calls.slice(firstCall);
  const callCounts: Record<string, number> = {};
  for (const c of calls) callCounts[c.method] = (callCounts[c.method] ?? 0) + 1;
  const callsPerRun = Object.fromEntries(
    Object.entries(callCounts)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([m, n]) => [m, n / o.runs]),
  );
  const textCalls = calls.filter((c) => TEXT_METHODS.has(c.method)).length;
  const errors: Record<string, number> = {};
  for (const c of calls) {
    if (c.response.ok) continue;
    const key = `${c.method} ${String(c.response.error)}`;
    errors[key] = (errors[key] ?? 0) + 1;
  }

  const lags: number[] = [];
  let unseen = 0;
  let chunks = 0;
  let complete = 0;
  let botMessages = 0;
  const answers: { shown: string; content: string }[] = [];
  const intervals: [number, number][] = [];
  let lastFirstChunk = scenarioStart;
  const incomplete: string[] = [];
  for (const track of tracks) {
    const log = track.simRunId === undefined ? undefined : chunkLogs.get(track.simRunId);
    const ended = track.simRunId === undefined ? undefined : simEnded.get(track.simRunId);
    if (!log || !ended) {
      incomplete.push(`run ${track.index}: ${track.simRunId ? "did not end" : "never started"}`);
      continue;
    }
    chunks += log.marks.length;
    if (log.firstAt !== undefined) {
      // Active from its first chunk until Slack shows it finished: a run whose stream has ended
      // but whose final text is not shown yet still needs the edit budget.
      intervals.push([
        log.firstAt,
        Math.max(ended.at, log.lastAt ?? ended.at, track.finalAt ?? ended.at),
      ]);
      lastFirstChunk = Math.max(lastFirstChunk, log.firstAt);
    }
    if (log.text !== ended.content) problems.push(`run ${track.index}: chunks ≠ service content`);
    const r = chunkLags(ended.content, log.marks, track.visible);
    lags.push(...r.lags);
    unseen += r.unseen;
    const replies = botReplies(track);
    botMessages += replies.length;
    const shownText = replies.map(shownMarkdown).join("\n\n");
    if (o.keepText) answers.push({ shown: shownText, content: ended.content });
    const shown = comparable(shownText);
    const status =
      [...replies]
        .reverse()
        .map(statusOf)
        .find((s) => s !== "") ?? "";
    if (shown === comparable(ended.content) && /Completed in/.test(status)) complete++;
    else {
      incomplete.push(
        `run ${track.index}: ${shown === comparable(ended.content) ? "text ok" : `text differs (${shown.length} vs ${comparable(ended.content).length} chars)`}, status "${status}"`,
      );
    }
  }
  if (incomplete.length > 0) {
    problems.push(`${incomplete.length} incomplete: ${incomplete.slice(0, 3).join("; ")}`);
  }
  lags.sort((a, b) => a - b);

  const windows = windowsWithAtLeast(intervals, STREAMING_RUNS);
  const windowMs = windows.reduce((s, [a, b]) => s + (b - a), 0);
  const updates = countInWindows(
    calls.filter((c) => c.method === "chat.update" && c.status === 200).map((c) => c.at),
    windows,
  );
  const share =
    windowMs >= MIN_WINDOW_MS ? updates / (windowMs / 60_000) / (EDIT_TIER * o.scale) : undefined;

  const cpuAfter = after?.process.cpu;
  const cpuUs =
    cpuBefore && cpuAfter
      ? cpuAfter.user + cpuAfter.system - (cpuBefore.user + cpuBefore.system)
      : undefined;
  const sum = (r: Record<string, number> | undefined) =>
    Object.values(r ?? {}).reduce((s, n) => s + n, 0);
  const appLag = after?.relay.lagMs;
  const queueWaitMs = Object.fromEntries(
    Object.entries(after?.slack.queueWait ?? {}).map(([m, w]) => [
      m,
      { mean: w.count > 0 ? w.sumMs / w.count : 0, max: w.maxMs },
    ]),
  );

  return {
    runs: o.runs,
    mode: o.streaming,
    scale: o.scale,
    wallMs,
    startSpreadMs: lastFirstChunk - scenarioStart,
    peakStreaming: peakOverlap(intervals),
    chunks,
    lag: {
      p50: percentile(lags, 50),
      p95: percentile(lags, 95),
      max: lags.at(-1),
      count: lags.length,
      unseen,
    },
    callsPerRun,
    textCalls,
    baselineCalls: chunks,
    rateLimited: { slack: slack.rateLimited + postLimited(), app: sum(after?.slack.rateLimited) },
    budget: { windowMs, updates, share },
    cpuUsPerChunk: cpuUs !== undefined && chunks > 0 ? cpuUs / chunks : undefined,
    cpuUs,
    answerLength: o.answerLength,
    peakRssBytes: peakRss ?? (rssMax > 0 ? rssMax : undefined),
    complete,
    problems,
    appLagMs: {
      mean: appLag && appLag.count > 0 ? appLag.sum / appLag.count : undefined,
      max: appLag?.max ?? 0,
    },
    superseded: after?.slack.superseded ?? 0,
    benchCpuShare,
    queueWaitMs,
    messagesPerAnswer: botMessages / o.runs,
    budgets: bucketUse(calls, o.scale, queueWaitMs),
    errors,
    ...(o.keepText ? { answers } : {}),
  };
}
