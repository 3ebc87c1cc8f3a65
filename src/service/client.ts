/**
 * The Task Execution Service client: all six endpoints with every documented field,
 * on undici with keep-alive. Every response is validated by zod; every failure becomes a
 * `TaskServiceError`. Idempotent reads are retried with jittered backoff (p-retry) on
 * 429 / 5xx / network errors; create and continue are never retried blindly.
 */
import { Readable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import pRetry from "p-retry";
import { Agent, type Dispatcher, request, errors as undiciErrors } from "undici";
import type { z } from "zod";
import {
  kindForStatus,
  retryAfterFromHeaders,
  TaskServiceError,
  type ValidationIssue,
} from "./errors.ts";
import { LIMITS, validateTaskInput } from "./limits.ts";
import { encodeMultipart, type MultipartBody, type UploadFile } from "./multipart.ts";
import {
  ContinueResponse,
  CreateTaskResponse,
  ErrorBody,
  FileListResponse,
  HistoryResponse,
  StopResponse,
  TaskResult,
} from "./schemas.ts";
import { parseSse, type StreamEvent } from "./stream.ts";

export type ReasoningEffort = "low" | "medium" | "high";
export type TaskSource = "web" | "mobile" | "widget";

export interface CreateTaskInput {
  prompt?: string;
  agentId?: string;
  modelName?: string;
  enableThinking?: boolean;
  reasoningEffort?: ReasoningEffort;
  enableContextManager?: boolean;
  source?: TaskSource;
  /** Sent as a JSON string. */
  metadata?: Record<string, unknown>;
  showInRecentTasks?: boolean;
  files?: readonly UploadFile[];
}

export interface ContinueInput {
  prompt?: string;
  files?: readonly UploadFile[];
}

export interface ThreadRef {
  readonly threadId: string;
  readonly projectId: string;
}

export interface ResultQuery {
  /** Long-poll wait, 0 to 600 seconds (service default 300). */
  timeout?: number;
  includeFileContent?: boolean;
  page?: number;
  pageSize?: number;
}

export interface HistoryQuery {
  page?: number;
  pageSize?: number;
  includeFileContent?: boolean;
  includeStatusMessages?: boolean;
  compact?: boolean;
}

export interface PageQuery {
  page?: number;
  pageSize?: number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

/** The service boundary. The real implementation is below; tests use the simulator behind it. */
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
}

export interface TaskServiceClientOptions {
  baseUrl: string;
  apiKey: string;
  dispatcher?: Dispatcher;
  /** Retries of idempotent reads (default 4). */
  retries?: number;
  retryMinDelayMs?: number;
  retryMaxDelayMs?: number;
  /** Waiting for response headers of an ordinary request (default 30 s; long polls add their timeout). */
  requestTimeoutMs?: number;
  /** A stream with no bytes (not even a keep-alive) for this long is treated as dropped. */
  streamIdleTimeoutMs?: number;
  userAgent?: string;
  /** Told about every request once its status is known (or it failed): for metrics. */
  onResponse?: (response: ServiceResponseInfo) => void;
}

/** One request to the service, as metrics see it: no ids, only the endpoint and outcome. */
export interface ServiceResponseInfo {
  readonly endpoint: ServiceEndpoint;
  /** The HTTP status, or "error" when no answer came (network, timeout). */
  readonly status: number | "error";
  readonly seconds: number;
}

export type ServiceEndpoint =
  "create" | "result" | "result_stream" | "continue" | "history" | "stop" | "files" | "other";

/** The endpoint a request goes to, from its method and path (thread ids are not labels). */
export function endpointOf(method: string, target: URL): ServiceEndpoint {
  const path = target.pathname;
  if (path.endsWith("/quick-action")) return "create";
  if (/\/threads\/[^/]+\/response$/.test(path)) {
    if (method === "POST") return "continue";
    return target.searchParams.get("realtime") === "true" ? "result_stream" : "result";
  }
  if (path.endsWith("/history")) return "history";
  if (path.endsWith("/stop")) return "stop";
  if (path.endsWith("/files")) return "files";
  return "other";
}

const API = "/api/v1/public";
const MAX_ERROR_BODY = 64 * 1024;

type Query = Record<string, string | number | boolean | undefined>;

function checkRange(name: string, value: number | undefined, min: number, max: number): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new TaskServiceError({
      kind: "input",
      limit: name,
      message: `${name} must be a whole number from ${min} to ${max} (got ${value}).`,
    });
  }
}

/** `page` and `page_size` as every paged endpoint takes them. */
function checkPaging(query: PageQuery): void {
  checkRange("page", query.page, 1, Number.MAX_SAFE_INTEGER);
  checkRange("page_size", query.pageSize, 1, LIMITS.pageSizeMax);
}

function flattenDetail(detail: z.infer<typeof ErrorBody>["detail"]): {
  text: string;
  issues: ValidationIssue[];
} {
  if (typeof detail === "string") return { text: detail, issues: [] };
  if (Array.isArray(detail)) {
    const issues = detail.map((d) => ({
      msg: d.msg,
      ...(d.loc ? { loc: d.loc } : {}),
      ...(d.type ? { type: d.type } : {}),
    }));
    const text = issues
      .map((i) => {
        const where = (i.loc ?? []).filter((p) => p !== "body" && p !== "query").join(".");
        return where ? `${where}: ${i.msg}` : i.msg;
      })
      .join("; ");
    return { text, issues };
  }
  const msg = detail.message ?? detail.msg ?? detail.error;
  return { text: typeof msg === "string" ? msg : JSON.stringify(detail), issues: [] };
}

function isAbort(err: unknown): boolean {
  return (
    err instanceof Error &&
    (err.name === "AbortError" || err instanceof undiciErrors.RequestAbortedError)
  );
}

function networkError(err: unknown, what: string): TaskServiceError | unknown {
  if (isAbort(err) || err instanceof TaskServiceError) return err;
  const code = (err as { code?: string } | null)?.code ?? "";
  const timeout =
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    err instanceof undiciErrors.ConnectTimeoutError;
  const message = err instanceof Error ? err.message : String(err);
  return new TaskServiceError({
    kind: timeout ? "timeout" : "network",
    message: timeout
      ? `The task service did not answer in time (${what}).`
      : `Could not reach the task service (${what}): ${code || message}`,
    cause: err,
  });
}

export function createTaskServiceClient(options: TaskServiceClientOptions): TaskService {
  const base = options.baseUrl.replace(/\/+$/, "");
  const dispatcher =
    options.dispatcher ??
    new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 256 });
  const retries = options.retries ?? 4;
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  const streamIdleTimeoutMs = options.streamIdleTimeoutMs ?? 120_000;
  const baseHeaders = {
    "x-api-key": options.apiKey,
    "user-agent": options.userAgent ?? "slack-task-bot/0.1",
    accept: "application/json",
  };

  const url = (path: string, query: Query = {}) => {
    const u = new URL(`${base}${API}${path}`);
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined) u.searchParams.set(k, String(v));
    }
    return u;
  };
  const threadPath = (ref: ThreadRef, suffix: string) =>
    `/threads/${encodeURIComponent(ref.threadId)}${suffix}`;

  async function failure(res: Dispatcher.ResponseData, what: string): Promise<TaskServiceError> {
    let raw = "";
    for await (const chunk of res.body) {
      if (raw.length < MAX_ERROR_BODY) raw += Buffer.from(chunk).toString("utf8");
    }
    let detail: string | undefined;
    let issues: ValidationIssue[] = [];
    try {
      const parsed = ErrorBody.safeParse(JSON.parse(raw));
      if (parsed.success) ({ text: detail, issues } = flattenDetail(parsed.data.detail));
    } catch {
      // not JSON: fall back to the status line
    }
    const kind = kindForStatus(res.statusCode);
    const retryAfterMs =
      kind === "rate_limited" || res.statusCode === 503
        ? retryAfterFromHeaders(res.headers)
        : undefined;
    return new TaskServiceError({
      kind,
      status: res.statusCode,
      message: `Task service refused ${what}: HTTP ${res.statusCode}${detail ? ` — ${detail}` : ""}`,
      ...(detail === undefined ? {} : { detail }),
      issues,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }

  async function send<S extends z.ZodType>(
    what: string,
    method: "GET" | "POST",
    target: URL,
    schema: S,
    opts: {
      signal?: AbortSignal | undefined;
      headersTimeoutMs?: number;
      body?: MultipartBody;
    },
  ): Promise<z.infer<S>> {
    let res: Dispatcher.ResponseData;
    const started = performance.now();
    const report = (status: number | "error") =>
      options.onResponse?.({
        endpoint: endpointOf(method, target),
        status,
        seconds: (performance.now() - started) / 1000,
      });
    try {
      res = await request(target, {
        method,
        dispatcher,
        signal: opts.signal,
        headersTimeout: opts.headersTimeoutMs ?? requestTimeoutMs,
        bodyTimeout: opts.headersTimeoutMs ?? requestTimeoutMs,
        headers: opts.body
          ? {
              ...baseHeaders,
              "content-type": opts.body.contentType,
              "content-length": String(opts.body.length),
            }
          : baseHeaders,
        body: opts.body
          ? (opts.body.bytes ?? Readable.from(opts.body.body, { objectMode: false }))
          : null,
      });
    } catch (err) {
      report("error");
      throw networkError(err, what);
    }
    report(res.statusCode);
    if (res.statusCode < 200 || res.statusCode >= 300) throw await failure(res, what);
    let json: unknown;
    try {
      json = await res.body.json();
    } catch (err) {
      if (isAbort(err)) throw err;
      throw new TaskServiceError({
        kind: "protocol",
        status: res.statusCode,
        message: `Task service sent an unreadable answer to ${what}.`,
        cause: err,
      });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new TaskServiceError({
        kind: "protocol",
        status: res.statusCode,
        message: `Task service answer to ${what} does not match the contract: ${parsed.error.issues
          .slice(0, 3)
          .map((i) => `${i.path.join(".") || "(root)"} ${i.message}`)
          .join("; ")}`,
      });
    }
    return parsed.data;
  }

  /** Idempotent reads: retried on transient failures, honouring Retry-After. */
  function read<T>(signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    return pRetry(fn, {
      retries,
      minTimeout: options.retryMinDelayMs ?? 500,
      maxTimeout: options.retryMaxDelayMs ?? 15_000,
      factor: 2,
      randomize: true,
      ...(signal ? { signal } : {}),
      shouldRetry: ({ error }) => error instanceof TaskServiceError && error.transient,
      onFailedAttempt: async ({ error, retriesLeft, retryDelay }) => {
        if (
          retriesLeft > 0 &&
          error instanceof TaskServiceError &&
          error.retryAfterMs !== undefined &&
          error.retryAfterMs > retryDelay
        ) {
          const extra = Math.min(error.retryAfterMs - retryDelay, 120_000);
          await delay(extra, undefined, signal ? { signal } : {});
        }
      },
    });
  }

  function multipart(
    fields: Array<[string, string | boolean | undefined]>,
    files: readonly UploadFile[],
  ) {
    const present = fields.filter((f): f is [string, string | boolean] => f[1] !== undefined);
    return encodeMultipart(
      present.map(([k, v]) => [k, String(v)] as const),
      files.map((f) => ["files", f] as const),
    );
  }

  return {
    async createTask(input, callOptions = {}) {
      const files = input.files ?? [];
      validateTaskInput(input.prompt, files);
      const body = multipart(
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
      return send("creating the task", "POST", url("/quick-action"), CreateTaskResponse, {
        signal: callOptions.signal,
        body,
        headersTimeoutMs: Math.max(requestTimeoutMs, 120_000),
      });
    },

    async getTaskResult(ref, query = {}, callOptions = {}) {
      checkRange("timeout", query.timeout, 0, LIMITS.pollTimeoutMaxS);
      checkPaging(query);
      const target = url(threadPath(ref, "/response"), {
        project_id: ref.projectId,
        timeout: query.timeout,
        include_file_content: query.includeFileContent,
        page: query.page,
        page_size: query.pageSize,
      });
      // The server may hold a long poll for `timeout` seconds (300 when unset).
      const waitMs = (query.timeout ?? 300) * 1000 + requestTimeoutMs;
      return read(callOptions.signal, () =>
        send("fetching the task result", "GET", target, TaskResult, {
          signal: callOptions.signal,
          headersTimeoutMs: waitMs,
        }),
      );
    },

    async *streamTaskResult(ref, callOptions = {}) {
      const target = url(threadPath(ref, "/response"), {
        project_id: ref.projectId,
        realtime: true,
        // A server that ignores `realtime` answers a long poll instead; keep it short.
        timeout: Math.min(30, Math.round(streamIdleTimeoutMs / 1000)),
      });
      let res: Dispatcher.ResponseData;
      const started = performance.now();
      const report = (status: number | "error") =>
        options.onResponse?.({
          endpoint: "result_stream",
          status,
          seconds: (performance.now() - started) / 1000,
        });
      try {
        res = await request(target, {
          method: "GET",
          dispatcher,
          signal: callOptions.signal,
          headersTimeout: Math.max(requestTimeoutMs, 60_000),
          bodyTimeout: streamIdleTimeoutMs,
          headers: { ...baseHeaders, accept: "text/event-stream, application/json" },
        });
      } catch (err) {
        report("error");
        throw networkError(err, "opening the result stream");
      }
      report(res.statusCode);
      if (res.statusCode < 200 || res.statusCode >= 300) {
        throw await failure(res, "opening the result stream");
      }
      const type = String(res.headers["content-type"] ?? "");
      try {
        if (type.includes("application/json")) {
          // Streaming not honoured: the answer is a plain result. Present it as a stream.
          const parsed = TaskResult.safeParse(await res.body.json());
          if (!parsed.success) {
            throw new TaskServiceError({
              kind: "protocol",
              message: "Task service sent an unreadable answer to the result stream.",
            });
          }
          yield { type: "snapshot", text: parsed.data.response.content };
          yield { type: "status", status: parsed.data.status };
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
        // Ending early (consumer broke out, abort, error) must free the socket.
        if (!res.body.destroyed) res.body.destroy();
      }
    },

    async continueConversation(ref, input, callOptions = {}) {
      const files = input.files ?? [];
      validateTaskInput(input.prompt, files);
      const body = multipart([["prompt", input.prompt || undefined]], files);
      return send(
        "sending the follow-up",
        "POST",
        url(threadPath(ref, "/response"), { project_id: ref.projectId }),
        ContinueResponse,
        { signal: callOptions.signal, body, headersTimeoutMs: Math.max(requestTimeoutMs, 120_000) },
      );
    },

    async getHistory(ref, query = {}, callOptions = {}) {
      checkPaging(query);
      const target = url(threadPath(ref, "/history"), {
        project_id: ref.projectId,
        page: query.page,
        page_size: query.pageSize,
        include_file_content: query.includeFileContent,
        include_status_messages: query.includeStatusMessages,
        compact: query.compact,
      });
      return read(callOptions.signal, () =>
        send("reading the conversation history", "GET", target, HistoryResponse, {
          signal: callOptions.signal,
        }),
      );
    },

    async stopAgent(ref, callOptions = {}) {
      const target = url(threadPath(ref, "/agent/stop"), { project_id: ref.projectId });
      // Stopping twice has the same effect as stopping once, so it is safe to retry.
      return read(callOptions.signal, () =>
        send("stopping the task", "POST", target, StopResponse, { signal: callOptions.signal }),
      );
    },

    async listFiles(ref, query = {}, callOptions = {}) {
      checkPaging(query);
      const target = url(threadPath(ref, "/files"), {
        project_id: ref.projectId,
        page: query.page,
        page_size: query.pageSize,
      });
      return read(callOptions.signal, () =>
        send("listing the thread's files", "GET", target, FileListResponse, {
          signal: callOptions.signal,
        }),
      );
    },
  };
}
