/**
 * The task service client's HTTP: undici requests with their timeouts, retries of idempotent
 * reads (p-retry, honouring Retry-After), a report of every response, and a client span each
 * named after its route (`GET …/threads/{thread_id}/response`); URLs hold ids, never the key.
 */
import { Readable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import pRetry from "p-retry";
import { Agent, type Dispatcher, request, errors as undiciErrors } from "undici";
import type { z } from "zod";
import type { ByteBudget } from "../util/byte-budget.ts";
import { type AnswerRead, failure, isAbort, MAX_ANSWER_BYTES, parseAnswer } from "./responses.ts";
import { TaskServiceError } from "./errors.ts";
import { LIMITS } from "./limits.ts";
import { CONTROL_POOL, SERVICE_POOL } from "./pools.ts";
import type { MultipartBody } from "./multipart.ts";
import type { SpanOptions } from "@opentelemetry/api";
import { ATTR_HTTP_RESPONSE_STATUS_CODE } from "@opentelemetry/semantic-conventions";
import {
  ATTR,
  failed,
  httpClientAttributes,
  inSpan,
  type Span,
  SpanKind,
  startSpan,
  withTraceHeaders,
} from "../tracing/spans.ts";

export interface HttpOptions {
  baseUrl: string;
  /** Or a supplier asked at each request (a workspace's key); one that throws sends nothing. */
  apiKey: string | (() => Promise<string>);
  /** Streams, long polls and reads. */
  dispatcher?: Dispatcher;
  /** Create, continue and stop: a pool of their own, so open streams never make them wait. */
  controlDispatcher?: Dispatcher;
  /** The largest JSON answer read (default `MAX_ANSWER_BYTES`). */
  maxAnswerBytes?: number;
  /** The process's budget of the service's data, which large answers take from while read. */
  readBudget?: ByteBudget | undefined;
  /** Retries of idempotent reads (default 4). */
  retries?: number;
  retryMinDelayMs?: number;
  retryMaxDelayMs?: number;
  /** A stream with no bytes (not even a keep-alive) for this long is dropped. */
  streamIdleTimeoutMs?: number;
  /** Told about every request once its status is known (or it failed): for metrics. */
  onResponse?: (response: ServiceResponseInfo) => void;
}

export interface PageQuery {
  page?: number;
  pageSize?: number;
}

/** One request to the service, as metrics see it: no ids, only the endpoint and outcome. */
export interface ServiceResponseInfo {
  readonly endpoint: ReturnType<typeof endpointOf>;
  /** "error" when no answer came (network, timeout). */
  readonly status: number | "error";
  readonly seconds: number;
}

/** The endpoint a request goes to, from its method and path (thread ids are not labels). */
function endpointOf(method: string, target: URL) {
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

type Query = Record<string, string | number | boolean | undefined>;

export function checkRange(name: string, value: number | undefined, min: number, max: number) {
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
export function checkPaging(query: PageQuery): void {
  checkRange("page", query.page, 1, Number.MAX_SAFE_INTEGER);
  checkRange("page_size", query.pageSize, 1, LIMITS.pageSizeMax);
}

export function networkError(err: unknown, what: string): TaskServiceError | unknown {
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

interface SendOptions {
  signal?: AbortSignal | undefined;
  headersTimeoutMs?: number;
  body?: MultipartBody;
  /** This key instead of the client's (checking a key before it is saved). */
  apiKey?: string;
  /** Idempotent: retried on transient failures, honouring Retry-After. */
  retried?: boolean;
}

type RequestOptions = { dispatcher: Dispatcher; method: "GET" | "POST" } & Omit<
  Dispatcher.RequestOptions<null>,
  "origin" | "path" | "method"
>;

const HEADERS = { "user-agent": "slack-task-bot/0.1", accept: "application/json" };

/** The plumbing of one service: URLs, requests, reads with retries, the result stream. */
export class ServiceHttp {
  /** Waiting for an answer's headers (long polls add their timeout). */
  readonly requestTimeoutMs = 30_000;
  readonly streamIdleTimeoutMs: number;
  readonly maxAnswerBytes: number;
  readonly answerRead: AnswerRead;
  readonly #options: HttpOptions;
  readonly #base: string;
  readonly #dispatcher: Dispatcher;
  readonly #control: Dispatcher;

  constructor(options: HttpOptions) {
    this.#options = options;
    this.#base = options.baseUrl.replace(/\/+$/, "");
    this.#dispatcher = options.dispatcher ?? new Agent(SERVICE_POOL);
    this.#control = options.controlDispatcher ?? new Agent(CONTROL_POOL);
    this.streamIdleTimeoutMs = options.streamIdleTimeoutMs ?? 120_000;
    this.maxAnswerBytes = options.maxAnswerBytes ?? MAX_ANSWER_BYTES;
    this.answerRead = { maxBytes: this.maxAnswerBytes, budget: options.readBudget };
  }

  async #headers(override?: string): Promise<Record<string, string>> {
    const source = override ?? this.#options.apiKey;
    return { ...HEADERS, "x-api-key": typeof source === "string" ? source : await source() };
  }

  url(path: string, query: Query = {}): URL {
    const u = new URL(`${this.#base}${API}${path}`);
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined) u.searchParams.set(k, String(v));
    }
    return u;
  }

  threadUrl(ref: { threadId: string; projectId: string }, suffix: string, query: Query = {}) {
    const path = `/threads/${encodeURIComponent(ref.threadId)}${suffix}`;
    return this.url(path, { project_id: ref.projectId, ...query });
  }

  /** One request, reported, its status on `span` (from 400, an error); a refusal thrown. */
  async #request(what: string, target: URL, span: Span, options: RequestOptions) {
    const started = performance.now();
    const report = (status: number | "error") =>
      this.#options.onResponse?.({
        endpoint: endpointOf(options.method, target),
        status,
        seconds: (performance.now() - started) / 1000,
      });
    let res: Dispatcher.ResponseData;
    try {
      res = await request(target, options);
    } catch (err) {
      report("error");
      throw networkError(err, what);
    }
    report(res.statusCode);
    if (span.isRecording()) {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
      if (res.statusCode >= 400) failed(span, undefined, String(res.statusCode));
    }
    if (res.statusCode < 200 || res.statusCode >= 300) throw await failure(res, what);
    return res;
  }

  /** One request in a span carrying `traceparent`, whose JSON answer must match `schema`. */
  send<S extends z.ZodType>(
    what: string,
    method: "GET" | "POST",
    target: URL,
    schema: S,
    opts: SendOptions,
  ): Promise<z.infer<S>> {
    if (opts.retried) {
      const once = { ...opts, retried: false };
      return this.retried(opts.signal, () => this.send(what, method, target, schema, once));
    }
    return inSpan(...clientSpanOf(method, target), async (span) => {
      const headers = withTraceHeaders(await this.#headers(opts.apiKey));
      const { body } = opts;
      const res = await this.#request(what, target, span, {
        method,
        dispatcher: method === "POST" ? this.#control : this.#dispatcher,
        signal: opts.signal,
        headersTimeout: opts.headersTimeoutMs ?? this.requestTimeoutMs,
        bodyTimeout: opts.headersTimeoutMs ?? this.requestTimeoutMs,
        headers: body
          ? { ...headers, "content-type": body.contentType, "content-length": String(body.length) }
          : headers,
        body: body ? (body.bytes ?? Readable.from(body.body, { objectMode: false })) : null,
      });
      return parseAnswer(res, what, schema, this.answerRead);
    });
  }

  retried<T>(signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    return pRetry(fn, {
      retries: this.#options.retries ?? 4,
      minTimeout: this.#options.retryMinDelayMs ?? 500,
      maxTimeout: this.#options.retryMaxDelayMs ?? 15_000,
      factor: 2,
      randomize: true,
      ...(signal ? { signal } : {}),
      shouldRetry: ({ error }) => error instanceof TaskServiceError && error.transient,
      onFailedAttempt: async ({ error, retriesLeft, retryDelay }) => {
        const wait = error instanceof TaskServiceError ? (error.retryAfterMs ?? 0) : 0;
        if (retriesLeft > 0 && wait > retryDelay) {
          await delay(Math.min(wait - retryDelay, 120_000), undefined, signal ? { signal } : {});
        }
      },
    });
  }

  /** A GET whose body the caller reads as it comes; its span lasts until the body closes. */
  async open(
    what: string,
    target: URL,
    signal: AbortSignal | undefined,
    read: { accept: string; headersTimeoutMs: number; bodyTimeoutMs: number },
  ): Promise<Dispatcher.ResponseData> {
    const headers = await this.#headers();
    const { span, context } = startSpan(...clientSpanOf("GET", target));
    let res: Dispatcher.ResponseData;
    try {
      res = await this.#request(what, target, span, {
        method: "GET",
        dispatcher: this.#dispatcher,
        signal,
        headersTimeout: read.headersTimeoutMs,
        bodyTimeout: read.bodyTimeoutMs,
        headers: withTraceHeaders({ ...headers, accept: read.accept }, context),
      });
    } catch (err) {
      failed(span, err);
      span.end();
      throw err;
    }
    res.body.once("error", (err: unknown) => failed(span, networkError(err, what)));
    res.body.once("close", () => span.end());
    return res;
  }
}

function clientSpanOf(method: "GET" | "POST", target: URL): [name: string, options: SpanOptions] {
  const endpoint = endpointOf(method, target);
  // A thread's id is not part of a route: spans of one endpoint share one name.
  const template =
    endpoint === "other"
      ? undefined
      : target.pathname.replace(/\/threads\/[^/]+/, "/threads/{thread_id}");
  return [
    template === undefined ? method : `${method} ${template}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        ...httpClientAttributes(method, target),
        [ATTR.endpoint]: endpoint,
        ...(template === undefined ? {} : { [ATTR.urlTemplate]: template }),
      },
    },
  ];
}
