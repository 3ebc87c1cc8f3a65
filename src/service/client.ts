/**
 * The Task Execution Service client: all six endpoints with every documented field, answers
 * checked by zod, failures as `TaskServiceError`; reads are retried, create and continue never.
 */
import { randomUUID } from "node:crypto";
import { parseAnswer } from "./responses.ts";
import { TaskServiceError } from "./errors.ts";
import {
  checkPaging,
  checkRange,
  type HttpOptions,
  networkError,
  type PageQuery,
  ServiceHttp,
} from "./http.ts";
import { LIMITS, validateTaskInput } from "./limits.ts";
import { encodeMultipart, type UploadFile } from "./multipart.ts";
import {
  ContinueResponse,
  CreateTaskResponse,
  FileListResponse,
  HistoryResponse,
  StopResponse,
  TaskResult,
} from "./schemas.ts";
import { type ReadFileOptions, readResultFile, type ResultFileRef } from "./result-file.ts";
import { parseSse, type StreamEvent } from "./stream.ts";

export type ReasoningEffort = "low" | "medium" | "high";

export interface CreateTaskInput {
  prompt?: string;
  agentId?: string;
  modelName?: string;
  enableThinking?: boolean;
  reasoningEffort?: ReasoningEffort;
  enableContextManager?: boolean;
  source?: "web" | "mobile" | "widget";
  /** Sent as a JSON string. */
  metadata?: Record<string, unknown>;
  showInRecentTasks?: boolean;
  files?: readonly UploadFile[];
}

export type ContinueInput = Pick<CreateTaskInput, "prompt" | "files">;

export interface ThreadRef {
  readonly threadId: string;
  readonly projectId: string;
}

export interface ResultQuery extends PageQuery {
  /** Long-poll wait, 0 to 600 seconds (service default 300). */
  timeout?: number;
  includeFileContent?: boolean;
}

export interface HistoryQuery extends PageQuery {
  includeFileContent?: boolean;
  includeStatusMessages?: boolean;
  compact?: boolean;
}

export type { ServiceResponseInfo } from "./http.ts";

export interface CallOptions {
  signal?: AbortSignal;
}

/** The service boundary; tests run the real client against the simulator. */
export interface TaskService {
  createTask(input: CreateTaskInput, options?: CallOptions): Promise<CreateTaskResponse>;
  getTaskResult(ref: ThreadRef, query?: ResultQuery, options?: CallOptions): Promise<TaskResult>;
  /** Opens the realtime stream (`realtime=true`); ends when the server closes it. */
  streamTaskResult(ref: ThreadRef, options?: CallOptions): AsyncIterable<StreamEvent>;
  continueConversation(
    ref: ThreadRef,
    input: ContinueInput,
    options?: CallOptions,
  ): Promise<ContinueResponse>;
  getHistory(ref: ThreadRef, query?: HistoryQuery, options?: CallOptions): Promise<HistoryResponse>;
  stopAgent(ref: ThreadRef, options?: CallOptions): Promise<StopResponse>;
  listFiles(ref: ThreadRef, query?: PageQuery, options?: CallOptions): Promise<FileListResponse>;
  /**
   * One file of the run's final result with its content, read alone: past `options.maxBytes` as
   * sent, a `too_large` TaskServiceError; undefined when the result has no content for it.
   */
  readResultFile(
    ref: ThreadRef,
    file: ResultFileRef,
    options: ReadFileOptions,
  ): Promise<Buffer | undefined>;
}

/** Checks a key before it is saved (an admin setting a workspace's key). */
export interface KeyChecker {
  /** "valid" once the service answered past authentication; `error` when it told nothing. */
  checkKey(
    key: string,
    options?: CallOptions,
  ): Promise<"valid" | "refused" | { readonly error: string }>;
}

export type TaskServiceClientOptions = HttpOptions;

export function createTaskServiceClient(options: HttpOptions): TaskService & KeyChecker {
  const http = new ServiceHttp(options);
  return { ...starts(http), ...results(http), ...threads(http) };
}

/** Create and continue: never retried blindly. */
function starts(http: ServiceHttp): Pick<TaskService, "createTask" | "continueConversation"> {
  const headersTimeoutMs = Math.max(http.requestTimeoutMs, 120_000);
  return {
    async createTask(input, { signal } = {}) {
      const files = input.files ?? [];
      validateTaskInput(input.prompt, files);
      const body = encodeMultipart(
        [
          ["prompt", input.prompt || undefined],
          ["agent_id", input.agentId],
          ["model_name", input.modelName],
          ["enable_thinking", input.enableThinking],
          ["reasoning_effort", input.reasoningEffort],
          ["enable_context_manager", input.enableContextManager],
          ["source", input.source],
          ["metadata", input.metadata === undefined ? undefined : JSON.stringify(input.metadata)],
          ["show_in_recent_tasks", input.showInRecentTasks],
        ],
        files,
      );
      const target = http.url("/quick-action");
      const opts = { signal, body, headersTimeoutMs };
      return http.send("creating the task", "POST", target, CreateTaskResponse, opts);
    },

    async continueConversation(ref, input, { signal } = {}) {
      const files = input.files ?? [];
      validateTaskInput(input.prompt, files);
      const body = encodeMultipart([["prompt", input.prompt || undefined]], files);
      const target = http.threadUrl(ref, "/response");
      const opts = { signal, body, headersTimeoutMs };
      return http.send("sending the follow-up", "POST", target, ContinueResponse, opts);
    },
  };
}

/** A run's result, polled or streamed, and its files one at a time. */
function results(
  http: ServiceHttp,
): Pick<TaskService, "getTaskResult" | "streamTaskResult" | "readResultFile"> {
  return {
    async getTaskResult(ref, query = {}, { signal } = {}) {
      checkRange("timeout", query.timeout, 0, LIMITS.pollTimeoutMaxS);
      checkPaging(query);
      const target = http.threadUrl(ref, "/response", {
        timeout: query.timeout,
        include_file_content: query.includeFileContent,
        page: query.page,
        page_size: query.pageSize,
      });
      // The server may hold a long poll for `timeout` seconds (300 when unset).
      const headersTimeoutMs = (query.timeout ?? 300) * 1000 + http.requestTimeoutMs;
      const opts = { signal, headersTimeoutMs, retried: true };
      return http.send("fetching the task result", "GET", target, TaskResult, opts);
    },

    async *streamTaskResult(ref, { signal } = {}) {
      const target = http.threadUrl(ref, "/response", {
        realtime: true,
        // A server that ignores `realtime` answers a long poll instead; keep it short.
        timeout: Math.min(30, Math.round(http.streamIdleTimeoutMs / 1000)),
      });
      const res = await http.open("opening the result stream", target, signal, {
        accept: "text/event-stream, application/json",
        headersTimeoutMs: Math.max(http.requestTimeoutMs, 60_000),
        bodyTimeoutMs: http.streamIdleTimeoutMs,
      });
      const type = String(res.headers["content-type"] ?? "");
      try {
        if (type.includes("application/json")) {
          // Streaming not honoured: a plain result (capped like any other), presented as a stream.
          const result = await parseAnswer(res, "the result stream", TaskResult, http.answerRead);
          yield { type: "snapshot", text: result.response.content };
          yield { type: "status", status: result.status };
          return;
        }
        if (type !== "" && !type.includes("text/event-stream")) {
          // A proxy's page or another answer that is no event stream: streaming is refused here.
          throw new TaskServiceError({
            kind: "protocol",
            status: res.statusCode,
            message: `Task service answered the result stream with ${type.split(";")[0]}, not an event stream.`,
          });
        }
        yield* parseSse(res.body);
      } catch (err) {
        throw networkError(err, "reading the result stream");
      } finally {
        // Ending early (break, abort, error) frees the socket; the unread body's "aborted" is expected.
        if (!res.body.destroyed) {
          res.body.on("error", () => undefined);
          res.body.destroy();
        }
      }
    },

    readResultFile: (ref, file, options) => readResultFile(http, ref, file, options),
  };
}

/** A thread's history, files and Stop; a key's check. */
function threads(
  http: ServiceHttp,
): Pick<TaskService & KeyChecker, "getHistory" | "stopAgent" | "listFiles" | "checkKey"> {
  return {
    async getHistory(ref, query = {}, { signal } = {}) {
      checkPaging(query);
      const target = http.threadUrl(ref, "/history", {
        page: query.page,
        page_size: query.pageSize,
        include_file_content: query.includeFileContent,
        include_status_messages: query.includeStatusMessages,
        compact: query.compact,
      });
      const what = "reading the conversation history";
      return http.send(what, "GET", target, HistoryResponse, { signal, retried: true });
    },

    async stopAgent(ref, { signal } = {}) {
      const target = http.threadUrl(ref, "/agent/stop");
      // Stopping twice has the same effect as stopping once, so it is safe to retry.
      const what = "stopping the task";
      return http.send(what, "POST", target, StopResponse, { signal, retried: true });
    },

    async listFiles(ref, query = {}, { signal } = {}) {
      checkPaging(query);
      const target = http.threadUrl(ref, "/files", { page: query.page, page_size: query.pageSize });
      const what = "listing the thread's files";
      return http.send(what, "GET", target, FileListResponse, { signal, retried: true });
    },

    /**
     * One read-only request with `key`: the history of a thread that does not exist (the contract
     * has no account endpoint). 401 or 403 is a refused key; 404, or any other answer past
     * authentication, a valid one; 5xx, 429 and network failures tell nothing.
     */
    async checkKey(key, { signal } = {}) {
      const probe = `key-check-${randomUUID()}`;
      const target = http.threadUrl({ threadId: probe, projectId: probe }, "/history", {
        page_size: 1,
        compact: true,
      });
      try {
        const opts = { signal, apiKey: key };
        await http.send("checking the API key", "GET", target, HistoryResponse, opts);
        return "valid";
      } catch (err) {
        if (!(err instanceof TaskServiceError)) throw err;
        if (err.status === 401 || err.status === 403) return "refused";
        if (err.transient || err.status === undefined) {
          const why = err.status === undefined ? err.kind : `HTTP ${err.status}`;
          return { error: why === "timeout" ? "no answer in time" : why };
        }
        return "valid";
      }
    },
  };
}
