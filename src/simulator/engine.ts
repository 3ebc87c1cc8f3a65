/**
 * The simulated service's state and clock: projects, threads, agent runs driven by one timer
 * each (whether or not anyone listens), server-sent-event streams and long-poll waiters.
 */
import { randomBytes } from "node:crypto";
import type { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { extractCodeBlocks, generateAnswer, hashString, nextRandom } from "./answers.ts";
import {
  type Directives,
  type FailSpec,
  mergeSticky,
  type ReconnectMode,
  type StreamFormat,
} from "./directives.ts";
import { type GeneratedFile, generateFiles } from "./files.ts";
import type { UploadedFile } from "./form.ts";
import {
  contentJson,
  data,
  type EventRun,
  type FinalStatus,
  finalEvents,
  junk,
  KEEP_ALIVE,
  oddlySpelled,
  openingEvents,
} from "./sse.ts";

export type RunStatus = "running" | FinalStatus;

export interface EngineOptions {
  chunkDelayMs: number;
  chunkChars: number;
  answerLength: number;
  streamFormat: StreamFormat;
  reconnect: ReconnectMode;
  keepAliveMs: number;
  inlineLimitBytes: number;
  maxThreads: number;
  onChunk: ((runId: string, chunk: string, atMs: number) => void) | undefined;
  log: (line: string) => void;
  events: EventEmitter<SimulatorEvents>;
}

/** One request the simulator received (the API key is never recorded). */
export interface RequestRecord {
  method: string;
  path: string;
  /** Query parameters; values of names that look like secrets are redacted. */
  query: Record<string, string>;
  /** Epoch milliseconds when the request arrived. */
  at: number;
  /** HTTP status answered (set when the response is over). */
  status?: number;
  durationMs?: number;
}

/** Events of `Simulator.events`. */
export interface SimulatorEvents {
  /** A request was answered (or its connection closed). */
  request: [record: RequestRecord];
  /** A run started (task or follow-up). */
  run: [info: RunInfo];
  /** A content chunk was produced; `atMs` is epoch milliseconds with sub-ms precision. */
  chunk: [runId: string, chunk: string, atMs: number];
  /** A run ended (completed, failed or stopped). */
  runEnd: [info: RunInfo];
  /** A stream connection opened / closed (for any reason). */
  streamOpen: [runId: string];
  streamClose: [runId: string, reason: "ended" | "client" | "dropped" | "shutdown"];
}

/** The parsed body of a Create Task or Continue Conversation request. */
export interface RequestInfo {
  kind: "create" | "continue";
  prompt: string | undefined;
  agentId?: string | undefined;
  modelName?: string | undefined;
  enableThinking?: boolean;
  reasoningEffort?: "low" | "medium" | "high";
  enableContextManager?: boolean;
  source?: "web" | "mobile" | "widget" | undefined;
  /** The parsed `metadata` JSON. */
  metadata?: unknown;
  showInRecentTasks?: boolean;
  files: UploadedFile[];
  /** Names of file parts not named `files` (ignored). */
  ignoredFileFields: string[];
  /** Every text field as received. */
  rawFields: Record<string, string>;
}

export interface GeneratedFileInfo {
  fileId: string;
  name: string;
  path: string;
  type: string;
  size: number;
}

export interface RunInfo {
  id: string;
  threadId: string;
  projectId: string;
  /** 1 for the task's run, 2.. for follow-ups. */
  turn: number;
  followUp: boolean;
  status: RunStatus;
  /** The prompt as received (directives included). */
  prompt: string;
  /** The prompt without `[sim:...]` directives. */
  promptText: string;
  directives: Directives;
  directiveWarnings: string[];
  format: StreamFormat;
  reconnect: ReconnectMode;
  /** Content produced so far (the final answer once completed). */
  content: string;
  /** Length of the content the run will have produced when it ends normally. */
  finalLength: number;
  chunks: number;
  createdAt: number;
  endedAt: number | undefined;
  stoppedAt: number | undefined;
  error: string | undefined;
  request: RequestInfo;
  files: GeneratedFileInfo[];
  codeBlocks: number;
  streamsOpened: number;
  openStreams: number;
  pendingPolls: number;
}

export interface ThreadInfo {
  id: string;
  projectId: string;
  createdAt: number;
  runIds: string[];
  /** Created with `[sim:norun]`: the thread has no run. */
  noRun: boolean;
  request: RequestInfo;
  files: GeneratedFileInfo[];
}

export interface CodeBlockOut {
  language: string;
  code: string;
  file_path?: string;
}

export interface Project {
  id: string;
  threads: Set<string>;
}

export interface Thread {
  id: string;
  project: Project;
  createdAt: number;
  runs: Run[];
  sticky: Directives;
  files: GeneratedFile[];
  noRun: boolean;
  request: RequestInfo;
  /** `fail_continue` from the task prompt, with the number of follow-ups it already failed. */
  failContinue: { spec: FailSpec; used: number } | undefined;
}

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(9).toString("base64url")}`;
}

export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

const NON_ASCII = /[^\u0020-\u007e\n\t]/;
const STALL_AFTER_CHUNK = 3;
const NOISE_AFTER_CHUNK = 3;
const IDLE_TICKS_WHEN_EMPTY = 4;
const TOOL_NOISE = JSON.stringify({
  tool: "str_replace",
  args: { path: "/workspace/index.html", old_str: "<h1>", new_str: '<h1 class="title">' },
});

/** End of the chunk starting at `start` for random value `r`: never splits a surrogate pair. */
function chunkEnd(text: string, start: number, r: number, avg: number, limit: number): number {
  let end = Math.min(limit, start + 1 + Math.floor(r * (2 * avg - 1)));
  if (end < limit) {
    const code = text.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) end++;
  }
  return end;
}

export class Run implements EventRun {
  id: string;
  thread: Thread;
  turn: number;
  prompt: string;
  text: string;
  directives: Directives;
  warnings: string[];
  request: RequestInfo;
  messageId: string;
  userMessageId: string;
  createdAt: number;
  endedAt: number | undefined;
  stoppedAt: number | undefined;
  status: RunStatus = "running";
  error: string | undefined;
  /** The text the run produces when it completes. */
  answer: string;
  /** Where production stops: the answer's length, or the failure point of `run=fail`. */
  limit: number;
  pos = 0;
  chunks = 0;
  chunkSeed: number;
  chunkState: number;
  chunkChars: number;
  delayMs: number;
  format: StreamFormat;
  reconnect: ReconnectMode;
  keepAliveMs: number;
  malformed: boolean;
  codeBlocks: CodeBlockOut[];
  files: GeneratedFile[] = [];
  streams = new Set<SseStream>();
  waiters = new Set<() => void>();
  streamsOpened = 0;
  dropsLeft: number;
  dropAfter: number;
  pollFailures = 0;
  #idleTicks = 0;
  #timer: NodeJS.Timeout | undefined;
  #timerDelay = -1;
  #engine: Engine;

  constructor(
    engine: Engine,
    thread: Thread,
    parsed: { prompt: string; text: string; directives: Directives; warnings: string[] },
    request: RequestInfo,
  ) {
    const o = engine.options;
    this.#engine = engine;
    this.id = newId("run");
    this.thread = thread;
    this.turn = thread.runs.length + 1;
    this.prompt = parsed.prompt;
    this.text = parsed.text;
    const d = mergeSticky(thread.sticky, parsed.directives);
    this.directives = d;
    this.warnings = parsed.warnings;
    this.request = request;
    this.messageId = newId("msg");
    this.userMessageId = newId("msg");
    this.createdAt = nowMs();
    const seed = hashString(`${parsed.prompt}#${this.turn}`);
    const full = generateAnswer({
      prompt: parsed.text,
      seed,
      // `empty` still needs code blocks to carry the result.
      length:
        d.empty === true
          ? Math.max(d.length ?? o.answerLength, 1200)
          : (d.length ?? o.answerLength),
      turn: this.turn,
      mention: d.mention === true,
    });
    this.answer = d.empty === true ? "" : full;
    this.limit = d.runFail === true ? Math.floor(this.answer.length * 0.4) : this.answer.length;
    const folder = this.turn === 1 ? "output" : `output-${this.turn}`;
    this.codeBlocks = extractCodeBlocks(full).map((b, i) =>
      i % 2 === 1
        ? {
            ...b,
            file_path: `/workspace/${folder}/snippets/snippet-${i + 1}.${b.language || "txt"}`,
          }
        : b,
    );
    this.chunkSeed = seed ^ 0x5bd1e995;
    this.chunkState = this.chunkSeed;
    this.chunkChars = d.chunk ?? o.chunkChars;
    this.delayMs = d.delay ?? o.chunkDelayMs;
    this.format = d.format ?? o.streamFormat;
    this.reconnect = d.reconnect ?? o.reconnect;
    this.keepAliveMs = d.keepalive ?? o.keepAliveMs;
    this.malformed = d.malformed === true;
    this.dropsLeft = d.drops ?? (d.drop === undefined ? 0 : 1);
    this.dropAfter = d.drop ?? 3;
    this.#schedule(this.delayMs);
  }

  /** Content produced so far. */
  content(): string {
    return this.pos === this.answer.length ? this.answer : this.answer.slice(0, this.pos);
  }

  get folder(): string {
    return this.turn === 1 ? "output" : `output-${this.turn}`;
  }

  #schedule(ms: number): void {
    if (this.#timer !== undefined && this.#timerDelay === ms) {
      this.#timer.refresh();
      return;
    }
    clearTimeout(this.#timer);
    this.#timer = setTimeout(this.#tick, ms);
    this.#timerDelay = ms;
  }

  #tick = (): void => {
    if (this.status !== "running") return;
    if (this.pos >= this.limit) {
      if (this.limit === 0 && this.#idleTicks++ < IDLE_TICKS_WHEN_EMPTY) {
        this.#schedule(this.delayMs);
        return;
      }
      if (this.directives.runFail === true) {
        this.finish(
          "failed",
          "Agent execution failed: the sandbox process exited with code 137 (out of memory)",
        );
      } else {
        this.finish("completed", undefined);
      }
      return;
    }
    const [state, r] = nextRandom(this.chunkState);
    this.chunkState = state;
    const start = this.pos;
    this.pos = chunkEnd(this.answer, start, r, this.chunkChars, this.limit);
    this.chunks++;
    const delta = this.answer.slice(start, this.pos);
    const at = nowMs();
    this.#engine.options.onChunk?.(this.id, delta, at);
    this.#engine.options.events.emit("chunk", this.id, delta, at);
    if (this.streams.size > 0) {
      const json = contentJson(this.format, this, delta, this.chunks, at);
      const split = NON_ASCII.test(delta);
      for (const stream of this.streams) stream.content(json, split);
      if (this.directives.toolnoise === true && this.chunks === NOISE_AFTER_CHUNK) {
        const noise = contentJson(this.format, this, TOOL_NOISE, undefined, at);
        for (const stream of this.streams) stream.content(noise, false);
      }
    }
    const stall = this.directives.stall;
    this.#schedule(stall !== undefined && this.chunks === STALL_AFTER_CHUNK ? stall : this.delayMs);
  };

  /** Ends the run: final events to its streams, answers to its long polls. */
  finish(status: FinalStatus, error: string | undefined): void {
    if (this.status !== "running") return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.status = status;
    this.error = error;
    this.endedAt = nowMs();
    const engine = this.#engine;
    if (status === "stopped") this.stoppedAt = this.endedAt;
    if (status === "completed") {
      const d = this.directives;
      const count = d.empty === true ? Math.max(d.files ?? 0, 2) : (d.files ?? 0);
      this.files = generateFiles({
        threadId: this.thread.id,
        folder: this.folder,
        seed: (hashString(this.prompt) ^ this.turn) >>> 0,
        title: this.text.slice(0, 60) || "task",
        count,
        bigFileBytes: d.bigfile === true ? engine.options.inlineLimitBytes + 4096 : undefined,
        now: Date.now(),
      });
      this.thread.files.push(...this.files);
    }
    if (this.streams.size > 0) {
      const final =
        this.directives.nofinal === true
          ? ""
          : finalEvents(
              this.format,
              this,
              status,
              this.content(),
              this.chunks,
              error,
              this.chunkSeed >>> 0,
            );
      for (const stream of this.streams) stream.end(final);
    }
    for (const wake of this.waiters) wake();
    this.waiters.clear();
    engine.options.events.emit("runEnd", engine.runInfo(this));
    engine.options.log(
      `run ${this.id} ${status} after ${this.chunks} chunks (${this.pos} chars)${error === undefined ? "" : `: ${error}`}`,
    );
  }

  /** Stops timers without any event (simulator shutdown). */
  halt(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const wake of this.waiters) wake();
    this.waiters.clear();
    for (const stream of this.streams) stream.destroy("shutdown");
  }

  /** Calls `emit(chunkId, text)` for each chunk produced so far, as produced. */
  replay(emit: (chunkId: number, text: string) => boolean): void {
    let state = this.chunkSeed;
    let pos = 0;
    for (let id = 1; pos < this.pos; id++) {
      const [next, r] = nextRandom(state);
      state = next;
      const end = chunkEnd(this.answer, pos, r, this.chunkChars, this.pos);
      if (!emit(id, this.answer.slice(pos, end))) return;
      pos = end;
    }
  }

  /** Opens a `realtime=true` stream on this run (response headers already sent). */
  openStream(res: ServerResponse): void {
    const o = this.#engine.options;
    const replay = !(
      this.status === "running" &&
      this.reconnect === "continue" &&
      this.streamsOpened > 0
    );
    this.streamsOpened++;
    let dropAfter: number | undefined;
    if (this.dropsLeft > 0) {
      this.dropsLeft--;
      dropAfter = this.dropAfter;
    }
    const stream = new SseStream(res, this, dropAfter, o.events);
    o.events.emit("streamOpen", this.id);
    stream.write(openingEvents(this.format, this, this.status === "running"));
    if (this.malformed) stream.write(junk(8));
    if (replay) {
      this.replay((id, text) => {
        stream.content(contentJson(this.format, this, text, id, nowMs()), NON_ASCII.test(text));
        return !stream.closed;
      });
    }
    if (stream.closed) return;
    if (this.status !== "running") {
      stream.end(
        this.directives.nofinal === true
          ? ""
          : finalEvents(
              this.format,
              this,
              this.status,
              this.content(),
              this.chunks,
              this.error,
              this.chunkSeed >>> 0,
            ),
      );
      return;
    }
    this.streams.add(stream);
    stream.startKeepAlive(this.keepAliveMs);
  }
}

/** One `realtime=true` connection. */
export class SseStream {
  closed = false;
  #res: ServerResponse;
  #run: Run;
  #sent = 0;
  #dropAfter: number | undefined;
  #odd = 0;
  #junk = 0;
  #keepAlive: NodeJS.Timeout | undefined;
  #events: EventEmitter<SimulatorEvents>;

  constructor(
    res: ServerResponse,
    run: Run,
    dropAfter: number | undefined,
    events: EventEmitter<SimulatorEvents>,
  ) {
    this.#res = res;
    this.#run = run;
    this.#dropAfter = dropAfter;
    this.#events = events;
    res.on("close", () => {
      if (!this.closed) this.#close("client");
    });
    res.on("error", () => {}); // a write racing the client's hang-up; "close" follows
  }

  startKeepAlive(ms: number): void {
    if (ms > 0) this.#keepAlive = setInterval(() => this.write(KEEP_ALIVE), ms);
  }

  write(text: string): void {
    if (!this.closed && text !== "") this.#res.write(text);
  }

  /** Writes a content event; `split` writes it in two pieces cut inside a UTF-8 sequence. */
  content(json: string, split: boolean): void {
    if (this.closed) return;
    const malformed = this.#run.malformed;
    const line = malformed ? oddlySpelled(json, this.#odd) : data(json);
    if (this.#dropAfter !== undefined && this.#sent >= this.#dropAfter) {
      this.#drop(line);
      return;
    }
    this.#sent++;
    if (malformed && this.#odd++ % 3 === 2) this.#res.write(junk(this.#junk++));
    if (split) {
      const bytes = Buffer.from(line);
      let cut = 0;
      while (cut < bytes.length && (bytes[cut] ?? 0) < 0xc0) cut++;
      if (cut < bytes.length) {
        this.#res.write(bytes.subarray(0, cut + 1));
        this.#res.write(bytes.subarray(cut + 1));
        return;
      }
    }
    this.#res.write(line);
  }

  /** Writes the final events and closes the connection normally. */
  end(final: string): void {
    if (this.closed) return;
    if (final !== "") this.#res.write(final);
    this.#res.end();
    this.#close("ended");
  }

  /** Cuts the connection abruptly: half an event, then the socket is destroyed. */
  #drop(line: string): void {
    const bytes = Buffer.from(line);
    const socket = this.#res.socket;
    this.#close("dropped");
    this.#res.write(bytes.subarray(0, Math.max(1, bytes.length >> 1)), () => socket?.destroy());
    // If the write never flushes, still make sure the socket goes away.
    setImmediate(() => socket?.destroy());
  }

  destroy(reason: "shutdown"): void {
    if (this.closed) return;
    this.#close(reason);
    this.#res.socket?.destroy();
  }

  #close(reason: "ended" | "client" | "dropped" | "shutdown"): void {
    this.closed = true;
    clearInterval(this.#keepAlive);
    this.#keepAlive = undefined;
    this.#run.streams.delete(this);
    this.#events.emit("streamClose", this.#run.id, reason);
  }
}

export class Engine {
  options: EngineOptions;
  projects = new Map<string, Project>();
  threads = new Map<string, Thread>();
  runsById = new Map<string, Run>();
  /** Attempts per prompt for `fail_create=STATUSxK` / `fail_continue=STATUSxK`. */
  attempts = new Map<string, number>();
  downloads = new Map<string, { file: GeneratedFile; expiresAt: number }>();

  constructor(options: EngineOptions) {
    this.options = options;
  }

  createThread(request: RequestInfo, sticky: Directives, noRun: boolean): Thread {
    this.#evict();
    const project: Project = { id: newId("proj"), threads: new Set() };
    const thread: Thread = {
      id: newId("thr"),
      project,
      createdAt: Date.now(),
      runs: [],
      sticky,
      files: [],
      noRun,
      request,
      failContinue: undefined,
    };
    project.threads.add(thread.id);
    this.projects.set(project.id, project);
    this.threads.set(thread.id, thread);
    return thread;
  }

  startRun(
    thread: Thread,
    parsed: { prompt: string; text: string; directives: Directives; warnings: string[] },
    request: RequestInfo,
  ): Run {
    const run = new Run(this, thread, parsed, request);
    thread.runs.push(run);
    thread.sticky = mergeSticky(thread.sticky, parsed.directives);
    this.runsById.set(run.id, run);
    for (const w of parsed.warnings) this.options.log(`run ${run.id}: ${w}`);
    this.options.events.emit("run", this.runInfo(run));
    return run;
  }

  latestRun(thread: Thread): Run | undefined {
    return thread.runs[thread.runs.length - 1];
  }

  /** Counts an attempt of a `STATUSxK` fault; true when this attempt must fail. */
  shouldFail(spec: FailSpec, key: string): boolean {
    if (spec.times === undefined) return true;
    const n = this.attempts.get(key) ?? 0;
    this.attempts.set(key, n + 1);
    return n < spec.times;
  }

  downloadToken(file: GeneratedFile, ttlMs: number): { token: string; expiresAt: number } {
    const token = randomBytes(18).toString("base64url");
    const expiresAt = Date.now() + ttlMs;
    this.downloads.set(token, { file, expiresAt });
    return { token, expiresAt };
  }

  runInfo(run: Run): RunInfo {
    return {
      id: run.id,
      threadId: run.thread.id,
      projectId: run.thread.project.id,
      turn: run.turn,
      followUp: run.turn > 1,
      status: run.status,
      prompt: run.prompt,
      promptText: run.text,
      directives: run.directives,
      directiveWarnings: run.warnings,
      format: run.format,
      reconnect: run.reconnect,
      content: run.content(),
      finalLength: run.limit,
      chunks: run.chunks,
      createdAt: run.createdAt,
      endedAt: run.endedAt,
      stoppedAt: run.stoppedAt,
      error: run.error,
      request: run.request,
      files: run.files.map(fileInfo),
      codeBlocks: run.codeBlocks.length,
      streamsOpened: run.streamsOpened,
      openStreams: run.streams.size,
      pendingPolls: run.waiters.size,
    };
  }

  threadInfo(thread: Thread): ThreadInfo {
    return {
      id: thread.id,
      projectId: thread.project.id,
      createdAt: thread.createdAt,
      runIds: thread.runs.map((r) => r.id),
      noRun: thread.noRun,
      request: thread.request,
      files: thread.files.map(fileInfo),
    };
  }

  openStreams(): number {
    let n = 0;
    for (const run of this.runsById.values()) n += run.streams.size;
    return n;
  }

  pendingPolls(): number {
    let n = 0;
    for (const run of this.runsById.values()) n += run.waiters.size;
    return n;
  }

  shutdown(): void {
    for (const run of this.runsById.values()) run.halt();
  }

  /** Forgets the oldest threads without a running run once there are too many. */
  #evict(): void {
    if (this.threads.size < this.options.maxThreads) return;
    const target = Math.floor(this.options.maxThreads * 0.9);
    for (const thread of this.threads.values()) {
      if (this.threads.size <= target) break;
      if (thread.runs.some((r) => r.status === "running")) continue;
      this.threads.delete(thread.id);
      thread.project.threads.delete(thread.id);
      if (thread.project.threads.size === 0) this.projects.delete(thread.project.id);
      for (const run of thread.runs) this.runsById.delete(run.id);
    }
    const now = Date.now();
    for (const [token, entry] of this.downloads) {
      if (
        entry.expiresAt < now - 3_600_000 ||
        !this.threads.has(entry.file.fileId.split(":")[0] ?? "")
      ) {
        this.downloads.delete(token);
      }
    }
  }
}

function fileInfo(f: GeneratedFile): GeneratedFileInfo {
  return { fileId: f.fileId, name: f.name, path: f.path, type: f.type, size: f.content.length };
}
