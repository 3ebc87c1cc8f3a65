/**
 * Contract tests of the Task Execution Service client (src/service/client.ts) against the
 * simulator, a real HTTP server. Every test asserts what the service received (the
 * simulator's records) as well as what the client made of the answer.
 */
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { Agent, type Dispatcher } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTaskServiceClient,
  type TaskService,
  type TaskServiceClientOptions,
  type ThreadRef,
} from "../../src/service/client.ts";
import { TaskServiceError } from "../../src/service/errors.ts";
import { fileFromBytes, type UploadFile } from "../../src/service/multipart.ts";
import { hashString } from "../../tools/simulator/answers.ts";
import { parseDirectives } from "../../tools/simulator/directives.ts";
import { generateFiles } from "../../tools/simulator/files.ts";
import {
  type RequestRecord,
  type Simulator,
  startSimulator,
} from "../../tools/simulator/server.ts";

const MB = 1024 * 1024;
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

function clientFor(sim: Simulator, extra: Partial<TaskServiceClientOptions> = {}): TaskService {
  return createTaskServiceClient({
    baseUrl: sim.url,
    apiKey: sim.apiKey,
    retryMinDelayMs: 10,
    retryMaxDelayMs: 50,
    ...extra,
  });
}

async function create(client: TaskService, prompt: string) {
  const c = await client.createTask({ prompt });
  const ref: ThreadRef = { threadId: c.thread_id, projectId: c.project_id };
  return { ...c, ref };
}

/** Runs `fn` and returns the requests the simulator received meanwhile. */
async function requestsDuring<T>(
  sim: Simulator,
  fn: () => Promise<T>,
): Promise<{ value: T | undefined; error: unknown; requests: RequestRecord[] }> {
  const before = sim.requests.length;
  let value: T | undefined;
  let error: unknown;
  try {
    value = await fn();
  } catch (err) {
    error = err;
  }
  return { value, error, requests: sim.requests.slice(before) };
}

/** The rejection of `promise`, which must be a TaskServiceError. */
async function serviceError(promise: Promise<unknown>): Promise<TaskServiceError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TaskServiceError);
  return err as TaskServiceError;
}

/** The files a completed first run of `prompt` generated, rebuilt with the simulator's generator. */
function generatedFiles(prompt: string, threadId: string, count: number) {
  return generateFiles({
    threadId,
    folder: "output",
    seed: (hashString(prompt) ^ 1) >>> 0,
    title: parseDirectives(prompt).text.slice(0, 60) || "task",
    count,
    bigFileBytes: undefined,
    now: 0,
  });
}

describe("Task Execution Service client: requests and answers", () => {
  let sim: Simulator;
  let client: TaskService;
  let dir: string;

  beforeAll(async () => {
    sim = await startSimulator({ chunkDelayMs: 3, keepAliveMs: 0, answerLength: 600 });
    client = clientFor(sim);
    dir = await mkdtemp(join(tmpdir(), "task-client-contract-"));
  });
  afterAll(async () => {
    await sim?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("creates a task with every documented field", async () => {
    const prompt =
      "Build a landing page\nwith two sections:\r\n\t- pricing — “ünïcödé” 🚀\n\nThanks";
    const png = randomBytes(3000);
    const csv = new TextEncoder().encode("id,name\n1,café\n");
    const metadata = { slack: { team: "T1", channel: "C1", user: "U1" }, n: 1, tags: ["a", "b"] };
    const created = await client.createTask({
      prompt,
      agentId: "agent-42",
      modelName: "sim-model-large",
      enableThinking: true,
      reasoningEffort: "high",
      enableContextManager: true,
      source: "widget",
      metadata,
      showInRecentTasks: false,
      files: [fileFromBytes("mock.png", png), fileFromBytes("data.csv", csv, "text/csv")],
    });

    expect(created.project_id).not.toBe("");
    expect(created.thread_id).not.toBe("");
    const run = sim.run(created.agent_run_id);
    expect(run?.threadId).toBe(created.thread_id);
    expect(run?.projectId).toBe(created.project_id);
    const request = run?.request;
    expect(request).toMatchObject({
      kind: "create",
      prompt,
      agentId: "agent-42",
      modelName: "sim-model-large",
      enableThinking: true,
      reasoningEffort: "high",
      enableContextManager: true,
      source: "widget",
      showInRecentTasks: false,
    });
    expect(request?.metadata).toEqual(metadata);
    expect(request?.rawFields).toEqual({
      prompt,
      agent_id: "agent-42",
      model_name: "sim-model-large",
      enable_thinking: "true",
      reasoning_effort: "high",
      enable_context_manager: "true",
      source: "widget",
      metadata: JSON.stringify(metadata),
      show_in_recent_tasks: "false",
    });
    expect(request?.files).toEqual([
      { name: "mock.png", contentType: "image/png", size: png.byteLength, sha256: sha256(png) },
      { name: "data.csv", contentType: "text/csv", size: csv.byteLength, sha256: sha256(csv) },
    ]);
    expect(request?.ignoredFileFields).toEqual([]);
  });

  it("sends only the fields it is given, leaving defaults to the service", async () => {
    const created = await client.createTask({ prompt: "Just a prompt" });
    expect(sim.run(created.agent_run_id)?.request.rawFields).toEqual({ prompt: "Just a prompt" });
  });

  it("delivers a prompt with newlines, tabs and non-ASCII text unchanged", async () => {
    const prompt = "line one\nline two\r\n\r\n\tindented  double  spaces\n“quotes” — 日本語 👩‍💻\n";
    const created = await client.createTask({ prompt });
    expect(sim.run(created.agent_run_id)?.request.prompt).toBe(prompt);
    const history = await client.getHistory({
      threadId: created.thread_id,
      projectId: created.project_id,
    });
    expect(history.messages[0]).toMatchObject({ role: "user", content: prompt });
  });

  it("counts prompt characters as code points: 5,000 emoji are accepted", async () => {
    const prompt = "🚀".repeat(5000);
    expect(prompt.length).toBe(10_000);
    const created = await client.createTask({ prompt });
    expect(sim.run(created.agent_run_id)?.request.prompt).toBe(prompt);
  });

  it("streams a 20 MB file from disk and its bytes arrive identical", async () => {
    const path = join(dir, "archive.zip");
    const hash = createHash("sha256");
    const out = createWriteStream(path);
    for (let i = 0; i < 20; i++) {
      const block = randomBytes(MB);
      hash.update(block);
      if (!out.write(block)) await once(out, "drain");
    }
    out.end();
    await once(out, "finish");
    const file: UploadFile = {
      name: "archive.zip",
      size: (await stat(path)).size,
      open: () => createReadStream(path),
    };
    expect(file.size).toBe(20 * MB);

    const created = await client.createTask({ prompt: "Unpack this", files: [file] });
    expect(sim.run(created.agent_run_id)?.request.files).toEqual([
      {
        name: "archive.zip",
        contentType: "application/zip",
        size: 20 * MB,
        sha256: hash.digest("hex"),
      },
    ]);
  });

  it("creates a task from files alone, without a prompt", async () => {
    const md = new TextEncoder().encode("# Brief\n\nMake it blue.\n");
    const created = await client.createTask({ files: [fileFromBytes("brief.md", md)] });
    const request = sim.run(created.agent_run_id)?.request;
    expect(request?.prompt).toBeUndefined();
    expect(request?.rawFields).toEqual({});
    expect(request?.files).toEqual([
      { name: "brief.md", contentType: "text/markdown", size: md.byteLength, sha256: sha256(md) },
    ]);
  });

  it("fails an upload whose source yields fewer bytes than announced, creating nothing", async () => {
    const lying: UploadFile = {
      name: "short.txt",
      size: 100,
      async *open() {
        yield new TextEncoder().encode("only forty bytes of the hundred promised");
      },
    };
    const runsBefore = sim.runs().length;
    const err = await serviceError(client.createTask({ prompt: "Read this", files: [lying] }));
    expect(err.kind).toBe("network");
    expect(sim.runs().length).toBe(runsBefore);
  });

  it("sends X-API-Key on every request of every endpoint", async () => {
    const seen: Array<{ method: string; path: string; key: unknown }> = [];
    const recording = new Agent().compose(
      (dispatch: Dispatcher["dispatch"]): Dispatcher["dispatch"] =>
        (opts, handler) => {
          const headers = (opts.headers ?? {}) as Record<string, unknown>;
          seen.push({ method: opts.method, path: String(opts.path), key: headers["x-api-key"] });
          return dispatch(opts, handler);
        },
    );
    // One recorder for both pools (streams and reads; create, continue and stop).
    const c = clientFor(sim, { dispatcher: recording, controlDispatcher: recording });
    const created = await c.createTask({ prompt: "Key check" });
    const ref = { threadId: created.thread_id, projectId: created.project_id };
    for await (const _ of c.streamTaskResult(ref)) {
      // read the whole stream
    }
    await c.getTaskResult(ref, { timeout: 10 });
    const follow = await c.continueConversation(ref, { prompt: "More [sim:delay=60000]" });
    await c.stopAgent(ref);
    await c.getHistory(ref);
    await c.listFiles(ref);
    await recording.close();

    expect(follow.status).toBe("running");
    expect(seen.map((s) => s.method)).toEqual(["POST", "GET", "GET", "POST", "POST", "GET", "GET"]);
    for (const s of seen) expect(s.key, `${s.method} ${s.path}`).toBe(sim.apiKey);
    // The simulator never records the key, even when it travels.
    expect(JSON.stringify(sim.requests)).not.toContain(sim.apiKey);
  });

  describe("getTaskResult", () => {
    it("long-polls: with timeout=10 it holds until a short run ends and answers completed", async () => {
      const { ref, agent_run_id } = await create(client, "Short run for a long poll");
      expect(sim.run(agent_run_id)?.status).toBe("running");
      const result = await client.getTaskResult(ref, { timeout: 10 });
      const run = sim.run(agent_run_id);
      expect(result.status).toBe("completed");
      expect(run?.status).toBe("completed");
      expect(result.agent_run_id).toBe(agent_run_id);
      expect(result.response.content).toBe(run?.content);
      expect(result.response.content.length).toBe(run?.finalLength);
      expect(result.waited_seconds).toBeGreaterThan(0);
      expect(result.waited_seconds).toBeLessThan(10);
      expect(sim.requests.at(-1)?.query).toMatchObject({ timeout: "10" });
    });

    it("answers at once with timeout=0 while a long run is still running", async () => {
      const { ref, agent_run_id } = await create(client, "Long run [sim:delay=60000]");
      const started = performance.now();
      const result = await client.getTaskResult(ref, { timeout: 0 });
      expect(performance.now() - started).toBeLessThan(1000);
      expect(result.status).toBe("running");
      expect(result.agent_run_id).toBe(agent_run_id);
      expect(result.response.content).toBe("");
      expect(sim.pendingPolls()).toBe(0);
      await client.stopAgent(ref);
    });

    it("reads each file's content alone: utf-8 and base64 decode to the generated bytes; a result keeps none", async () => {
      const prompt = "Make files [sim:files=5]";
      const { ref, agent_run_id } = await create(client, prompt);
      // Asked for, the content comes with the result, and the client keeps none of it.
      const result = await client.getTaskResult(ref, { timeout: 10, includeFileContent: true });
      expect(result.status).toBe("completed");
      const expected = generatedFiles(prompt, ref.threadId, 5);
      expect(sim.run(agent_run_id)?.files.map((f) => [f.name, f.size])).toEqual(
        expected.map((f) => [f.name, f.content.length]),
      );
      expect(result.files.map((f) => f.file_name)).toEqual([
        "report.md",
        "chart.png",
        "data.json",
        "table.csv",
        "notes.txt",
      ]);
      for (const [i, file] of result.files.entries()) {
        const want = expected[i];
        expect(file.file_size).toBe(want?.content.length);
        expect(Object.keys(file)).not.toContain("content");
        const bytes = await client.readResultFile(
          ref,
          { position: i, fileId: file.file_id },
          { maxBytes: 1024 * 1024 },
        );
        expect(bytes?.equals(want?.content ?? Buffer.alloc(0)), file.file_name).toBe(true);
      }
      const png = await client.readResultFile(
        ref,
        { position: 1, fileId: result.files[1]?.file_id ?? "" },
        { maxBytes: 1024 * 1024 },
      );
      expect(png?.subarray(1, 4).toString()).toBe("PNG");
    });

    it("pages through the files of a result with page and pageSize", async () => {
      const { ref, agent_run_id } = await create(client, "Many files [sim:files=5]");
      await sim.waitForRun(agent_run_id);
      const pages = [];
      for (const page of [1, 2, 3]) {
        pages.push(await client.getTaskResult(ref, { timeout: 0, page, pageSize: 2 }));
      }
      expect(pages.map((p) => p.files.length)).toEqual([2, 2, 1]);
      expect(pages.map((p) => p.pagination)).toEqual([
        expect.objectContaining({
          current_page: 1,
          total_items: 5,
          total_pages: 3,
          has_next: true,
        }),
        expect.objectContaining({ current_page: 2, has_next: true }),
        expect.objectContaining({ current_page: 3, has_next: false }),
      ]);
      expect(pages.flatMap((p) => p.files.map((f) => f.file_id))).toEqual(
        sim.run(agent_run_id)?.files.map((f) => f.fileId),
      );
      expect(sim.requests.at(-1)?.query).toMatchObject({ page: "3", page_size: "2" });
    });

    it("answers no_run for a thread that has no run", async () => {
      const { ref } = await create(client, "Nothing to run [sim:norun]");
      const result = await client.getTaskResult(ref, { timeout: 5 });
      expect(result.status).toBe("no_run");
      expect(result.agent_run_id).toBeNull();
      expect(result.response.content).toBe("");
      expect(result.files).toEqual([]);
      expect(result.code_blocks).toEqual([]);
    });
  });

  describe("conversation", () => {
    let ref: ThreadRef;
    let firstRunId: string;
    let secondRunId: string;

    beforeAll(async () => {
      const created = await create(client, "First turn [sim:files=1]");
      ref = created.ref;
      firstRunId = created.agent_run_id;
      await sim.waitForRun(firstRunId);
    });

    it("continues a conversation with a prompt and files", async () => {
      const prompt = "Second turn:\nmake it\tgreener";
      const notes = new TextEncoder().encode("more context 🌿\n");
      const answer = await client.continueConversation(ref, {
        prompt,
        files: [fileFromBytes("context.txt", notes)],
      });
      expect(answer.status).toBe("running");
      secondRunId = answer.agent_run_id;
      const run = sim.run(secondRunId);
      expect(run).toMatchObject({ threadId: ref.threadId, turn: 2, followUp: true, prompt });
      expect(run?.request).toMatchObject({ kind: "continue", prompt });
      expect(run?.request.files).toEqual([
        {
          name: "context.txt",
          contentType: "text/plain",
          size: notes.byteLength,
          sha256: sha256(notes),
        },
      ]);
      expect(sim.requests.at(-1)).toMatchObject({
        method: "POST",
        path: `/api/v1/public/threads/${ref.threadId}/response`,
        query: { project_id: ref.projectId },
      });
      await sim.waitForRun(secondRunId);
    });

    it("refuses a follow-up while a run is in progress (409) and does not retry it", async () => {
      const busy = await create(client, "Busy [sim:delay=60000]");
      const { error, requests } = await requestsDuring(sim, () =>
        client.continueConversation(busy.ref, { prompt: "Are you done?" }),
      );
      expect(error).toBeInstanceOf(TaskServiceError);
      expect(error).toMatchObject({ status: 409, kind: "bad_request" });
      expect((error as TaskServiceError).detail).toContain("already in progress");
      expect(requests).toHaveLength(1);
      await client.stopAgent(busy.ref);
    });

    it("reads the history, earliest first, with user and assistant messages", async () => {
      const history = await client.getHistory(ref);
      expect(history.thread_id).toBe(ref.threadId);
      expect(history.messages.map((m) => m.role)).toEqual([
        "user",
        "assistant",
        "user",
        "assistant",
      ]);
      expect(history.messages.map((m) => m.content)).toEqual([
        sim.run(firstRunId)?.prompt,
        sim.run(firstRunId)?.content,
        sim.run(secondRunId)?.prompt,
        sim.run(secondRunId)?.content,
      ]);
      const assistant = history.messages[1];
      expect(typeof assistant?.has_code).toBe("boolean");
      expect(assistant?.has_files).toBe(true);
      expect(assistant?.created_at).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
      expect(history.pagination).toMatchObject({
        current_page: 1,
        total_pages: 1,
        has_next: false,
      });
    });

    it("sends every history query option", async () => {
      await client.getHistory(ref, {
        page: 1,
        pageSize: 50,
        includeFileContent: true,
        includeStatusMessages: true,
        compact: true,
      });
      expect(sim.requests.at(-1)).toMatchObject({
        method: "GET",
        path: `/api/v1/public/threads/${ref.threadId}/history`,
        query: {
          project_id: ref.projectId,
          page: "1",
          page_size: "50",
          include_file_content: "true",
          include_status_messages: "true",
          compact: "true",
        },
      });
    });

    it("includes status messages when asked", async () => {
      const history = await client.getHistory(ref, { includeStatusMessages: true });
      expect(history.messages.map((m) => m.role)).toEqual([
        "user",
        "status",
        "assistant",
        "status",
        "user",
        "status",
        "assistant",
        "status",
      ]);
      const end = JSON.parse(history.messages[3]?.content ?? "{}");
      expect(end).toMatchObject({ status_type: "thread_run_end", status: "completed" });
    });

    it("returns minimal fields in compact mode", async () => {
      const history = await client.getHistory(ref, { compact: true });
      expect(history.messages).toHaveLength(4);
      for (const m of history.messages) {
        expect(m.created_at ?? undefined).toBeUndefined();
        expect(m.has_code ?? undefined).toBeUndefined();
        expect(m.content).not.toBe("");
      }
    });

    it("pages through the history", async () => {
      const all = await client.getHistory(ref, { includeStatusMessages: true });
      const first = await client.getHistory(ref, { includeStatusMessages: true, pageSize: 3 });
      const seen = [...first.messages];
      expect(first.pagination).toMatchObject({ current_page: 1, total_pages: 3, has_next: true });
      let page = 1;
      let last = first;
      while (last.pagination?.has_next) {
        page++;
        last = await client.getHistory(ref, { includeStatusMessages: true, pageSize: 3, page });
        expect(last.pagination?.current_page).toBe(page);
        seen.push(...last.messages);
      }
      expect(page).toBe(3);
      expect(last.messages).toHaveLength(2);
      expect(seen).toEqual(all.messages);
    });

    it("lists the thread's files, page by page", async () => {
      const { ref: filesRef, agent_run_id } = await create(client, "Five files [sim:files=5]");
      await sim.waitForRun(agent_run_id);
      const all = await client.listFiles(filesRef);
      expect(all.files).toHaveLength(5);
      expect(all.pagination).toMatchObject({ current_page: 1, total_items: 5 });
      expect(all.files[1]).toMatchObject({ file_name: "chart.png", file_type: "image/png" });
      for (const f of all.files)
        expect(f.file_id.startsWith(`${filesRef.threadId}:/workspace/`)).toBe(true);

      const pages = [];
      for (const page of [1, 2, 3])
        pages.push(await client.listFiles(filesRef, { page, pageSize: 2 }));
      expect(pages.map((p) => p.files.length)).toEqual([2, 2, 1]);
      expect(pages.map((p) => p.pagination?.current_page)).toEqual([1, 2, 3]);
      expect(pages.flatMap((p) => p.files)).toEqual(all.files);
      expect(sim.requests.at(-1)?.query).toMatchObject({ page: "3", page_size: "2" });
    });
  });

  describe("stopAgent", () => {
    it("stops a running run; stopping it again is a bad request with the service's detail", async () => {
      const { ref, agent_run_id } = await create(client, "Stop me [sim:delay=60000]");
      const stopped = await client.stopAgent(ref);
      expect(stopped).toMatchObject({ agent_run_id, status: "stopped" });
      expect(sim.run(agent_run_id)?.status).toBe("stopped");
      expect((await client.getTaskResult(ref, { timeout: 0 })).status).toBe("stopped");

      const { error, requests } = await requestsDuring(sim, () => client.stopAgent(ref));
      expect(error).toBeInstanceOf(TaskServiceError);
      expect(error).toMatchObject({
        kind: "bad_request",
        status: 400,
        detail: "No running agent for this thread",
      });
      expect((error as Error).message).toContain("No running agent for this thread");
      expect(requests).toHaveLength(1);
    });
  });
});

describe("Task Execution Service client: errors", () => {
  let sim: Simulator;
  let client: TaskService;
  let ref: ThreadRef;

  beforeAll(async () => {
    sim = await startSimulator({ chunkDelayMs: 3, keepAliveMs: 0, answerLength: 300 });
    client = clientFor(sim);
    ({ ref } = await create(client, "An existing thread"));
  });
  afterAll(async () => {
    await sim?.close();
  });

  it("reports a wrong API key as auth (401) without ever repeating the key", async () => {
    const secret = "he-WRONG-3f9a8b7c6d5e4f3a2b1c";
    const bad = createTaskServiceClient({ baseUrl: sim.url, apiKey: secret });
    const calls: Array<() => Promise<unknown>> = [
      () => bad.createTask({ prompt: "hello" }),
      () => bad.getTaskResult(ref, { timeout: 0 }),
      () => bad.getHistory(ref),
    ];
    for (const call of calls) {
      const { error, requests } = await requestsDuring(sim, call);
      expect(error).toBeInstanceOf(TaskServiceError);
      const err = error as TaskServiceError;
      expect(err).toMatchObject({ kind: "auth", status: 401, detail: "Invalid API key" });
      expect(err.transient).toBe(false);
      expect(requests).toHaveLength(1);
      for (const text of [
        err.message,
        err.detail,
        String(err),
        inspect(err),
        JSON.stringify(err),
      ]) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain(secret.slice(3));
      }
    }
  });

  it("reports a missing API key as auth (401)", async () => {
    const keyless = createTaskServiceClient({ baseUrl: sim.url, apiKey: "" });
    const err = await serviceError(keyless.listFiles(ref));
    expect(err).toMatchObject({ kind: "auth", status: 401 });
    expect(err.detail).toContain("X-API-Key");
  });

  it("reports 400 (missing project_id) as bad_request with the detail, without retrying", async () => {
    const { error, requests } = await requestsDuring(sim, () =>
      client.getTaskResult({ threadId: ref.threadId, projectId: "" }, { timeout: 0 }),
    );
    expect(error).toMatchObject({
      kind: "bad_request",
      status: 400,
      detail: "Missing required query parameter: project_id",
    });
    expect(requests).toHaveLength(1);
  });

  it("reports 402 as credits", async () => {
    const err = await serviceError(client.createTask({ prompt: "Costly [sim:credits]" }));
    expect(err).toMatchObject({ kind: "credits", status: 402 });
    expect(err.detail).toContain("Insufficient credits");
    expect(err.message).toContain("HTTP 402");
  });

  it("reports 403 for a project that does not own the thread", async () => {
    const other = await create(client, "Someone else's thread");
    const err = await serviceError(
      client.getHistory({ threadId: ref.threadId, projectId: other.project_id }),
    );
    expect(err).toMatchObject({
      kind: "forbidden",
      status: 403,
      detail: "Access denied: the project does not own this thread",
    });
  });

  it("reports 404 for an unknown thread and for an unknown project", async () => {
    const thread = await serviceError(
      client.listFiles({ threadId: "thr_does_not_exist", projectId: ref.projectId }),
    );
    expect(thread).toMatchObject({ kind: "not_found", status: 404 });
    expect(thread.detail).toContain("thr_does_not_exist");

    const project = await serviceError(
      client.stopAgent({ threadId: ref.threadId, projectId: "proj_nobody" }),
    );
    expect(project).toMatchObject({ kind: "not_found", status: 404 });
    expect(project.detail).toContain("proj_nobody");
  });

  it("flattens a 422 detail list into a readable detail and keeps the issues", async () => {
    const err = await serviceError(client.createTask({ prompt: "Refused [sim:fail_create=422]" }));
    expect(err).toMatchObject({ kind: "validation", status: 422 });
    expect(err.issues).toEqual([
      {
        loc: ["body", "prompt"],
        msg: "Value error, the prompt was rejected by the content policy",
        type: "value_error",
      },
    ]);
    expect(err.detail).toBe("prompt: Value error, the prompt was rejected by the content policy");
    expect(err.message).toContain(err.detail);
    expect(err.message).not.toContain("[object");
  });

  it("reports 429 as rate_limited with retryAfterMs from Retry-After, without retrying a create", async () => {
    const { error, requests } = await requestsDuring(sim, () =>
      client.createTask({ prompt: "Too fast [sim:fail_create=429]" }),
    );
    expect(error).toMatchObject({ kind: "rate_limited", status: 429, retryAfterMs: 7000 });
    expect((error as TaskServiceError).transient).toBe(true);
    expect(requests).toHaveLength(1);
  });

  it("reports 500 as server, without retrying a create", async () => {
    const { error, requests } = await requestsDuring(sim, () =>
      client.createTask({ prompt: "Boom [sim:fail_create=500]" }),
    );
    expect(error).toMatchObject({ kind: "server", status: 500, detail: "Internal server error" });
    expect(requests).toHaveLength(1);
  });

  const fake = (name: string, size: number): UploadFile => ({
    name,
    size,
    open() {
      throw new Error("a refused file must never be read");
    },
  });

  it.each([
    ["a prompt of 5,001 characters", { prompt: "x".repeat(5001) }, "prompt_length"],
    ["no prompt and no files", {}, "prompt_required"],
    ["a blank prompt and no files", { prompt: " \n\t " }, "prompt_required"],
    [
      "11 files",
      { prompt: "p", files: Array.from({ length: 11 }, (_, i) => fake(`f${i}.txt`, 10)) },
      "file_count",
    ],
    ["a file over 50 MB", { prompt: "p", files: [fake("huge.pdf", 50 * MB + 1)] }, "file_size"],
    [
      "files adding up to over 200 MB",
      { prompt: "p", files: Array.from({ length: 5 }, (_, i) => fake(`part${i}.zip`, 45 * MB)) },
      "total_size",
    ],
    [
      "a file type the service does not accept",
      { prompt: "p", files: [fake("tool.exe", 10)] },
      "file_type",
    ],
  ])("refuses %s before sending any request", async (_what, input, limit) => {
    const before = sim.requests.length;
    const err = await serviceError(client.createTask(input));
    expect(err).toMatchObject({ kind: "input", limit, status: undefined });
    expect(err.message).not.toBe("");
    const follow = await serviceError(client.continueConversation(ref, input));
    expect(follow).toMatchObject({ kind: "input", limit });
    expect(sim.requests.length).toBe(before);
  });

  it.each([
    [
      "getTaskResult timeout 601",
      (c: TaskService) => c.getTaskResult(ref, { timeout: 601 }),
      "timeout",
    ],
    [
      "getTaskResult timeout -1",
      (c: TaskService) => c.getTaskResult(ref, { timeout: -1 }),
      "timeout",
    ],
    [
      "getTaskResult pageSize 0",
      (c: TaskService) => c.getTaskResult(ref, { pageSize: 0 }),
      "page_size",
    ],
    [
      "getTaskResult pageSize 1001",
      (c: TaskService) => c.getTaskResult(ref, { pageSize: 1001 }),
      "page_size",
    ],
    ["getHistory page 0", (c: TaskService) => c.getHistory(ref, { page: 0 }), "page"],
    [
      "listFiles pageSize 2.5",
      (c: TaskService) => c.listFiles(ref, { pageSize: 2.5 }),
      "page_size",
    ],
  ])("refuses %s as a rejected promise, before sending any request", async (_what, call, limit) => {
    const before = sim.requests.length;
    let promise: Promise<unknown> | undefined;
    expect(() => {
      promise = call(client);
    }, "must reject, not throw synchronously").not.toThrow();
    const err = await serviceError(promise ?? Promise.resolve());
    expect(err).toMatchObject({ kind: "input", limit });
    expect(sim.requests.length).toBe(before);
  });
});

describe("Task Execution Service client: retries", () => {
  let sim: Simulator;
  let client: TaskService;

  beforeAll(async () => {
    sim = await startSimulator({ chunkDelayMs: 3, keepAliveMs: 0, answerLength: 300 });
    client = clientFor(sim);
  });
  afterAll(async () => {
    await sim?.close();
  });

  const onThread = (requests: RequestRecord[], threadId: string, suffix: string) =>
    requests.filter((r) => r.path === `/api/v1/public/threads/${threadId}${suffix}`);

  it("retries a result read through two 500s and succeeds on the third request", async () => {
    const { ref, agent_run_id } = await create(client, "Flaky polls [sim:fail_poll=500x2]");
    const { value, requests } = await requestsDuring(sim, () =>
      client.getTaskResult(ref, { timeout: 10 }),
    );
    expect(value?.status).toBe("completed");
    expect(value?.agent_run_id).toBe(agent_run_id);
    const polls = onThread(requests, ref.threadId, "/response");
    expect(polls.map((r) => r.status)).toEqual([500, 500, 200]);
  });

  type Read = (c: TaskService, ref: ThreadRef) => Promise<unknown>;
  it.each<["history" | "files" | "stop", number, Read]>([
    ["history", 502, (c, ref) => c.getHistory(ref)],
    ["files", 503, (c, ref) => c.listFiles(ref)],
    ["stop", 500, (c, ref) => c.stopAgent(ref)],
  ])("retries %s through two %i answers", async (endpoint, status, call) => {
    const { ref } = await create(client, `Retry ${endpoint} [sim:delay=60000]`);
    // Retry-After 0 keeps the 503's default 7 s Retry-After out of the test's way.
    sim.injectFault({
      endpoint,
      status,
      times: 2,
      threadId: ref.threadId,
      headers: { "Retry-After": "0" },
    });
    const { value, error, requests } = await requestsDuring(sim, () => call(client, ref));
    expect(error).toBeUndefined();
    expect(value).toMatchObject({ success: true });
    expect(requests.map((r) => r.status)).toEqual([status, status, 200]);
    if (endpoint !== "stop") await client.stopAgent(ref);
  });

  it("retries a read after a 429, waiting at least as long as Retry-After says", async () => {
    const { ref, agent_run_id } = await create(client, "Rate limited read");
    await sim.waitForRun(agent_run_id);
    sim.injectFault({
      endpoint: "files",
      status: 429,
      times: 1,
      headers: { "Retry-After": "0.3" },
    });
    const { value, requests } = await requestsDuring(sim, () => client.listFiles(ref));
    expect(value?.success).toBe(true);
    expect(requests.map((r) => r.status)).toEqual([429, 200]);
    const [first, second] = requests;
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(290);
  });

  it("retries a read after the connection is reset", async () => {
    const { ref, agent_run_id } = await create(client, "Reset read");
    await sim.waitForRun(agent_run_id);
    sim.injectFault({ endpoint: "history", reset: true, times: 1, threadId: ref.threadId });
    const { value, error, requests } = await requestsDuring(sim, () => client.getHistory(ref));
    expect(error).toBeUndefined();
    expect(value?.messages.length).toBe(2);
    expect(onThread(requests, ref.threadId, "/history")).toHaveLength(2);
  });

  it("gives up after the configured number of retries with the last error", async () => {
    const { ref, agent_run_id } = await create(client, "Always failing reads");
    await sim.waitForRun(agent_run_id);
    const twice = clientFor(sim, { retries: 2 });
    sim.injectFault({ endpoint: "result", status: 500, times: 10, threadId: ref.threadId });
    const { error, requests } = await requestsDuring(sim, () =>
      twice.getTaskResult(ref, { timeout: 0 }),
    );
    sim.clearFaults();
    expect(error).toBeInstanceOf(TaskServiceError);
    expect(error).toMatchObject({ kind: "server", status: 500 });
    expect(requests).toHaveLength(3);
  });

  it("does not retry a create on 500, nor after a reset connection", async () => {
    sim.injectFault({ endpoint: "create", status: 500, times: 1 });
    const failed = await requestsDuring(sim, () => client.createTask({ prompt: "Once only" }));
    expect(failed.error).toMatchObject({ kind: "server", status: 500 });
    expect(failed.requests).toHaveLength(1);

    sim.injectFault({ endpoint: "create", reset: true, times: 1 });
    const runsBefore = sim.runs().length;
    const reset = await requestsDuring(sim, () => client.createTask({ prompt: "Once only" }));
    expect(reset.error).toBeInstanceOf(TaskServiceError);
    expect(reset.error).toMatchObject({ kind: "network" });
    expect(reset.requests).toHaveLength(1);
    expect(sim.runs().length).toBe(runsBefore);
  });

  it("does not retry a follow-up on 500", async () => {
    const { ref, agent_run_id } = await create(client, "Then a failing follow-up");
    await sim.waitForRun(agent_run_id);
    sim.injectFault({ endpoint: "continue", status: 500, times: 1 });
    const { error, requests } = await requestsDuring(sim, () =>
      client.continueConversation(ref, { prompt: "Again" }),
    );
    expect(error).toMatchObject({ kind: "server", status: 500 });
    expect(requests).toHaveLength(1);
    expect(sim.thread(ref.threadId)?.runIds).toEqual([agent_run_id]);
  });

  it("aborts a held long poll promptly and the service sees the request go away", async () => {
    const { ref } = await create(client, "Held poll [sim:delay=60000]");
    const ctl = new AbortController();
    const gone = new Promise<RequestRecord>((resolve) => {
      const on = (r: RequestRecord) => {
        if (r.path.endsWith(`${ref.threadId}/response`) && r.method === "GET") {
          sim.events.off("request", on);
          resolve(r);
        }
      };
      sim.events.on("request", on);
    });
    const poll = client.getTaskResult(ref, { timeout: 600 }, { signal: ctl.signal });
    const held = new Promise<void>((resolve) => {
      const check = () => (sim.pendingPolls() > 0 ? resolve() : setImmediate(check));
      check();
    });
    await held;
    const abortedAt = performance.now();
    ctl.abort();
    const err = await poll.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as Error).name).toBe("AbortError");
    expect(performance.now() - abortedAt).toBeLessThan(500);
    await gone;
    expect(sim.pendingPolls()).toBe(0);
    await client.stopAgent(ref);
  });
});
