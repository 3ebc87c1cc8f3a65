/**
 * A scripted task service for unit tests: each run's stream is a list of events the test
 * releases step by step, and its final result is what the test says.
 */
import type { TaskService } from "../../../src/runs/ports.ts";
import type { ResultFile, TaskResult } from "../../../src/service/schemas.ts";
import type { StreamEvent } from "../../../src/service/stream.ts";

export interface ScriptedRun {
  status: string;
  content: string;
  files?: ResultFile[];
  error?: string;
}

export class ScriptedService implements TaskService {
  /** Stream events waiting to be read, and who waits for the next one. */
  readonly #events: (StreamEvent | Error)[] = [];
  #wake: (() => void) | undefined;
  #closed = false;
  final: ScriptedRun = { status: "completed", content: "" };
  readonly stopped: string[] = [];

  /** Releases stream events to the run being followed. */
  emit(...events: (StreamEvent | Error)[]): void {
    this.#events.push(...events);
    this.#wake?.();
  }

  /** Ends the stream (the server closes the connection). */
  close(): void {
    this.#closed = true;
    this.#wake?.();
  }

  async *streamTaskResult(): AsyncIterable<StreamEvent> {
    for (;;) {
      const next = this.#events.shift();
      if (next instanceof Error) throw next;
      if (next) {
        yield next;
        continue;
      }
      if (this.#closed) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  getTaskResult: TaskService["getTaskResult"] = async (ref) =>
    ({
      success: true,
      thread_id: ref.threadId,
      agent_run_id: "run_1",
      status: this.final.status,
      response: { content: this.final.content },
      code_blocks: [],
      files: this.final.files ?? [],
      ...(this.final.error ? { error: this.final.error } : {}),
    }) as TaskResult;

  stopAgent: TaskService["stopAgent"] = async (ref) => {
    this.stopped.push(ref.threadId);
    this.emit({ type: "status", status: "stopped" });
    this.final = { ...this.final, status: "stopped" };
    this.close();
    return { success: true } as Awaited<ReturnType<TaskService["stopAgent"]>>;
  };

  createTask: TaskService["createTask"] = () => Promise.reject(new Error("not used"));
  continueConversation: TaskService["continueConversation"] = () =>
    Promise.reject(new Error("not used"));
  getHistory: TaskService["getHistory"] = () => Promise.reject(new Error("not used"));
  listFiles: TaskService["listFiles"] = () => Promise.reject(new Error("not used"));
}
