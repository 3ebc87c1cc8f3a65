/**
 * The simulator's hostile service, as the memory benchmark and tests use it: streams whose one
 * event never ends, a stream answered with JSON that never ends, an answer that never ends,
 * files of many MB inlined whatever their size, and Japanese answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../../tools/simulator/server.ts";
import { type Api, api } from "./helpers.ts";

let sim: Simulator;
let c: Api;

beforeAll(async () => {
  sim = await startSimulator({ chunkDelayMs: 2, answerLength: 400, apiKeys: ["he-test-key"] });
  c = api(sim);
});

afterAll(async () => {
  await sim.close();
});

/** The first `bytes` of a response body, as text; the connection is then closed. */
async function head(res: Response, bytes: number): Promise<string> {
  const reader = res.body?.getReader();
  let text = "";
  const decoder = new TextDecoder();
  while (reader && text.length < bytes) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader?.cancel();
  return text;
}

describe("abuse=comments", () => {
  it("streams one event that never ends: data and comment lines, never a blank line", async () => {
    const t = await c.createOk("Comments [sim:abuse=comments] [sim:length=200]");
    const res = await c.get(`/threads/${t.thread_id}/response`, {
      project_id: t.project_id,
      realtime: true,
    });
    const text = await head(res, 1_000_000);
    expect(text.length).toBeGreaterThanOrEqual(1_000_000);
    expect(text).toMatch(/^data: x+\n: still here\ndata: x+\n/);
    expect(text).not.toContain("\n\n");
    // The run itself goes on and completes, as a poll shows.
    await sim.waitForRun(t.agent_run_id);
    expect((await c.result(t)).status).toBe("completed");
  });
});

describe("abuse=json", () => {
  it("answers the stream with JSON whose text never ends; a poll is as usual", async () => {
    const t = await c.createOk("Json [sim:abuse=json] [sim:length=200]");
    const res = await c.get(`/threads/${t.thread_id}/response`, {
      project_id: t.project_id,
      realtime: true,
    });
    expect(res.headers.get("content-type")).toContain("application/json");
    const text = await head(res, 2_000_000);
    expect(text.startsWith('{"success":true,"status":"running","response":')).toBe(true);
    expect(text.length).toBeGreaterThanOrEqual(2_000_000);
    await sim.waitForRun(t.agent_run_id);
    expect((await c.result(t)).response?.content).toHaveLength(200);
  });
});

describe("abuse=runaway", () => {
  it("says its answer again and again, past its length, until it is stopped", async () => {
    const t = await c.createOk("Runaway [sim:abuse=runaway] [sim:length=300] [sim:chunk=200]");
    const now = () => c.result(t, { timeout: 0 });
    let running = await now();
    while ((running.response?.content.length ?? 0) <= 3000) running = await now();
    expect(running.status).toBe("running");
    const text = running.response?.content ?? "";
    // Its answer (of about 300 characters), then the same again.
    const period = text.indexOf("# Runaway", 1);
    expect(period).toBeGreaterThan(250);
    expect(text.slice(period, 2 * period)).toBe(text.slice(0, period));
    const stop = await c.post(`/threads/${t.thread_id}/agent/stop`, { project_id: t.project_id });
    expect(stop.status).toBe(200);
    expect((await now()).status).toBe("stopped");
  });
});

describe("bigfiles=NxMB", () => {
  it("inlines files of many MB whatever the inline limit, each exact, one a page or all at once", async () => {
    const t = await c.createOk("Clips [sim:bigfiles=2x3] [sim:length=50]");
    await sim.waitForRun(t.agent_run_id);
    const meta = await c.result(t);
    expect(meta.files.map((f) => [f.file_name, f.file_size])).toEqual([
      ["clip-1.mp4", 3 * 1024 * 1024],
      ["clip-2.mp4", 3 * 1024 * 1024],
    ]);
    const one = await c.result(t, { include_file_content: true, page: 2, page_size: 1 });
    const second = Buffer.from(one.files[0]?.content ?? "", "base64");
    expect(one.files.map((f) => f.file_name)).toEqual(["clip-2.mp4"]);
    expect(second.length).toBe(3 * 1024 * 1024);
    const all = await c.result(t, { include_file_content: true });
    expect(all.files.map((f) => f.included_inline)).toEqual([true, true]);
    expect(Buffer.from(all.files[1]?.content ?? "", "base64").equals(second)).toBe(true);
    expect(second.subarray(0, 64).equals(second.subarray(64, 128))).toBe(false);
  });
});

describe("lang=ja", () => {
  it("answers in Japanese, of the length asked, its Markdown as in English", async () => {
    const t = await c.createOk("Japanese [sim:lang=ja] [sim:length=3000]");
    await sim.waitForRun(t.agent_run_id);
    const text = (await c.result(t)).response?.content ?? "";
    expect(text.length).toBeGreaterThanOrEqual(2900);
    expect(text).not.toMatch(/[a-zA-Z]/);
    expect(text).toContain("```");
    expect(Buffer.byteLength(text)).toBeGreaterThan(2 * text.length);
  });
});
