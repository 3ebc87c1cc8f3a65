/**
 * A local simulator of the Task Execution Service (spec: task-execution-service-api.md, with
 * the deployed behaviours of task-service-in-the-wild.md): a real HTTP server implementing
 * the six public endpoints under `/api/v1/public`, scriptable by prompt directives
 * (directives.ts) and by `Simulator.injectFault`.
 *
 * Error statuses: 401 missing/invalid X-API-Key (every endpoint); 400 missing `project_id`,
 * unparsable multipart body, realtime refused (`[sim:norealtime]`), stop without a running
 * run ("No running agent for this thread"); 403 project does not own the thread; 404 unknown
 * thread, unknown project, unknown route or download; 405 known path, wrong method;
 * 409 follow-up while a run is running; 422 validation (list `detail`); 402/429/500/...
 * only when injected.
 */
import { EventEmitter, once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { type Directives, type FailSpec, parseDirectives, pickSticky } from "./directives.ts";
import {
  type CodeBlockOut,
  Engine,
  newId,
  nowMs,
  type RequestInfo,
  type RequestRecord,
  type Run,
  type RunInfo,
  type SimulatorEvents,
  type Thread,
  type ThreadInfo,
} from "./engine.ts";
import { type ErrorAnswer, errorAnswer } from "./faults.ts";
import type { GeneratedFile } from "./files.ts";
import { BadBodyError, ClientGoneError, DEFAULT_LIMITS, type FormBody, readForm } from "./form.ts";
import {
  continueForm,
  createForm,
  filesQuery,
  historyQuery,
  issuesOf,
  queryRecord,
  resultQuery,
  type ValidationIssue,
} from "./validation.ts";

export type {
  GeneratedFileInfo,
  RequestInfo,
  RequestRecord,
  RunInfo,
  RunStatus,
  SimulatorEvents,
  ThreadInfo,
} from "./engine.ts";

const fn = <T>() => z.custom<T>((v) => typeof v === "function", { error: "expected a function" });

const optionsSchema = z.object({
  host: z.string().min(1).default("127.0.0.1"),
  port: z.number().int().min(0).max(65535).default(0),
  apiKeys: z.array(z.string().min(1)).min(1).default(["he-simulator-key"]),
  chunkDelayMs: z.number().min(0).max(60_000).default(40),
  chunkChars: z.number().int().min(1).max(100_000).default(24),
  answerLength: z.number().int().min(0).max(2_000_000).default(1200),
  streamFormat: z.enum(["contract", "agent", "minimal"]).default("contract"),
  reconnect: z.enum(["replay", "continue"]).default("continue"),
  inlineLimitBytes: z.number().int().min(1).default(1_000_000),
  keepAliveMs: z.number().int().min(0).default(5000),
  downloadTtlMs: z
    .number()
    .int()
    .min(1)
    .default(15 * 60_000),
  maxThreads: z.number().int().min(1).default(10_000),
  maxRequestLog: z.number().int().min(0).default(10_000),
  limits: z
    .object({
      maxFiles: z.number().int().min(0),
      maxFileBytes: z.number().int().min(0),
      maxTotalBytes: z.number().int().min(0),
    })
    .partial()
    .default({}),
  logger: fn<(line: string) => void>().optional(),
  onChunk: fn<(runId: string, chunk: string, atMs: number) => void>().optional(),
});

export type SimulatorOptions = z.input<typeof optionsSchema>;

export type FaultEndpoint =
  "create" | "continue" | "result" | "stream" | "history" | "stop" | "files" | "download" | "any";

/**
 * A scripted failure for the next matching request(s), applied after the API key check.
 * With `delayMs` the answer is held that long first; with `reset` the connection is destroyed
 * instead of answered; with `status` an error answer is sent (realistic default `detail` and,
 * for 429/503, rate-limit headers); with neither the request then proceeds normally.
 */
export interface FaultSpec {
  endpoint: FaultEndpoint;
  status?: number;
  detail?: string;
  /** How many requests it applies to (default 1). */
  times?: number;
  delayMs?: number;
  reset?: boolean;
  /** Only requests on this thread. */
  threadId?: string;
  headers?: Record<string, string>;
}

export interface Simulator {
  /** Base URL (`base_url`): endpoints are at `url + "/api/v1/public/..."`. */
  url: string;
  /** The first accepted API key. */
  apiKey: string;
  apiKeys: readonly string[];
  /** Every request received, oldest first (capped by `maxRequestLog`); never the API key. */
  requests: RequestRecord[];
  runs(): RunInfo[];
  run(runId: string): RunInfo | undefined;
  threads(): ThreadInfo[];
  thread(threadId: string): ThreadInfo | undefined;
  /** Open `realtime=true` connections. */
  openStreams(): number;
  /** Long polls currently held. */
  pendingPolls(): number;
  injectFault(fault: FaultSpec): void;
  clearFaults(): void;
  /** Resolves once the run is no longer running (rejects after `timeoutMs`, default 10 s). */
  waitForRun(runId: string, timeoutMs?: number): Promise<RunInfo>;
  events: EventEmitter<SimulatorEvents>;
  /** Stops every run, stream, long poll and timer, and the server. */
  close(): Promise<void>;
}

const PREFIX = "/api/v1/public";
const DOWNLOAD_PREFIX = "/sim-storage/download/";
const SECRET_QUERY = /key|token|secret|auth|password/i;

type Endpoint = Exclude<FaultEndpoint, "any" | "stream">;

type Route =
  | { kind: "endpoint"; endpoint: Endpoint; threadId: string }
  | { kind: "notFound" }
  | { kind: "methodNotAllowed"; allow: string };

function matchRoute(method: string, pathname: string): Route {
  if (!pathname.startsWith(`${PREFIX}/`)) return { kind: "notFound" };
  const parts = pathname.slice(PREFIX.length + 1).split("/");
  const check = (allowed: Record<string, Endpoint>, threadId: string): Route => {
    const endpoint = allowed[method];
    if (endpoint === undefined)
      return { kind: "methodNotAllowed", allow: Object.keys(allowed).join(", ") };
    return { kind: "endpoint", endpoint, threadId };
  };
  if (parts.length === 1 && parts[0] === "quick-action") return check({ POST: "create" }, "");
  if (parts[0] !== "threads" || parts.length < 3 || parts[1] === "") return { kind: "notFound" };
  let threadId: string;
  try {
    threadId = decodeURIComponent(parts[1] ?? "");
  } catch {
    return { kind: "notFound" };
  }
  const rest = parts.slice(2).join("/");
  if (rest === "response") return check({ GET: "result", POST: "continue" }, threadId);
  if (rest === "history") return check({ GET: "history" }, threadId);
  if (rest === "agent/stop") return check({ POST: "stop" }, threadId);
  if (rest === "files") return check({ GET: "files" }, threadId);
  return { kind: "notFound" };
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}

function sendDetail(
  res: ServerResponse,
  status: number,
  detail: string | ValidationIssue[],
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { detail }, headers);
}

function sendError(res: ServerResponse, answer: ErrorAnswer): void {
  sendDetail(res, answer.status, answer.detail, answer.headers);
}

/** True when the client went away before its answer. */
function gone(res: ServerResponse): boolean {
  return res.destroyed || res.socket === null || res.socket.destroyed;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function paginate<T>(items: readonly T[], page: number, pageSize: number) {
  const totalPages = Math.ceil(items.length / pageSize);
  return {
    items: items.slice((page - 1) * pageSize, page * pageSize),
    pagination: {
      current_page: page,
      page_size: pageSize,
      total_items: items.length,
      total_pages: totalPages,
      has_next: page < totalPages,
      has_prev: page > 1,
    },
  };
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const o = optionsSchema.parse(options);
  const limits = { ...DEFAULT_LIMITS, ...o.limits };
  const log = o.logger ?? (() => {});
  const events = new EventEmitter<SimulatorEvents>();
  events.setMaxListeners(0);
  const engine = new Engine({
    chunkDelayMs: o.chunkDelayMs,
    chunkChars: o.chunkChars,
    answerLength: o.answerLength,
    streamFormat: o.streamFormat,
    reconnect: o.reconnect,
    keepAliveMs: o.keepAliveMs,
    inlineLimitBytes: o.inlineLimitBytes,
    maxThreads: o.maxThreads,
    onChunk: o.onChunk,
    log,
    events,
  });
  const apiKeys = new Set(o.apiKeys);
  const requests: RequestRecord[] = [];
  const faults: { spec: FaultSpec; left: number }[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const links = new WeakMap<GeneratedFile, { token: string; expiresAt: number }>();
  let closing = false;

  /** Waits `ms`, or less when the client goes away or the simulator closes. */
  function hold(ms: number, res: ServerResponse, wake?: Set<() => void>): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        timers.delete(timer);
        wake?.delete(done);
        res.off("close", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timers.add(timer);
      wake?.add(done);
      res.on("close", done);
    });
  }

  function takeFault(endpoint: FaultEndpoint, threadId: string): FaultSpec | undefined {
    const i = faults.findIndex(
      (f) =>
        (f.spec.endpoint === "any" || f.spec.endpoint === endpoint) &&
        (f.spec.threadId === undefined || f.spec.threadId === threadId),
    );
    const fault = faults[i];
    if (fault === undefined) return undefined;
    if (--fault.left <= 0) faults.splice(i, 1);
    return fault.spec;
  }

  /** Finds the thread of a thread endpoint; answers 400/404/403 itself when it can't. */
  function lookup(res: ServerResponse, url: URL, threadId: string): Thread | undefined {
    const projectId = url.searchParams.get("project_id");
    if (projectId === null || projectId === "") {
      sendDetail(res, 400, "Missing required query parameter: project_id");
      return undefined;
    }
    const thread = engine.threads.get(threadId);
    if (thread === undefined) {
      sendDetail(res, 404, `Thread not found: ${threadId}`);
      return undefined;
    }
    if (thread.project.id !== projectId) {
      if (engine.projects.has(projectId)) {
        sendDetail(res, 403, "Access denied: the project does not own this thread");
      } else {
        sendDetail(res, 404, `Project not found: ${projectId}`);
      }
      return undefined;
    }
    return thread;
  }

  function failIfDirected(res: ServerResponse, spec: FailSpec | undefined, key: string): boolean {
    if (spec === undefined || !engine.shouldFail(spec, key)) return false;
    sendError(res, errorAnswer(spec.status));
    return true;
  }

  async function readValidForm<S extends typeof createForm | typeof continueForm>(
    req: IncomingMessage,
    res: ServerResponse,
    schema: S,
  ): Promise<{ form: FormBody; fields: z.output<S> } | undefined> {
    let form: FormBody;
    try {
      form = await readForm(req, limits);
    } catch (error) {
      if (error instanceof BadBodyError) {
        sendDetail(res, 400, `There was an error parsing the body: ${error.message}`);
        return undefined;
      }
      if (error instanceof ClientGoneError) return undefined;
      throw error;
    }
    const raw = Object.fromEntries(form.fields);
    const parsed = schema.safeParse(raw);
    const issues = [...(parsed.success ? [] : issuesOf(parsed.error, "body")), ...form.issues];
    if (raw.prompt === undefined && form.files.length === 0 && form.issues.length === 0) {
      issues.unshift({
        loc: ["body", "prompt"],
        msg: "Field required: prompt is required when no files are sent",
        type: "missing",
      });
    }
    if (issues.length > 0 || !parsed.success) {
      sendDetail(res, 422, issues);
      return undefined;
    }
    return { form, fields: parsed.data as z.output<S> };
  }

  async function create(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const valid = await readValidForm(req, res, createForm);
    if (valid === undefined) return;
    const f = valid.fields;
    const prompt = f.prompt ?? "";
    const parsed = { prompt, ...parseDirectives(prompt) };
    const d = parsed.directives;
    if (failIfDirected(res, d.failCreate, `create:${prompt}`)) return;
    const request: RequestInfo = {
      kind: "create",
      prompt: f.prompt,
      agentId: f.agent_id,
      modelName: f.model_name,
      enableThinking: f.enable_thinking,
      reasoningEffort: f.reasoning_effort,
      enableContextManager: f.enable_context_manager,
      source: f.source,
      metadata: f.metadata,
      showInRecentTasks: f.show_in_recent_tasks,
      files: valid.form.files,
      ignoredFileFields: valid.form.ignoredFileFields,
      rawFields: Object.fromEntries(valid.form.fields),
    };
    const thread = engine.createThread(request, pickSticky(d), d.norun === true);
    if (d.failContinue !== undefined) thread.failContinue = { spec: d.failContinue, used: 0 };
    const runId = d.norun === true ? newId("run") : engine.startRun(thread, parsed, request).id;
    sendJson(res, 200, {
      success: true,
      project_id: thread.project.id,
      thread_id: thread.id,
      agent_run_id: runId,
      message: "Task created successfully and execution started",
    });
  }

  async function followUp(
    req: IncomingMessage,
    res: ServerResponse,
    thread: Thread,
  ): Promise<void> {
    const valid = await readValidForm(req, res, continueForm);
    if (valid === undefined) return;
    const latest = engine.latestRun(thread);
    if (latest?.status === "running") {
      sendDetail(
        res,
        409,
        `An agent run is already in progress for this thread (${latest.id}); wait for it to end or stop it`,
      );
      return;
    }
    const prompt = valid.form.fields.get("prompt") ?? "";
    const parsed = { prompt, ...parseDirectives(prompt) };
    if (failIfDirected(res, parsed.directives.failContinue, `continue:${thread.id}:${prompt}`)) {
      return;
    }
    const inherited = thread.failContinue;
    if (
      parsed.directives.failContinue === undefined &&
      inherited !== undefined &&
      (inherited.spec.times === undefined || inherited.used < inherited.spec.times)
    ) {
      inherited.used++;
      sendError(res, errorAnswer(inherited.spec.status));
      return;
    }
    const request: RequestInfo = {
      kind: "continue",
      prompt: valid.form.fields.get("prompt"),
      files: valid.form.files,
      ignoredFileFields: valid.form.ignoredFileFields,
      rawFields: Object.fromEntries(valid.form.fields),
    };
    const run = engine.startRun(thread, parsed, request);
    sendJson(res, 200, {
      success: true,
      agent_run_id: run.id,
      status: "running",
      message: "Follow-up message added and execution started",
    });
  }

  function fileEntry(file: GeneratedFile, inline: boolean, base: string) {
    const big = file.content.length >= o.inlineLimitBytes;
    const entry: Record<string, unknown> = {
      file_id: file.fileId,
      file_name: file.name,
      file_path: file.path,
      file_type: file.type,
      file_size: file.content.length,
      included_inline: inline && !big,
    };
    if (inline && !big) {
      entry.content = file.text ? file.content.toString("utf8") : file.content.toString("base64");
      entry.encoding = file.text ? "utf-8" : "base64";
    }
    if (big) {
      let link = links.get(file);
      if (link === undefined || link.expiresAt - Date.now() < o.downloadTtlMs / 2) {
        link = engine.downloadToken(file, o.downloadTtlMs);
        links.set(file, link);
      }
      entry.download_url = `${base}${DOWNLOAD_PREFIX}${link.token}/${encodeURIComponent(file.name)}?expires=${Math.floor(link.expiresAt / 1000)}`;
    }
    return entry;
  }

  function resultBody(
    thread: Thread,
    run: Run | undefined,
    q: z.infer<typeof resultQuery>,
    waitedMs: number,
    base: string,
  ) {
    const common = {
      success: true,
      thread_id: thread.id,
      project_id: thread.project.id,
      waited_seconds: Math.round(waitedMs) / 1000,
    };
    if (run === undefined) {
      return {
        ...common,
        agent_run_id: null,
        status: "no_run",
        response: null,
        has_code: false,
        has_files: false,
        code_blocks: [],
        files: [],
        pagination: paginate([], q.page, q.page_size).pagination,
        message: "No agent run found for this thread",
      };
    }
    const completed = run.status === "completed";
    const files = completed ? run.files : [];
    const codeBlocks: CodeBlockOut[] = completed ? run.codeBlocks : [];
    const page = paginate(files, q.page, q.page_size);
    return {
      ...common,
      agent_run_id: run.id,
      status: run.status,
      response: {
        role: "assistant",
        content: run.content(),
        message_id: run.messageId,
        created_at: iso(run.createdAt),
        metadata: { agent_run_id: run.id, model: run.request.modelName ?? "sim-default" },
      },
      has_code: codeBlocks.length > 0,
      has_files: files.length > 0,
      code_blocks: codeBlocks,
      files: page.items.map((file) => fileEntry(file, q.include_file_content, base)),
      pagination: page.pagination,
      ...(run.error === undefined ? {} : { error: run.error }),
    };
  }

  async function result(
    res: ServerResponse,
    url: URL,
    thread: Thread,
    base: string,
  ): Promise<void> {
    const parsed = resultQuery.safeParse(queryRecord(url.searchParams));
    if (!parsed.success) {
      sendDetail(res, 422, issuesOf(parsed.error, "query"));
      return;
    }
    const q = parsed.data;
    const run = engine.latestRun(thread);
    if (run !== undefined && run.directives.failPoll !== undefined) {
      if (failIfDirected(res, run.directives.failPoll, `poll:${run.id}`)) return;
    }
    const directives: Directives = run?.directives ?? thread.sticky;
    if (q.realtime && directives.norealtime === "refuse") {
      sendDetail(res, 400, "Realtime streaming is not available");
      return;
    }
    if (q.realtime && directives.norealtime !== "json") {
      res.writeHead(200, {
        "Content-Type": "text/event-stream; charset=utf-8",
        "Cache-Control": "no-cache, no-transform",
        Connection: "keep-alive",
        "X-Accel-Buffering": "no",
      });
      res.flushHeaders();
      if (run === undefined) {
        res.end(`data: ${JSON.stringify({ type: "status", status: "no_run" })}\n\n`);
        return;
      }
      run.openStream(res);
      return;
    }
    const started = nowMs();
    if (run !== undefined && run.status === "running" && q.timeout > 0) {
      await hold(q.timeout * 1000, res, run.waiters);
    }
    if (gone(res) || closing) return;
    sendJson(res, 200, resultBody(thread, run, q, nowMs() - started, base));
  }

  function history(res: ServerResponse, url: URL, thread: Thread, base: string): void {
    const parsed = historyQuery.safeParse(queryRecord(url.searchParams));
    if (!parsed.success) {
      sendDetail(res, 422, issuesOf(parsed.error, "query"));
      return;
    }
    const q = parsed.data;
    const messages: Record<string, unknown>[] = [];
    if (thread.noRun) {
      messages.push({
        message_id: `msg_${thread.id}_prompt`,
        role: "user",
        content: thread.request.prompt ?? "",
        created_at: iso(thread.createdAt),
      });
    }
    for (const run of thread.runs) {
      messages.push({
        message_id: run.userMessageId,
        role: "user",
        content: run.prompt,
        created_at: iso(run.createdAt),
      });
      if (q.include_status_messages) {
        messages.push({
          message_id: `${run.messageId}_start`,
          role: "status",
          content: JSON.stringify({ status_type: "thread_run_start", agent_run_id: run.id }),
          created_at: iso(run.createdAt),
        });
      }
      if (run.pos > 0 || run.status !== "running") {
        const completed = run.status === "completed";
        messages.push({
          message_id: run.messageId,
          role: "assistant",
          content: run.content(),
          created_at: iso(run.createdAt + 1),
          has_code: completed && run.codeBlocks.length > 0,
          has_files: completed && run.files.length > 0,
          ...(q.include_file_content && completed && run.files.length > 0
            ? { files: run.files.map((f) => fileEntry(f, true, base)) }
            : {}),
        });
      }
      if (q.include_status_messages && run.status !== "running") {
        messages.push({
          message_id: `${run.messageId}_end`,
          role: "status",
          content: JSON.stringify({
            status_type: "thread_run_end",
            status: run.status,
            agent_run_id: run.id,
            ...(run.error === undefined ? {} : { error: run.error }),
          }),
          created_at: iso(run.endedAt ?? run.createdAt),
        });
      }
    }
    const listed = q.compact
      ? messages.map((m) => ({ message_id: m.message_id, role: m.role, content: m.content }))
      : messages;
    const page = paginate(listed, q.page, q.page_size);
    sendJson(res, 200, {
      success: true,
      thread_id: thread.id,
      messages: page.items,
      pagination: page.pagination,
    });
  }

  function stop(res: ServerResponse, thread: Thread): void {
    const run = engine.latestRun(thread);
    if (run === undefined || run.status !== "running") {
      sendDetail(res, 400, "No running agent for this thread");
      return;
    }
    run.finish("stopped", undefined);
    sendJson(res, 200, {
      success: true,
      agent_run_id: run.id,
      status: "stopped",
      message: "Agent run stopped",
    });
  }

  function files(res: ServerResponse, url: URL, thread: Thread): void {
    const parsed = filesQuery.safeParse(queryRecord(url.searchParams));
    if (!parsed.success) {
      sendDetail(res, 422, issuesOf(parsed.error, "query"));
      return;
    }
    const page = paginate(thread.files, parsed.data.page, parsed.data.page_size);
    sendJson(res, 200, {
      success: true,
      thread_id: thread.id,
      files: page.items.map((f) => ({
        file_id: f.fileId,
        file_name: f.name,
        file_size: f.content.length,
        file_type: f.type,
        file_path: f.path,
        created_at: iso(f.createdAt),
      })),
      pagination: page.pagination,
    });
  }

  function download(res: ServerResponse, pathname: string): void {
    const token = pathname.slice(DOWNLOAD_PREFIX.length).split("/")[0] ?? "";
    const entry = engine.downloads.get(token);
    if (entry === undefined) {
      sendDetail(res, 404, "File not found");
      return;
    }
    if (entry.expiresAt < Date.now()) {
      sendDetail(res, 403, "Request has expired");
      return;
    }
    const { file } = entry;
    res.writeHead(200, {
      "Content-Type": file.type,
      "Content-Length": String(file.content.length),
      "Content-Disposition": `attachment; filename*=UTF-8''${encodeURIComponent(file.name)}`,
    });
    res.end(file.content);
  }

  /** The base URL as the client reached us (download links must work from its side). */
  function baseUrl(req: IncomingMessage): string {
    const host = req.headers.host;
    return host === undefined || !/^[\w.:[\]-]+$/.test(host) ? sim.url : `http://${host}`;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://simulator.invalid");
    const method = req.method ?? "GET";
    const query = queryRecord(url.searchParams);
    for (const key of Object.keys(query)) if (SECRET_QUERY.test(key)) query[key] = "[redacted]";
    const record: RequestRecord = { method, path: url.pathname, query, at: Date.now() };
    if (o.maxRequestLog > 0) {
      requests.push(record);
      if (requests.length > o.maxRequestLog + 1000)
        requests.splice(0, requests.length - o.maxRequestLog);
    }
    res.on("close", () => {
      record.status = res.statusCode;
      record.durationMs = Date.now() - record.at;
      log(`${method} ${url.pathname}${url.search} ${res.statusCode} ${record.durationMs}ms`);
      events.emit("request", record);
    });
    if (closing) {
      sendDetail(res, 503, "Simulator shutting down");
      return;
    }
    if (method === "GET" && url.pathname === "/health") {
      sendJson(res, 200, { status: "ok" });
      return;
    }
    const isDownload = url.pathname.startsWith(DOWNLOAD_PREFIX);
    const route = isDownload ? undefined : matchRoute(method, url.pathname);
    if (route?.kind === "notFound") {
      sendDetail(res, 404, "Not Found");
      return;
    }
    if (route?.kind === "methodNotAllowed") {
      sendDetail(res, 405, "Method Not Allowed", { Allow: route.allow });
      return;
    }
    if (route !== undefined) {
      const key = req.headers["x-api-key"];
      const given = Array.isArray(key) ? key[0] : key;
      if (given === undefined || given === "") {
        sendDetail(res, 401, "Missing API key: send it in the X-API-Key header");
        return;
      }
      if (!apiKeys.has(given)) {
        sendDetail(res, 401, "Invalid API key");
        return;
      }
    }
    const endpoint: FaultEndpoint =
      route === undefined
        ? "download"
        : route.endpoint === "result" &&
            /^(true|1|yes|on)$/i.test(url.searchParams.get("realtime") ?? "")
          ? "stream"
          : route.endpoint;
    const fault = faults.length === 0 ? undefined : takeFault(endpoint, route?.threadId ?? "");
    if (fault !== undefined) {
      if (fault.delayMs !== undefined) await hold(fault.delayMs, res);
      if (gone(res) || closing) return;
      if (fault.reset === true) {
        req.socket.destroy();
        return;
      }
      if (fault.status !== undefined) {
        const answer = errorAnswer(fault.status, fault.detail);
        sendError(res, { ...answer, headers: { ...answer.headers, ...fault.headers } });
        return;
      }
    }
    if (route === undefined) {
      if (method !== "GET") sendDetail(res, 405, "Method Not Allowed", { Allow: "GET" });
      else download(res, url.pathname);
      return;
    }
    if (route.endpoint === "create") {
      await create(req, res);
      return;
    }
    const thread = lookup(res, url, route.threadId);
    if (thread === undefined) return;
    switch (route.endpoint) {
      case "result":
        await result(res, url, thread, baseUrl(req));
        return;
      case "continue":
        await followUp(req, res, thread);
        return;
      case "history":
        history(res, url, thread, baseUrl(req));
        return;
      case "stop":
        stop(res, thread);
        return;
      case "files":
        files(res, url, thread);
        return;
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log(`internal error on ${req.method} ${req.url}: ${String(error)}`);
      if (!res.headersSent) sendDetail(res, 500, "Internal server error");
      else res.destroy();
    });
  });
  server.listen(o.port, o.host);
  await once(server, "listening");
  const address = server.address() as AddressInfo;
  const host =
    o.host === "0.0.0.0"
      ? "127.0.0.1"
      : o.host === "::"
        ? "[::1]"
        : o.host.includes(":")
          ? `[${o.host}]`
          : o.host;

  const sim: Simulator = {
    url: `http://${host}:${address.port}`,
    apiKey: o.apiKeys[0] ?? "",
    apiKeys: o.apiKeys,
    requests,
    events,
    runs: () => [...engine.runsById.values()].map((r) => engine.runInfo(r)),
    run: (id) => {
      const run = engine.runsById.get(id);
      return run === undefined ? undefined : engine.runInfo(run);
    },
    threads: () => [...engine.threads.values()].map((t) => engine.threadInfo(t)),
    thread: (id) => {
      const thread = engine.threads.get(id);
      return thread === undefined ? undefined : engine.threadInfo(thread);
    },
    openStreams: () => engine.openStreams(),
    pendingPolls: () => engine.pendingPolls(),
    injectFault(fault) {
      faults.push({ spec: fault, left: fault.times ?? 1 });
    },
    clearFaults() {
      faults.length = 0;
    },
    waitForRun(runId, timeoutMs = 10_000) {
      const run = engine.runsById.get(runId);
      if (run === undefined) return Promise.reject(new Error(`unknown run ${runId}`));
      if (run.status !== "running") return Promise.resolve(engine.runInfo(run));
      return new Promise((resolve, reject) => {
        const onEnd = (info: RunInfo) => {
          if (info.id !== runId) return;
          clearTimeout(timer);
          events.off("runEnd", onEnd);
          resolve(info);
        };
        const timer = setTimeout(() => {
          events.off("runEnd", onEnd);
          reject(new Error(`run ${runId} still running after ${timeoutMs} ms`));
        }, timeoutMs);
        events.on("runEnd", onEnd);
      });
    },
    async close() {
      if (closing) return;
      closing = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      engine.shutdown();
      const closed = once(server, "close");
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
  return sim;
}
