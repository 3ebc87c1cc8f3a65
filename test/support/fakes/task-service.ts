/**
 * The task service for unit tests. Every task and follow-up gets fresh ids (`thr_n`, `run_n`);
 * prompts, options and uploaded files are kept in order. The stream of the run being followed
 * is a list of events the test releases step by step (`emit`, `close`), and the task result is
 * what the test says (`final`, or just its `status` and `files`). Stopping records the thread and ends the
 * stream with a stopped status, as the service does.
 */
import type { TaskService } from "../../../src/runs/ports.ts";
import type { UploadFile } from "../../../src/service/multipart.ts";
import type { ResultFile, StopResponse, TaskResult } from "../../../src/service/schemas.ts";
import type { StreamEvent } from "../../../src/service/stream.ts";
import { TaskServiceError } from "../../../src/service/errors.ts";

/** A file of the result as the service holds it: what it is, and its content. */
export type FakeFile = ResultFile & { content?: string | null; encoding?: string | null };

/** What the task result says. */
export interface ScriptedRun {
  status: string;
  content: string;
  files?: FakeFile[];
  error?: string;
}

export class FakeTaskService implements TaskService {
  /** Each create and continue call's prompt, in order. */
  readonly prompts: string[] = [];
  /** Every create call's input, for the options it carried. */
  readonly created: Parameters<TaskService["createTask"]>[0][] = [];
  /** The files each create or continue call sent, read whole: name → bytes. */
  readonly uploads: Array<Map<string, Buffer>> = [];
  /** The threads whose run was asked to stop, in order. */
  readonly stopped: string[] = [];
  /** What getTaskResult answers, for every thread. */
  final: ScriptedRun = { status: "completed", content: "" };
  /** How many task results were asked for. */
  results = 0;
  /** The latest run started in each thread this service created or continued. */
  readonly #runs = new Map<string, string>();
  #n = 0;

  /** Stream events waiting to be read, and who waits for the next one. */
  readonly #events: (StreamEvent | Error)[] = [];
  readonly #waiting = new Set<() => void>();
  #closed = false;

  /** The status getTaskResult gives (`final.status`). */
  get status(): string {
    return this.final.status;
  }

  set status(status: string) {
    this.final = { ...this.final, status };
  }

  /** The files the task result offers (`final.files`). */
  get files(): FakeFile[] {
    return this.final.files ?? [];
  }

  set files(files: FakeFile[]) {
    this.final = { ...this.final, files };
  }

  createTask: TaskService["createTask"] = async (input) => {
    this.prompts.push(input.prompt ?? "");
    this.created.push(input);
    this.uploads.push(await readAll(input.files ?? []));
    const n = ++this.#n;
    this.#runs.set(`thr_${n}`, `run_${n}`);
    return { project_id: `proj_${n}`, thread_id: `thr_${n}`, agent_run_id: `run_${n}` };
  };

  continueConversation: TaskService["continueConversation"] = async (ref, input) => {
    this.prompts.push(input.prompt ?? "");
    this.uploads.push(await readAll(input.files ?? []));
    const runId = `run_${++this.#n}`;
    this.#runs.set(ref.threadId, runId);
    return { agent_run_id: runId };
  };

  /** Releases stream events to the run being followed. */
  emit(...events: (StreamEvent | Error)[]): void {
    this.#events.push(...events);
    for (const wake of [...this.#waiting]) wake();
  }

  /** Ends the stream (the server closes the connection). */
  close(): void {
    this.#closed = true;
    for (const wake of [...this.#waiting]) wake();
  }

  /** The stream ends with the signal's reason when it is aborted, as the real client's does. */
  async *streamTaskResult(
    _ref?: unknown,
    options: { signal?: AbortSignal } = {},
  ): AsyncIterable<StreamEvent> {
    const { signal } = options;
    for (;;) {
      signal?.throwIfAborted();
      const next = this.#events.shift();
      if (next instanceof Error) throw next;
      if (next) {
        yield next;
        continue;
      }
      if (this.#closed) return;
      // Woken by the next event, the end, or its own abort (not another stream's).
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#waiting.delete(wake);
          signal?.removeEventListener("abort", wake);
          resolve();
        };
        this.#waiting.add(wake);
        signal?.addEventListener("abort", wake, { once: true });
      });
    }
  }

  /** The run is the latest this service started in the thread, left out for any other thread. */
  getTaskResult: TaskService["getTaskResult"] = async (ref, query = {}) => {
    this.results++;
    const runId = this.#runs.get(ref.threadId);
    // As the service: a file's content only when asked for.
    const files = (this.final.files ?? []).map((f) => {
      if (query.includeFileContent === true) return f;
      const { content: _content, encoding: _encoding, ...rest } = f;
      return { ...rest, included_inline: false };
    });
    return {
      success: true,
      thread_id: ref.threadId,
      ...(runId ? { agent_run_id: runId } : {}),
      status: this.final.status,
      response: { content: this.final.content },
      code_blocks: [],
      files,
      ...(this.final.error ? { error: this.final.error } : {}),
    } as TaskResult;
  };

  stopAgent: TaskService["stopAgent"] = async (ref) => {
    this.stopped.push(ref.threadId);
    this.emit({ type: "status", status: "stopped" });
    this.final = { ...this.final, status: "stopped" };
    this.close();
    return { success: true, status: "stopped" } as StopResponse;
  };

  /** How many files were read with their content, and the most asked for at once. */
  fileReads = 0;

  /** The result's file at `position`, decoded; too large past `maxBytes` as sent. */
  readResultFile: TaskService["readResultFile"] = async (_ref, file, options) => {
    this.fileReads++;
    const entry = this.final.files?.[file.position];
    if (entry?.file_id !== file.fileId || typeof entry.content !== "string") return undefined;
    if (entry.included_inline === false) return undefined;
    const sent = Buffer.byteLength(entry.content, "utf8");
    if (sent > options.maxBytes) {
      throw new TaskServiceError({ kind: "too_large", message: "larger than the budget" });
    }
    return Buffer.from(entry.content, entry.encoding === "base64" ? "base64" : "utf8");
  };

  getHistory: TaskService["getHistory"] = () => Promise.reject(new Error("getHistory: not faked"));
  /** The thread's file list is empty (the task result's files are `final.files`). */
  listFiles: TaskService["listFiles"] = async () => ({
    files: [],
    pagination: { has_next: false },
  });
}

async function readAll(files: readonly UploadFile[]): Promise<Map<string, Buffer>> {
  const read = new Map<string, Buffer>();
  for (const f of files) {
    const chunks: Uint8Array[] = [];
    for await (const chunk of f.open()) chunks.push(chunk);
    read.set(f.name, Buffer.concat(chunks));
  }
  return read;
}
