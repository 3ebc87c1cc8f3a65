/**
 * Following a run: streams it (`realtime=true`), reconnects after drops, long-polls when streaming
 * is refused or keeps failing, and ends with the result (files and code blocks are not streamed).
 */
import { setTimeout as delay } from "node:timers/promises";
import { formatBytes } from "../util/bytes.ts";
import { owned } from "../util/text.ts";
import type { CallOptions, TaskService, ThreadRef } from "./client.ts";
import { TaskServiceError } from "./errors.ts";
import type { CodeBlock, ResultFile, TaskResult } from "./schemas.ts";
import { isFinalStatus } from "./schemas.ts";
import { TextReconciler } from "./reconciler.ts";
import type { StreamRefusals } from "./refusals.ts";
import type { StreamEvent } from "./stream.ts";

export type RunUpdate =
  | { readonly type: "delta"; readonly text: string }
  | { readonly type: "status"; readonly status: string }
  /** A step of the agent's work (a tool it ran), for progress: never part of the text. */
  | { readonly type: "step"; readonly title: string }
  /** How the run is followed changed (logs and metrics only). */
  | { readonly type: "transport"; readonly mode: "stream" | "poll"; readonly reason: string };

export interface FinalRun {
  readonly agentRunId: string | undefined;
  readonly status: string;
  /** The result's text, else the streamed one. */
  readonly text: string;
  readonly streamedText: string;
  readonly messageId: string | undefined;
  readonly codeBlocks: readonly CodeBlock[];
  readonly files: readonly ResultFile[];
  readonly errorMessage: string | undefined;
}

export interface FollowOptions {
  signal?: AbortSignal;
  /** Long-poll `timeout` in seconds (default 30). */
  pollTimeoutS?: number;
  /** Backoff before reconnecting, doubled each time (default 250 ms, at most 8 s). */
  reconnectDelayMs?: number;
  /** Files per page of the final result (default 100). */
  filePageSize?: number;
  /** Text an earlier follower of this run showed: only what comes after is yielded. */
  resumeText?: string;
  refusals?: StreamRefusals;
  /** Past it following ends with a `too_large` TaskServiceError (what was yielded is kept). */
  textBudget?: TextBudget;
  /** [0, 1) for the reconnection jitter (default Math.random). */
  random?: () => number;
}

/** The memory a run's text may take (its UTF-8 bytes), asked before each piece is kept. */
export interface TextBudget {
  readonly maxBytes: number;
  /** Takes `bytes` more for the text; false (nothing taken) when it may not grow so. */
  grow(bytes: number): boolean;
}

/** Throws `too_large` when `bytes` pass the budget (`grow`: asks it for them, else compares). */
function checkBudget(budget: TextBudget | undefined, bytes: number, grow = false): void {
  if (!budget || (grow ? budget.grow(bytes) : bytes <= budget.maxBytes)) return;
  throw new TaskServiceError({
    kind: "too_large",
    limit: "answer",
    message: `The answer passed ${formatBytes(budget.maxBytes)}, the most this app keeps of one answer.`,
  });
}

const transport = (mode: "stream" | "poll", reason: string) =>
  ({ type: "transport", mode, reason }) as const;

/**
 * Whether opening the stream was refused "not this way" (400, 404, 405, 406, 415, 422, 501, a 200
 * that is no event stream…): polling may still work. 401, 402 and 403 end the run; 429, 5xx and
 * network failures are drops.
 */
const isRefusal = (err: unknown) =>
  err instanceof TaskServiceError &&
  (!err.transient || err.status === 501) &&
  !["auth", "credits", "forbidden", "too_large"].includes(err.kind);

/** The most of a failed run's reason kept (shown in a line under the answer). */
const ERROR_MAX = 2000;

function errorMessageOf(result: TaskResult): string | undefined {
  const e = result.error as string | { message?: unknown; detail?: unknown } | null | undefined;
  const m = typeof e === "string" ? e : (e?.message ?? e?.detail);
  if (typeof m !== "string" || m === "") return undefined;
  // A string of its own: a slice would keep all of the service's text alive with the reason.
  return m.length <= ERROR_MAX
    ? m
    : owned(`${m.slice(0, ERROR_MAX).replace(/[\uD800-\uDBFF]$/, "")}…`);
}

export async function* followRun(
  service: TaskService,
  ref: ThreadRef & { readonly agentRunId?: string },
  options: FollowOptions = {},
): AsyncGenerator<RunUpdate, FinalRun, undefined> {
  const { signal } = options;
  const run: Follower = {
    service,
    ref,
    options,
    call: signal ? { signal } : {},
    text: new TextReconciler(options.resumeText),
    status: "running",
  };
  const refusedLately = options.refusals?.isRefused(ref.threadId) === true;
  if (refusedLately) yield transport("poll", "the stream was refused lately on this thread");
  if (refusedLately || (yield* streamRun(run)) === "poll") yield* pollRun(run);

  const final = await fetchFinal(run);
  // Nor may the final text (or the code blocks standing for an empty one) pass the budget.
  checkBudget(options.textBudget, finalBytes(final));
  // Whatever the stream did not show (held back, or never streamed) comes from the result.
  yield* delta(run, run.text.snapshot(final.text));
  // A stream can end without naming a status (minimal shape's finish): report the final one.
  yield* setStatus(run, final.status);
  return final;
}

/** What following one run shares between its phases. */
interface Follower {
  readonly service: TaskService;
  readonly ref: ThreadRef & { readonly agentRunId?: string };
  readonly options: FollowOptions;
  readonly call: CallOptions;
  readonly text: TextReconciler;
  /** The last one reported. */
  status: string;
}

/** Text to show, asked of the text budget first. */
function* delta(run: Follower, text: string): Generator<RunUpdate> {
  if (text === "") return;
  checkBudget(run.options.textBudget, Buffer.byteLength(text, "utf8"), true);
  yield { type: "delta", text };
}

function* setStatus(run: Follower, next: string): Generator<RunUpdate> {
  if (next !== run.status) {
    run.status = next;
    yield { type: "status", status: next };
  }
}

/** Streams, reconnecting after drops: "done" once the run is over, "poll" when streaming fails. */
async function* streamRun(run: Follower): AsyncGenerator<RunUpdate, "done" | "poll", undefined> {
  const { service, ref, options, text } = run;
  const baseDelay = options.reconnectDelayMs ?? 250;
  const random = options.random ?? Math.random;
  let failures = 0;
  for (;;) {
    options.signal?.throwIfAborted();
    const outcome = yield* readStream(run);
    if (outcome === "refused") return "poll";
    if (outcome === "ended") return "done";
    // The connection closed without a final status: ask where the run is.
    const now = await service.getTaskResult(ref, { timeout: 0 }, run.call);
    // Fill what was produced while disconnected: a server that continues will not resend it.
    yield* delta(run, text.snapshot(now.response.content));
    if (sameRun(ref, now) && isFinalStatus(now.status)) {
      yield* setStatus(run, now.status);
      return "done";
    }
    failures++;
    if (failures > MAX_RECONNECTS) {
      yield transport("poll", `stream dropped ${failures} times`);
      return "poll";
    }
    yield transport("stream", `stream dropped; reconnecting (${failures})`);
    await delay(reconnectDelay(baseDelay, failures, random), undefined, run.call);
  }
}

/**
 * The wait before reconnection `failures` (from 1): doubling from `base` up to 8 s, drawn from its
 * upper half ("equal jitter") so runs dropped by one service blip do not return at once.
 */
export function reconnectDelay(base: number, failures: number, random: () => number): number {
  const backoff = Math.min(base * 2 ** (failures - 1), MAX_RECONNECT_DELAY_MS);
  return backoff / 2 + random() * (backoff / 2);
}

const MAX_RECONNECT_DELAY_MS = 8000;
/** Reconnections of a dropped stream before following falls back to polling. */
const MAX_RECONNECTS = 5;

/** One connection to the stream: how it ended (the run's end, a refusal, or a drop). */
async function* readStream(
  run: Follower,
): AsyncGenerator<RunUpdate, "ended" | "refused" | "dropped", undefined> {
  const { service, ref, options, text } = run;
  text.newConnection();
  let ended = false;
  let received = 0;
  try {
    for await (const ev of service.streamTaskResult(ref, run.call) as AsyncIterable<StreamEvent>) {
      received++;
      if (ev.type === "delta") {
        yield* delta(run, text.delta(ev.text, ev.seq));
        // Nor may a connection's text the reconciler holds, not yet placed, pass the budget.
        checkBudget(options.textBudget, text.connectionChars);
        if (text.needsSnapshot) {
          // A reconnection skipped what was produced meanwhile: place it using the result so far.
          const now = await service.getTaskResult(ref, { timeout: 0 }, run.call);
          yield* delta(run, text.snapshot(now.response.content));
        }
      } else if (ev.type === "snapshot") {
        yield* delta(run, text.snapshot(ev.text));
      } else if (ev.type === "status") {
        yield* setStatus(run, ev.status);
        if (isFinalStatus(ev.status)) ended = true;
      } else if (ev.type === "step") {
        yield ev;
      } else {
        ended = true;
      }
    }
  } catch (err) {
    options.signal?.throwIfAborted();
    if (isRefusal(err) && received === 0) {
      options.refusals?.refused(ref.threadId);
      yield transport("poll", `stream refused: ${(err as Error).message}`);
      return "refused";
    }
    // A transient failure is a drop: the caller asks whether the run is still going.
    if (!(err instanceof TaskServiceError) || !err.transient) throw err;
  }
  return ended ? "ended" : "dropped";
}

/** Long polls until the run is over (or the answers keep being about another run). */
async function* pollRun(run: Follower): AsyncGenerator<RunUpdate, void, undefined> {
  const { service, ref, options } = run;
  const pollTimeoutS = options.pollTimeoutS ?? 30;
  let mismatches = 0;
  let quick = 0;
  for (;;) {
    const asked = Date.now();
    const r = await service.getTaskResult(ref, { timeout: pollTimeoutS }, run.call);
    if (!sameRun(ref, r)) {
      // Not this run (yet, or any more): fetchFinal sorts out which.
      if (++mismatches > FINAL_ATTEMPTS) break;
      await delay(FINAL_RETRY_MS, undefined, run.call);
      continue;
    }
    yield* delta(run, run.text.snapshot(r.response.content));
    yield* setStatus(run, r.status);
    if (isFinalStatus(r.status)) break;
    // A service that answers a long poll at once (ignoring `timeout`) must not be asked in a
    // tight loop: at least a second between polls, backing off to 10 s while it keeps doing so.
    const waited = Date.now() - asked;
    quick = waited < MIN_POLL_INTERVAL_MS ? quick + 1 : 0;
    if (quick > 0) {
      const pause = Math.min(MIN_POLL_INTERVAL_MS * 2 ** (quick - 1), MAX_POLL_BACKOFF_MS);
      await delay(pause - Math.min(waited, pause), undefined, run.call);
    }
  }
}

/** The end state: text, code blocks and every page of files, without their content. */
async function fetchFinal(run: Follower): Promise<FinalRun> {
  const { ref, options } = run;
  const streamedText = run.text.text;
  // The result endpoint may lag behind the stream (still "running", or still the previous
  // run right after a follow-up): wait for this run's final state, within bounds.
  let first = await resultPage(run, 1, 0);
  for (let attempt = 1; attempt <= FINAL_ATTEMPTS; attempt++) {
    if (sameRun(ref, first) && isFinalStatus(first.status)) break;
    if (attempt === FINAL_ATTEMPTS) {
      if (!sameRun(ref, first)) {
        // Another run has taken the conversation over: this one is over, with what it showed.
        return {
          agentRunId: ref.agentRunId,
          status: "superseded",
          text: streamedText,
          streamedText,
          messageId: undefined,
          codeBlocks: [],
          files: [],
          errorMessage:
            "another run on the same conversation took over before this one reported its end",
        };
      }
      break;
    }
    await delay(FINAL_RETRY_MS, undefined, run.call);
    first = await resultPage(run, 1, Math.min(options.pollTimeoutS ?? 30, 10));
  }
  const files = await allFiles(run, first);
  const content = first.response.content;
  const text = content !== "" ? content : streamedText;
  return {
    agentRunId: first.agent_run_id ?? ref.agentRunId,
    status: first.status,
    text,
    streamedText,
    messageId: first.response.message_id ?? undefined,
    // Code blocks stand for an empty answer only: otherwise they are in its text already.
    codeBlocks: text.trim() === "" ? first.code_blocks : [],
    files,
    errorMessage: errorMessageOf(first),
  };
}

const resultPage = (run: Follower, page: number, timeout: number) =>
  run.service.getTaskResult(
    run.ref,
    { timeout, includeFileContent: false, page, pageSize: run.options.filePageSize ?? 100 },
    run.call,
  );

/** The result's files, page after page: bounded, and stopped by a page adding nothing. */
async function allFiles(run: Follower, first: TaskResult): Promise<ResultFile[]> {
  const files = first.files.slice(0, MAX_FILES);
  const seen = new Set(files.map((f) => f.file_id));
  for (
    let page = 2;
    page <= MAX_FILE_PAGES && files.length < MAX_FILES && hasMore(first, page - 1, files.length);
    page++
  ) {
    const next = await resultPage(run, page, 0);
    const fresh = next.files.filter((f) => !seen.has(f.file_id));
    if (fresh.length === 0) break;
    for (const f of fresh.slice(0, MAX_FILES - files.length)) {
      seen.add(f.file_id);
      files.push(f);
    }
    if (next.pagination?.has_next === false) break;
  }
  return files;
}

/** The bytes of the run's answer: its text, or its code blocks when it has none. */
function finalBytes(final: FinalRun): number {
  if (final.text.trim() !== "") return Buffer.byteLength(final.text, "utf8");
  return final.codeBlocks.reduce((n, b) => n + Buffer.byteLength(b.code, "utf8") + 16, 0);
}

/** Whether a result is about the run being followed (the endpoint answers for the thread). */
function sameRun(ref: { readonly agentRunId?: string }, result: TaskResult): boolean {
  return !ref.agentRunId || !result.agent_run_id || result.agent_run_id === ref.agentRunId;
}

const FINAL_ATTEMPTS = 6;
const MIN_POLL_INTERVAL_MS = 1000;
const MAX_POLL_BACKOFF_MS = 10_000;
const FINAL_RETRY_MS = 500;
const MAX_FILE_PAGES = 50;
/** The most files of a result kept (their names, sizes and places: never their content). */
const MAX_FILES = 1000;

function hasMore(first: TaskResult, page: number, have: number): boolean {
  const p = first.pagination;
  if (!p) return false;
  if (p.total_pages !== undefined) return page < p.total_pages;
  if (p.total_items !== undefined) return have < p.total_items;
  return p.has_next === true;
}
