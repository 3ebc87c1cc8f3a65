/**
 * One simulated agent run: its answer produced chunk by chunk on its own timer (whether or not
 * anyone listens), its faults (drops, stalls, noise), its end, and its live streams.
 */
import type { ServerResponse } from "node:http";
import {
  extractCodeBlocks,
  generateAnswer,
  hashString,
  hostileAnswer,
  inJapanese,
  nextRandom,
} from "./answers.ts";
import {
  type Directives,
  type FailSpec,
  HOSTILE_UNITS,
  mergeSticky,
  type ReconnectMode,
  type StreamFormat,
} from "./directives.ts";
import { type GeneratedFile, generateFiles } from "./files.ts";
import {
  contentJson,
  type EventRun,
  type FinalStatus,
  finalEvents,
  junk,
  openingEvents,
} from "./stream/sse.ts";
import {
  type CodeBlockOut,
  type EngineOptions,
  newId,
  nowMs,
  type RequestInfo,
  type RunInfo,
  type RunStatus,
} from "./types.ts";
import { endlessEvent, SseStream } from "./stream/sse-stream.ts";

const NON_ASCII = /[^\u0020-\u007e\n\t]/;
const STALL_AFTER_CHUNK = 3;
const NOISE_AFTER_CHUNK = 3;
const IDLE_TICKS_WHEN_EMPTY = 4;
const TOOL_NOISE = JSON.stringify({
  tool: "str_replace",
  args: { path: "/workspace/index.html", old_str: "<h1>", new_str: '<h1 class="title">' },
});

/**
 * End of the chunk starting at `start` for random value `r`: never splits a surrogate pair.
 * `codeAt` reads the answer's code unit at a position.
 */
function chunkEnd(
  codeAt: (at: number) => number,
  start: number,
  r: number,
  avg: number,
  limit: number,
): number {
  let end = Math.min(limit, start + 1 + Math.floor(r * (2 * avg - 1)));
  if (end < limit) {
    const code = codeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) end++;
  }
  return end;
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

/** What a run needs of the engine that holds it (the Engine, structurally). */
export interface RunHost {
  readonly options: EngineOptions;
  runInfo(run: Run): RunInfo;
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
  #engine: RunHost;

  constructor(
    engine: RunHost,
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
    const full = d.hostile
      ? hostileAnswer(HOSTILE_UNITS[d.hostile], d.length ?? o.answerLength)
      : generateAnswer({
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
    this.answer = d.empty === true ? "" : d.lang === "ja" ? inJapanese(full) : full;
    // A runaway run says its answer again and again, and never ends on its own.
    this.limit =
      d.abuse === "runaway" && this.answer !== ""
        ? Number.POSITIVE_INFINITY
        : d.runFail === true
          ? Math.floor(this.answer.length * 0.4)
          : this.answer.length;
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
    return this.pos === this.answer.length ? this.answer : this.slice(0, this.pos);
  }

  /** The answer from `start` to `end`; a runaway run's repeats its answer without end. */
  slice(start: number, end: number): string {
    const n = this.answer.length;
    if (end <= n) return this.answer.slice(start, end);
    let out = "";
    for (let at = start; at < end;) {
      const i = at % n;
      const take = Math.min(end - at, n - i);
      out += this.answer.slice(i, i + take);
      at += take;
    }
    return out;
  }

  readonly #codeAt = (at: number): number => this.answer.charCodeAt(at % this.answer.length);

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
    this.pos = chunkEnd(this.#codeAt, start, r, this.chunkChars, this.limit);
    this.chunks++;
    const delta = this.slice(start, this.pos);
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
        huge: d.bigfiles,
        site: d.site,
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
      const end = chunkEnd(this.#codeAt, pos, r, this.chunkChars, this.pos);
      if (!emit(id, this.slice(pos, end))) return;
      pos = end;
    }
  }

  /** Opens a `realtime=true` stream on this run (response headers already sent). */
  openStream(res: ServerResponse): void {
    const o = this.#engine.options;
    if (this.directives.abuse === "comments") {
      this.streamsOpened++;
      endlessEvent(res);
      return;
    }
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
