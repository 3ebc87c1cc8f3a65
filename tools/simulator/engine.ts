/**
 * The simulated service's state: projects, threads and their runs (run.ts), open streams
 * (sse-stream.ts) and long-poll waiters, and what tests read of them.
 */
import { randomBytes } from "node:crypto";
import { type Directives, type FailSpec, mergeSticky } from "./directives.ts";
import { type GeneratedFile } from "./files.ts";
import {
  type EngineOptions,
  type GeneratedFileInfo,
  newId,
  type RequestInfo,
  type RunInfo,
  type ThreadInfo,
} from "./types.ts";
import { type Project, Run, type Thread } from "./run.ts";

export * from "./types.ts";
export { Run } from "./run.ts";
export type { Project, Thread } from "./run.ts";
export { SseStream } from "./stream/sse-stream.ts";

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
