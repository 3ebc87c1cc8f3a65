import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../../tools/simulator/server.ts";
import { type Api, api, type Created, formOf, until } from "./helpers.ts";

let sim: Simulator;
let c: Api;

beforeAll(async () => {
  sim = await startSimulator({
    chunkDelayMs: 5,
    answerLength: 400,
    inlineLimitBytes: 4096,
    apiKeys: ["he-test-key", "he-second-key"],
  });
  c = api(sim);
});

afterAll(async () => {
  await sim.close();
});

async function detail(res: Response): Promise<unknown> {
  const body = (await res.json()) as { detail: unknown };
  return body.detail;
}

async function completed(prompt: string): Promise<Created> {
  const created = await c.createOk(prompt);
  await sim.waitForRun(created.agent_run_id);
  return created;
}

describe("authentication", () => {
  it("answers 401 on every endpoint without a key or with a wrong one, never echoing it", async () => {
    const t = await completed("auth target");
    const q = `?project_id=${t.project_id}`;
    const calls: [string, string][] = [
      ["POST", "/quick-action"],
      ["GET", `/threads/${t.thread_id}/response${q}`],
      ["GET", `/threads/${t.thread_id}/response${q}&realtime=true`],
      ["POST", `/threads/${t.thread_id}/response${q}`],
      ["GET", `/threads/${t.thread_id}/history${q}`],
      ["POST", `/threads/${t.thread_id}/agent/stop${q}`],
      ["GET", `/threads/${t.thread_id}/files${q}`],
    ];
    for (const [method, path] of calls) {
      const body = method === "POST" ? formOf({ prompt: "x" }) : undefined;
      const missing = await fetch(`${c.base}${path}`, { method, body });
      expect(missing.status, `${method} ${path}`).toBe(401);
      expect(await detail(missing)).toMatch(/API key/);
      const wrong = await fetch(`${c.base}${path}`, {
        method,
        body: method === "POST" ? formOf({ prompt: "x" }) : undefined,
        headers: { "X-API-Key": "he-not-a-real-key-123" },
      });
      expect(wrong.status).toBe(401);
      expect(await wrong.text()).not.toContain("he-not-a-real-key-123");
    }
    // Every configured key works.
    expect((await api(sim, "he-second-key").result(t)).status).toBe("completed");
  });

  it("never records the key, redacts secret-looking query parameters", async () => {
    await c.get("/threads/x/files", { project_id: "p", api_key: "he-test-key" });
    const text = JSON.stringify(sim.requests);
    expect(text).not.toContain("he-test-key");
    expect(sim.requests.at(-1)?.query.api_key).toBe("[redacted]");
    expect(sim.requests.at(-1)?.status).toBe(404);
  });

  it("answers 404 for unknown routes and 405 for a wrong method", async () => {
    const unknown = await c.get("/nope");
    expect(unknown.status).toBe(404);
    expect(await detail(unknown)).toBe("Not Found");
    expect((await fetch(`${sim.url}/elsewhere`)).status).toBe(404);
    const wrong = await c.get("/quick-action");
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("POST");
  });
});

describe("create task and get results", () => {
  it("creates project, thread and run and records every parsed field", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const res = await c.create(
      {
        prompt: "Summarise this [sim:length=300]",
        agent_id: "agent-7",
        model_name: "big-model",
        enable_thinking: "true",
        reasoning_effort: "high",
        enable_context_manager: "false",
        source: "widget",
        metadata: '{"slack":{"team":"T1","channel":"C1"},"n":1}',
        show_in_recent_tasks: "false",
      },
      [
        { name: "shot.PNG", data: png, type: "image/png" },
        { name: "notes.md", data: "# hi" },
      ],
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as Created & { success: boolean; message: string };
    expect(body.success).toBe(true);
    expect(body.project_id).toMatch(/^proj_/);
    expect(body.thread_id).toMatch(/^thr_/);
    expect(body.agent_run_id).toMatch(/^run_/);
    expect(body.message).toMatch(/created/i);
    const run = sim.run(body.agent_run_id);
    expect(run?.request).toMatchObject({
      kind: "create",
      prompt: "Summarise this [sim:length=300]",
      agentId: "agent-7",
      modelName: "big-model",
      enableThinking: true,
      reasoningEffort: "high",
      enableContextManager: false,
      source: "widget",
      metadata: { slack: { team: "T1", channel: "C1" }, n: 1 },
      showInRecentTasks: false,
    });
    expect(run?.request.files).toEqual([
      {
        name: "shot.PNG",
        contentType: "image/png",
        size: 7,
        sha256: createHash("sha256").update(png).digest("hex"),
      },
      {
        name: "notes.md",
        contentType: "application/octet-stream",
        size: 4,
        sha256: createHash("sha256").update("# hi").digest("hex"),
      },
    ]);
    expect(run?.promptText).toBe("Summarise this");
    expect(sim.thread(body.thread_id)?.runIds).toEqual([body.agent_run_id]);
  });

  it("applies the documented defaults", async () => {
    const created = await c.createOk("defaults");
    expect(sim.run(created.agent_run_id)?.request).toMatchObject({
      enableThinking: false,
      reasoningEffort: "low",
      enableContextManager: false,
      showInRecentTasks: true,
      source: undefined,
      metadata: undefined,
    });
  });

  it("long-polls until the run completes, then answers the whole result", async () => {
    const created = await c.createOk("Write a deployment checklist [sim:length=1500]");
    const r = await c.result(created, { timeout: 30 });
    expect(r.status).toBe("completed");
    expect(r.agent_run_id).toBe(created.agent_run_id);
    const run = sim.run(created.agent_run_id);
    expect(r.response?.content).toBe(run?.content);
    expect(r.response?.role).toBe("assistant");
    expect(r.response?.content.length).toBeGreaterThan(1300);
    expect(r.has_code).toBe(true);
    expect(r.code_blocks.length).toBeGreaterThan(0);
    expect(r.response?.content).toContain(
      `\`\`\`${r.code_blocks[0]?.language}\n${r.code_blocks[0]?.code}\n\`\`\``,
    );
    expect(r.waited_seconds).toBeGreaterThan(0);
    expect(r.pagination).toMatchObject({ current_page: 1, page_size: 100, total_items: 0 });
  });

  it("timeout=0 answers at once with the content so far and no files or code yet", async () => {
    const created = await c.createOk("slow one [sim:delay=60000] [sim:files=2]");
    const r = await c.result(created, { timeout: 0 });
    expect(r.status).toBe("running");
    expect(r.response?.content).toBe("");
    expect(r.files).toEqual([]);
    expect(r.code_blocks).toEqual([]);
    expect(r.waited_seconds).toBeLessThan(0.5);
    await c.post(`/threads/${created.thread_id}/agent/stop`, { project_id: created.project_id });
  });

  it("a long poll gives up after `timeout` seconds with the run still running", async () => {
    const created = await c.createOk("stalled [sim:delay=60000]");
    const started = Date.now();
    const r = await c.result(created, { timeout: 1 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
    expect(r.status).toBe("running");
    expect(r.waited_seconds).toBeGreaterThanOrEqual(0.99);
    await c.post(`/threads/${created.thread_id}/agent/stop`, { project_id: created.project_id });
  });

  it("a client hanging up during a long poll leaves nothing behind", async () => {
    const created = await c.createOk("hang up [sim:delay=60000]");
    const abort = new AbortController();
    const pending = c
      .get(`/threads/${created.thread_id}/response`, {
        project_id: created.project_id,
        timeout: 600,
      })
      .catch((e: unknown) => e);
    void pending;
    const aborted = fetch(
      `${c.base}/threads/${created.thread_id}/response?project_id=${created.project_id}&timeout=600`,
      { headers: c.headers, signal: abort.signal },
    ).catch((e: unknown) => e);
    await until(() => sim.pendingPolls() === 2, "two held polls");
    abort.abort();
    expect(await aborted).toBeInstanceOf(Error);
    await until(() => sim.pendingPolls() === 1, "the aborted poll to be released");
    // A stop answers the other poll at once.
    await c.post(`/threads/${created.thread_id}/agent/stop`, { project_id: created.project_id });
    const other = (await pending) as Response;
    expect(((await other.json()) as { status: string }).status).toBe("stopped");
    expect(sim.pendingPolls()).toBe(0);
  });

  it("[sim:norun]: ids are returned but the thread has no run", async () => {
    const created = await c.createOk("ghost [sim:norun]");
    const r = await c.result(created, { timeout: 5 });
    expect(r.status).toBe("no_run");
    expect(r.agent_run_id).toBeNull();
    expect(r.response).toBeNull();
    const stop = await c.post(`/threads/${created.thread_id}/agent/stop`, {
      project_id: created.project_id,
    });
    expect(stop.status).toBe(400);
  });
});

describe("validation", () => {
  type Issue = { loc: (string | number)[]; msg: string; type: string };

  async function issues(res: Response): Promise<Issue[]> {
    expect(res.status).toBe(422);
    const d = await detail(res);
    expect(Array.isArray(d)).toBe(true);
    return d as Issue[];
  }

  it("prompt: 1..5000 characters (code points), required without files", async () => {
    const long = await issues(await c.create({ prompt: "x".repeat(5001) }));
    expect(long[0]).toMatchObject({ loc: ["body", "prompt"], type: "string_too_long" });
    expect((await c.create({ prompt: "🚀".repeat(5000) })).status).toBe(200);
    const empty = await issues(await c.create({ prompt: "" }));
    expect(empty[0]).toMatchObject({ loc: ["body", "prompt"], type: "string_too_short" });
    const missing = await issues(await c.create({ source: "web" }));
    expect(missing[0]).toMatchObject({ loc: ["body", "prompt"], type: "missing" });
    const filesOnly = await c.create({}, [{ name: "brief.txt", data: "make it pop" }]);
    expect(filesOnly.status).toBe(200);
  });

  it("enums, booleans and metadata JSON", async () => {
    const bad = await issues(
      await c.create({
        prompt: "x",
        reasoning_effort: "extreme",
        source: "desktop",
        metadata: "{not json",
        enable_thinking: "maybe",
      }),
    );
    const byField = Object.fromEntries(bad.map((i) => [i.loc[1], i.type]));
    expect(byField).toEqual({
      reasoning_effort: "enum",
      source: "enum",
      metadata: "json_invalid",
      enable_thinking: "bool_parsing",
    });
  });

  it("at most 10 files, allowed extensions only", async () => {
    const ten = Array.from({ length: 10 }, (_, i) => ({ name: `f${i}.txt`, data: "x" }));
    expect((await c.create({ prompt: "ten" }, ten)).status).toBe(200);
    const eleven = await issues(
      await c.create({ prompt: "eleven" }, [...ten, { name: "f10.txt", data: "x" }]),
    );
    expect(eleven[0]).toMatchObject({ loc: ["body", "files"], type: "too_long" });
    const exe = await issues(
      await c.create({ prompt: "exe" }, [{ name: "virus.exe", data: "MZ" }]),
    );
    expect(exe[0]?.loc).toEqual(["body", "files", 0]);
    expect(exe[0]?.msg).toMatch(/not allowed/);
    const noExt = await issues(
      await c.create({ prompt: "noext" }, [{ name: "Makefile", data: "" }]),
    );
    expect(noExt).toHaveLength(1);
  });

  it("a file above 50 MiB is refused (real limit)", async () => {
    const big = new Uint8Array(50 * 1024 * 1024 + 1);
    const res = await issues(await c.create({ prompt: "big" }, [{ name: "huge.zip", data: big }]));
    expect(res[0]?.msg).toMatch(/too large/);
    const atLimit = await c.create({ prompt: "just fits" }, [
      { name: "ok.zip", data: big.subarray(1) },
    ]);
    expect(atLimit.status).toBe(200);
  });

  it("total upload size above the limit is refused (limit lowered for the test)", async () => {
    const small = await startSimulator({ chunkDelayMs: 5, limits: { maxTotalBytes: 1000 } });
    try {
      const s = api(small);
      const file = { name: "a.csv", data: new Uint8Array(600) };
      expect((await s.create({ prompt: "one" }, [file])).status).toBe(200);
      const two = await issues(
        await s.create({ prompt: "two" }, [file, { ...file, name: "b.csv" }]),
      );
      expect(two[0]?.msg).toMatch(/Total upload size 1200/);
    } finally {
      await small.close();
    }
  });

  it("urlencoded bodies work; other bodies are 422, broken multipart is 400", async () => {
    const url = await fetch(`${c.base}/quick-action`, {
      method: "POST",
      headers: c.headers,
      body: new URLSearchParams({ prompt: "form encoded" }),
    });
    expect(url.status).toBe(200);
    const jsonBody = await fetch(`${c.base}/quick-action`, {
      method: "POST",
      headers: { ...c.headers, "Content-Type": "application/json" },
      body: JSON.stringify({ prompt: "json" }),
    });
    expect(jsonBody.status).toBe(422);
    const broken = await fetch(`${c.base}/quick-action`, {
      method: "POST",
      headers: { ...c.headers, "Content-Type": "multipart/form-data; boundary=xyz" },
      body: '--xyz\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nunterminated',
    });
    expect(broken.status).toBe(400);
    expect(await detail(broken)).toMatch(/error parsing the body/);
  });

  it("query parameters: ranges and types (422), project_id (400), ownership (403/404)", async () => {
    const t = await completed("query checks");
    const other = await completed("other project");
    const path = `/threads/${t.thread_id}/response`;
    const cases: [Record<string, string | number>, string, string][] = [
      [{ timeout: 601 }, "timeout", "less_than_equal"],
      [{ timeout: -1 }, "timeout", "greater_than_equal"],
      [{ timeout: "abc" }, "timeout", "int_parsing"],
      [{ page_size: 0 }, "page_size", "greater_than_equal"],
      [{ page_size: 1001 }, "page_size", "less_than_equal"],
      [{ page: 0 }, "page", "greater_than_equal"],
      [{ realtime: "maybe" }, "realtime", "bool_parsing"],
      [{ include_file_content: "2" }, "include_file_content", "bool_parsing"],
    ];
    for (const [query, name, type] of cases) {
      const res = await c.get(path, { project_id: t.project_id, ...query });
      const list = await issues(res);
      expect(list[0]).toMatchObject({ loc: ["query", name], type });
    }
    const h = await c.get(`/threads/${t.thread_id}/history`, {
      project_id: t.project_id,
      compact: "x",
    });
    expect((await issues(h))[0]?.loc).toEqual(["query", "compact"]);
    const noProject = await c.get(path);
    expect(noProject.status).toBe(400);
    expect(await detail(noProject)).toMatch(/project_id/);
    const foreign = await c.get(path, { project_id: other.project_id });
    expect(foreign.status).toBe(403);
    const unknownProject = await c.get(path, { project_id: "proj_nope" });
    expect(unknownProject.status).toBe(404);
    const unknownThread = await c.get("/threads/thr_nope/response", { project_id: t.project_id });
    expect(unknownThread.status).toBe(404);
    expect(await detail(unknownThread)).toMatch(/Thread not found/);
  });
});

describe("history, files, follow-up, stop", () => {
  it("history lists messages earliest first; status messages and compact on request", async () => {
    const t = await completed("history please");
    const res = await c.get(`/threads/${t.thread_id}/history`, { project_id: t.project_id });
    const h = (await res.json()) as {
      messages: Record<string, unknown>[];
      pagination: Record<string, unknown>;
    };
    expect(h.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(h.messages[0]?.content).toBe("history please");
    expect(h.messages[1]).toMatchObject({ has_code: expect.any(Boolean), has_files: false });
    expect(typeof h.messages[1]?.created_at).toBe("string");
    expect(h.pagination).toMatchObject({ current_page: 1, total_pages: 1, has_next: false });
    const full = (await (
      await c.get(`/threads/${t.thread_id}/history`, {
        project_id: t.project_id,
        include_status_messages: true,
        compact: true,
        page_size: 3,
      })
    ).json()) as { messages: Record<string, unknown>[]; pagination: Record<string, unknown> };
    expect(full.messages.map((m) => m.role)).toEqual(["user", "status", "assistant"]);
    for (const m of full.messages)
      expect(Object.keys(m).sort()).toEqual(["content", "message_id", "role"]);
    expect(full.pagination).toMatchObject({ total_pages: 2, has_next: true, total_items: 4 });
  });

  it("follow-up: refused while running (409), then a new run that says it is a follow-up", async () => {
    const t = await c.createOk("first question [sim:delay=20]");
    const busy = await c.follow(t, "too early");
    expect(busy.status).toBe(409);
    await sim.waitForRun(t.agent_run_id);
    const ok = await c.follow(t, "and in French? [sim:length=500]", [
      { name: "ctx.json", data: "{}" },
    ]);
    expect(ok.status).toBe(200);
    const f = (await ok.json()) as { agent_run_id: string; status: string; message: string };
    expect(f.status).toBe("running");
    expect(f.agent_run_id).not.toBe(t.agent_run_id);
    const r = await c.result(t, { timeout: 30 });
    expect(r.agent_run_id).toBe(f.agent_run_id);
    expect(r.response?.content).toContain("Following up on “and in French?”");
    expect(sim.run(f.agent_run_id)?.request.files[0]?.name).toBe("ctx.json");
    const h = (await (
      await c.get(`/threads/${t.thread_id}/history`, { project_id: t.project_id })
    ).json()) as { messages: { role: string; content: string }[] };
    expect(h.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    // Follow-up validation is the same as creation.
    expect((await c.follow(t, "x".repeat(5001))).status).toBe(422);
  });

  it("stop: ends the run at once, no more chunks; a second stop is 400", async () => {
    const t = await c.createOk("stop me [sim:delay=10] [sim:length=5000]");
    await until(() => (sim.run(t.agent_run_id)?.chunks ?? 0) >= 2, "two chunks");
    const q = { project_id: t.project_id };
    const res = await c.post(`/threads/${t.thread_id}/agent/stop`, q);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      success: true,
      agent_run_id: t.agent_run_id,
      status: "stopped",
      message: "Agent run stopped",
    });
    const info = sim.run(t.agent_run_id);
    expect(info?.status).toBe("stopped");
    expect(info?.stoppedAt).toBeTypeOf("number");
    const r = await c.result(t);
    expect(r.status).toBe("stopped");
    expect(r.response?.content).toBe(info?.content);
    let later = 0;
    const onChunk = (runId: string) => {
      if (runId === t.agent_run_id) later++;
    };
    sim.events.on("chunk", onChunk);
    await new Promise((r) => setTimeout(r, 60));
    sim.events.off("chunk", onChunk);
    expect(later).toBe(0);
    const again = await c.post(`/threads/${t.thread_id}/agent/stop`, q);
    expect(again.status).toBe(400);
    expect(await detail(again)).toBe("No running agent for this thread");
    // A stopped run can't be resumed, but the thread takes a follow-up.
    expect((await c.follow(t, "start over")).status).toBe(200);
  });

  it("files: generated files, paginated, inline content on request", async () => {
    const t = await completed("make files [sim:files=5]");
    const list = (await (
      await c.get(`/threads/${t.thread_id}/files`, {
        project_id: t.project_id,
        page: 3,
        page_size: 2,
      })
    ).json()) as { files: Record<string, unknown>[]; pagination: Record<string, unknown> };
    expect(list.files).toHaveLength(1);
    expect(list.pagination).toEqual({
      current_page: 3,
      page_size: 2,
      total_items: 5,
      total_pages: 3,
      has_next: false,
      has_prev: true,
    });
    const plain = await c.result(t);
    expect(plain.files).toHaveLength(5);
    expect(plain.has_files).toBe(true);
    for (const f of plain.files) {
      expect(f.included_inline).toBe(false);
      expect(f.content).toBeUndefined();
      expect(f.file_id).toBe(`${t.thread_id}:/workspace/output/${f.file_name}`);
    }
    const inline = await c.result(t, { include_file_content: true, page_size: 2, page: 1 });
    expect(inline.files.map((f) => f.file_name)).toEqual(["report.md", "chart.png"]);
    expect(inline.pagination).toMatchObject({ total_items: 5, total_pages: 3, has_next: true });
    const [md, png] = inline.files;
    expect(md).toMatchObject({
      included_inline: true,
      encoding: "utf-8",
      file_type: "text/markdown",
    });
    expect(Buffer.byteLength(md?.content ?? "")).toBe(md?.file_size);
    expect(png).toMatchObject({
      included_inline: true,
      encoding: "base64",
      file_type: "image/png",
    });
    const bytes = Buffer.from(png?.content ?? "", "base64");
    expect(bytes.length).toBe(png?.file_size);
    expect(bytes.subarray(1, 4).toString()).toBe("PNG");
  });

  it("bigfile: not inlined, download_url serves the bytes without the API key", async () => {
    const t = await completed("big data [sim:bigfile]");
    const r = await c.result(t, { include_file_content: true });
    const big = r.files.find((f) => f.file_name === "dataset-large.csv");
    expect(big?.included_inline).toBe(false);
    expect(big?.content).toBeUndefined();
    expect(big?.file_size).toBeGreaterThanOrEqual(4096);
    const dl = await fetch(big?.download_url ?? "");
    expect(dl.status).toBe(200);
    expect(dl.headers.get("content-type")).toBe("text/csv");
    const bytes = Buffer.from(await dl.arrayBuffer());
    expect(bytes.length).toBe(big?.file_size);
    expect(bytes.subarray(0, 15).toString()).toBe("id,label,value\n");
    expect((await fetch(`${sim.url}/sim-storage/download/nope/x.csv`)).status).toBe(404);
  });

  it("site: a page with its stylesheet and image by path; with a URL, the page reaches out to it", async () => {
    const t = await completed("shop front [sim:site]");
    const r = await c.result(t, { include_file_content: true });
    const byName = new Map(r.files.map((f) => [f.file_name, f]));
    expect([...byName.keys()].sort()).toEqual(["index.html", "logo.png", "style.css"]);
    expect(byName.get("index.html")).toMatchObject({ file_type: "text/html", encoding: "utf-8" });
    expect(byName.get("logo.png")?.file_path).toMatch(/\/images\/logo\.png$/);
    const html = byName.get("index.html")?.content ?? "";
    expect(html).toContain("<title>Landing page: shop front</title>");
    expect(html).toContain('href="style.css"');
    expect(html).toContain('src="images/logo.png"');
    const out = await c.result(await completed("phone home [sim:site=http://127.0.0.1:9/x]"), {
      include_file_content: true,
    });
    const page = out.files.find((f) => f.file_name === "index.html")?.content ?? "";
    expect(page).toContain('fetch("http://127.0.0.1:9/x/fetch")');
    expect(page).toContain('src="http://127.0.0.1:9/x/pixel.png"');
  });
});

describe("directives on results", () => {
  it("empty: completed with empty content, code blocks and files carry the result", async () => {
    const r = await c.result(await completed("only files [sim:empty]"), { timeout: 5 });
    expect(r.status).toBe("completed");
    expect(r.response?.content).toBe("");
    expect(r.code_blocks.length).toBeGreaterThan(0);
    expect(r.files.length).toBeGreaterThanOrEqual(2);
  });

  it("mention: the answer carries Slack mention syntax", async () => {
    const r = await c.result(await completed("ping people [sim:mention]"), { timeout: 5 });
    for (const m of ["<!channel>", "<!here>", "<!everyone>", "<@U12345>", "<#C12345>"]) {
      expect(r.response?.content).toContain(m);
    }
  });

  it("run=fail: failed after some content, with a reason", async () => {
    const t = await completed("doomed [sim:run=fail] [sim:length=1000]");
    const r = await c.result(t);
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/failed/);
    expect(r.response?.content.length).toBeGreaterThan(100);
    expect(r.response?.content.length).toBeLessThan(1000);
    expect(r.files).toEqual([]);
  });

  it("fail_create=STATUS answers realistic errors; credits is 402; xK fails K times", async () => {
    for (const status of [400, 401, 402, 403, 500, 503]) {
      const res = await c.create({ prompt: `x [sim:fail_create=${status}]` });
      expect(res.status).toBe(status);
      expect(typeof (await detail(res))).toBe("string");
    }
    expect((await c.create({ prompt: "broke [sim:credits]" })).status).toBe(402);
    const v = await c.create({ prompt: "v [sim:fail_create=422]" });
    expect(Array.isArray(await detail(v))).toBe(true);
    const limited = await c.create({ prompt: "limited [sim:fail_create=429]" });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
    expect(limited.headers.get("x-ratelimit-limit")).toBe("60");
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    const reset = Number(limited.headers.get("x-ratelimit-reset"));
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    expect(reset).toBeLessThan(Date.now() / 1000 + 60);
    const runsBefore = sim.runs().length;
    const prompt = `flaky ${Date.now()} [sim:fail_create=500x2]`;
    expect((await c.create({ prompt })).status).toBe(500);
    expect((await c.create({ prompt })).status).toBe(500);
    expect((await c.create({ prompt })).status).toBe(200);
    expect(sim.runs().length).toBe(runsBefore + 1);
  });

  it("fail_continue: in the follow-up prompt, or inherited from the task prompt", async () => {
    const t = await completed("plain task");
    const res = await c.follow(t, "more [sim:fail_continue=429]");
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("7");
    expect((await c.follow(t, "more")).status).toBe(200);
    const t2 = await completed("task [sim:fail_continue=502x1]");
    expect((await c.follow(t2, "again")).status).toBe(502);
    expect((await c.follow(t2, "again")).status).toBe(200);
  });

  it("fail_poll=STATUSxK: the results endpoint fails K times", async () => {
    const t = await completed("poll fails [sim:fail_poll=503x1]");
    const first = await c.get(`/threads/${t.thread_id}/response`, { project_id: t.project_id });
    expect(first.status).toBe(503);
    expect((await c.result(t)).status).toBe("completed");
  });
});

describe("injectFault", () => {
  it("scripts errors, delays and connection resets for the next matching requests", async () => {
    const t = await completed("faults");
    sim.injectFault({ endpoint: "result", status: 500, times: 2, threadId: t.thread_id });
    const q = { project_id: t.project_id };
    expect((await c.get(`/threads/${t.thread_id}/response`, q)).status).toBe(500);
    expect((await c.get(`/threads/${t.thread_id}/history`, q)).status).toBe(200);
    expect((await c.get(`/threads/${t.thread_id}/response`, q)).status).toBe(500);
    expect((await c.get(`/threads/${t.thread_id}/response`, q)).status).toBe(200);
    sim.injectFault({ endpoint: "files", reset: true });
    await expect(c.get(`/threads/${t.thread_id}/files`, q)).rejects.toThrow();
    sim.injectFault({ endpoint: "any", delayMs: 150 });
    const started = Date.now();
    expect((await c.get(`/threads/${t.thread_id}/files`, q)).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    sim.injectFault({ endpoint: "create", status: 429 });
    const limited = await c.create({ prompt: "x" });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
  });
});

describe("lifecycle", () => {
  it("close() ends open streams and long polls at once", async () => {
    const s = await startSimulator({ chunkDelayMs: 20 });
    const a = api(s);
    const t = await a.createOk("forever [sim:length=100000]");
    const stream = await a.get(`/threads/${t.thread_id}/response`, {
      project_id: t.project_id,
      realtime: true,
    });
    const streamed = stream.text().catch((e: unknown) => e);
    const poll = a
      .get(`/threads/${t.thread_id}/response`, { project_id: t.project_id, timeout: 600 })
      .catch((e: unknown) => e);
    await until(() => s.openStreams() === 1 && s.pendingPolls() === 1, "stream and poll");
    const started = Date.now();
    await s.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await streamed).toBeInstanceOf(Error);
    expect(await poll).toBeInstanceOf(Error);
    expect(s.openStreams()).toBe(0);
    expect(s.pendingPolls()).toBe(0);
    expect(s.run(t.agent_run_id)?.status).toBe("running"); // halted, not ended
  });

  it("keeps memory bounded: old finished threads are forgotten past maxThreads", async () => {
    const s = await startSimulator({ chunkDelayMs: 1, answerLength: 50, maxThreads: 10 });
    try {
      const a = api(s);
      for (let i = 0; i < 25; i++) {
        const t = await a.createOk(`t${i}`);
        await s.waitForRun(t.agent_run_id);
      }
      expect(s.threads().length).toBeLessThanOrEqual(10);
      expect(s.runs().length).toBeLessThanOrEqual(10);
    } finally {
      await s.close();
    }
  });
});
