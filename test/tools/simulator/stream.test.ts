import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../../tools/simulator/server.ts";
import {
  type Api,
  api,
  deltaOf,
  json,
  readSse,
  statusEvents,
  streamOf,
  textOf,
  until,
} from "./helpers.ts";

let sim: Simulator;
let c: Api;
const chunks: { runId: string; text: string; at: number }[] = [];

beforeAll(async () => {
  sim = await startSimulator({
    chunkDelayMs: 5,
    answerLength: 600,
    keepAliveMs: 0,
    onChunk: (runId, text, at) => chunks.push({ runId, text, at }),
  });
  c = api(sim);
});

afterAll(async () => {
  await sim.close();
});

async function finalContent(runId: string): Promise<string> {
  return (await sim.waitForRun(runId)).content;
}

describe("stream formats", () => {
  it("contract: status running, content deltas in order, final status, then the server closes", async () => {
    const t = await c.createOk("contract stream [sim:length=3000] [sim:chunk=60]");
    const res = await streamOf(c, t);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const read = await readSse(res);
    expect(read.error).toBeUndefined();
    expect(read.raw).not.toContain("[DONE]");
    const events = read.events.map(json) as Record<string, unknown>[];
    expect(events[0]).toMatchObject({ type: "status", status: "running" });
    expect(events.at(-1)).toMatchObject({ type: "status", status: "completed" });
    const contentEvents = events.filter((e) => e.type === "content");
    expect(contentEvents.map((e) => e.chunk_id)).toEqual(contentEvents.map((_, i) => i + 1));
    expect(contentEvents[0]).toMatchObject({ agent_run_id: t.agent_run_id });
    expect(textOf(read)).toBe(await finalContent(t.agent_run_id));
    expect(read.raw).toMatch(/[^\x20-\x7e\n]/); // UTF-8 went through intact
    expect(sim.openStreams()).toBe(0);
    // onChunk saw the same chunks.
    const mine = chunks.filter((x) => x.runId === t.agent_run_id);
    expect(mine.map((x) => x.text).join("")).toBe(textOf(read));
    expect(mine[0]?.at).toBeGreaterThan(Date.now() - 60_000);
  });

  it("agent: acknowledgement first, JSON-in-JSON chunks, a complete event repeating the text", async () => {
    const t = await c.createOk("agent stream [sim:format=agent]");
    const read = await readSse(await streamOf(c, t));
    const events = read.events.map(json) as Record<string, string>[];
    const ack = events.find((e) => e.metadata?.includes("is_acknowledgment"));
    expect(ack).toBeDefined();
    const complete = events.find((e) => e.metadata === '{"stream_status":"complete"}');
    const whole = await finalContent(t.agent_run_id);
    expect(JSON.parse(complete?.content ?? "{}")).toEqual({ role: "assistant", content: whole });
    expect(textOf(read)).toBe(whole);
    expect(statusEvents(read).at(-1)).toMatchObject({ type: "status", status: "completed" });
    const chunk = events.find((e) => e.metadata === '{"stream_status":"chunk"}');
    expect(chunk).toMatchObject({ type: "assistant", message_id: expect.any(String), sequence: 1 });
  });

  it("minimal: role/content chunks, then finish and/or thread_run_end", async () => {
    const t = await c.createOk("minimal stream [sim:format=minimal]");
    const read = await readSse(await streamOf(c, t));
    const events = read.events.map(json) as Record<string, unknown>[];
    expect(events[0]).toMatchObject({ role: "assistant" });
    expect(events[0]).not.toHaveProperty("type");
    const last = events.at(-1);
    expect(["finish", "thread_run_end"]).toContain(last?.status_type);
    expect(textOf(read)).toBe(await finalContent(t.agent_run_id));
  });

  it("follow-ups inherit the thread's stream format", async () => {
    const t = await c.createOk("sticky [sim:format=minimal]");
    await sim.waitForRun(t.agent_run_id);
    const f = await c.follow(t, "again");
    const { agent_run_id } = (await f.json()) as { agent_run_id: string };
    expect(sim.run(agent_run_id)?.format).toBe("minimal");
  });

  it("a finished run streams everything at once, then closes", async () => {
    const t = await c.createOk("done before streaming");
    const whole = await finalContent(t.agent_run_id);
    const read = await readSse(await streamOf(c, t));
    expect(textOf(read)).toBe(whole);
    expect(statusEvents(read).map((e) => e.status)).toEqual(["completed"]);
  });

  it("malformed: junk lines, odd spellings and acks; the content still adds up", async () => {
    const t = await c.createOk("junk [sim:malformed] [sim:length=2000] [sim:format=agent]");
    const read = await readSse(await streamOf(c, t));
    expect(read.raw).toContain("event: message");
    expect(read.raw).toContain("data: this is not JSON at all");
    expect(read.raw).toMatch(/\r\n/);
    expect(read.raw).toMatch(/\ndata:\{/);
    expect(read.comments.length).toBeGreaterThan(0);
    expect(read.events.some((e) => json(e) === undefined)).toBe(true);
    const whole = await finalContent(t.agent_run_id);
    expect(textOf(read)).toBe(whole);
    expect(textOf(read)).not.toContain("ACK-SHOULD-NOT-APPEAR");
    expect(read.raw).toContain("ACK-SHOULD-NOT-APPEAR");
  });

  it("keep-alive comments are sent while a stream waits", async () => {
    const s = await startSimulator({ chunkDelayMs: 5, keepAliveMs: 10 });
    try {
      const a = api(s);
      const t = await a.createOk("slow [sim:delay=100] [sim:length=20] [sim:chunk=10]");
      const read = await readSse(await streamOf(a, t));
      expect(read.comments.filter((x) => x.includes("keep-alive")).length).toBeGreaterThan(3);
      expect(read.raw).toContain(": keep-alive\n\n");
    } finally {
      await s.close();
    }
  });
});

describe("stream faults", () => {
  it("drop=N cuts the first connection mid-event after N content events; the run goes on", async () => {
    const t = await c.createOk("dropme [sim:drop=4] [sim:length=2000] [sim:delay=3]");
    const first = await readSse(await streamOf(c, t));
    expect(first.error).toBeDefined();
    expect(first.events.filter((e) => deltaOf(e) !== undefined)).toHaveLength(4);
    expect(first.raw.endsWith("\n\n")).toBe(false);
    expect(sim.run(t.agent_run_id)?.status).toBe("running");
    // continue (default): the reconnection only gets what is produced from now on.
    const atReconnect = sim.run(t.agent_run_id)?.content.length ?? 0;
    const second = await readSse(await streamOf(c, t));
    expect(second.error).toBeUndefined();
    const whole = await finalContent(t.agent_run_id);
    const tail = textOf(second);
    expect(whole.endsWith(tail)).toBe(true);
    expect(tail.length).toBeLessThanOrEqual(whole.length - atReconnect);
    const ids = second.events.map(json).map((e) => (e as { chunk_id?: number }).chunk_id);
    expect(ids.find((x) => x !== undefined)).toBeGreaterThan(4);
  });

  it("reconnect=replay: a reconnection gets every chunk again with the original ids", async () => {
    const t = await c.createOk("replayme [sim:drop=3] [sim:reconnect=replay] [sim:delay=3]");
    const first = await readSse(await streamOf(c, t));
    expect(first.error).toBeDefined();
    const second = await readSse(await streamOf(c, t));
    expect(textOf(second)).toBe(await finalContent(t.agent_run_id));
    const ids = second.events
      .map((e) => (json(e) as { chunk_id?: number }).chunk_id)
      .filter((x) => x !== undefined);
    expect(ids.slice(0, 3)).toEqual([1, 2, 3]);
    // The dropped connection's events were the same first chunks.
    expect(
      first.events
        .map(deltaOf)
        .filter((x) => x !== undefined)
        .join(""),
    ).toBe(second.events.slice(0, 4).map(deltaOf).join(""));
  });

  it("drops=K cuts K successive connections", async () => {
    const t = await c.createOk(
      "dropdrop [sim:drops=2] [sim:drop=1] [sim:length=3000] [sim:chunk=100]",
    );
    expect((await readSse(await streamOf(c, t))).error).toBeDefined();
    expect((await readSse(await streamOf(c, t))).error).toBeDefined();
    const third = await readSse(await streamOf(c, t));
    expect(third.error).toBeUndefined();
    expect(statusEvents(third).at(-1)?.status).toBe("completed");
  });

  it("stall=MS: nothing for MS after the 3rd chunk, the connection stays open", async () => {
    const t = await c.createOk("stall [sim:stall=250] [sim:length=400]");
    const read = await readSse(await streamOf(c, t));
    expect(read.error).toBeUndefined();
    const mine = chunks.filter((x) => x.runId === t.agent_run_id);
    const gap = (mine[3]?.at ?? 0) - (mine[2]?.at ?? 0);
    expect(gap).toBeGreaterThanOrEqual(245);
    expect(textOf(read)).toBe(await finalContent(t.agent_run_id));
  });

  it("stop while streaming: final status stopped, then the server closes", async () => {
    const t = await c.createOk("stop stream [sim:delay=20] [sim:length=5000]");
    const res = await streamOf(c, t);
    let stopped = false;
    const read = await readSse(res, (e) => {
      if (!stopped && deltaOf(e) !== undefined) {
        stopped = true;
        void c.post(`/threads/${t.thread_id}/agent/stop`, { project_id: t.project_id });
      }
      return undefined;
    });
    expect(read.error).toBeUndefined();
    expect(statusEvents(read).at(-1)).toMatchObject({ status: "stopped" });
    expect(textOf(read)).toBe(sim.run(t.agent_run_id)?.content);
    expect(sim.openStreams()).toBe(0);
  });

  it("run=fail: the stream ends with status failed and the reason", async () => {
    const t = await c.createOk("fail stream [sim:run=fail]");
    const read = await readSse(await streamOf(c, t));
    expect(statusEvents(read).at(-1)).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/failed/),
    });
  });

  it("norealtime refuses streaming; norealtime=json answers the long-poll JSON", async () => {
    const refused = await streamOf(c, await c.createOk("no stream [sim:norealtime]"));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ detail: "Realtime streaming is not available" });
    const t = await c.createOk("json instead [sim:norealtime=json]");
    const res = await streamOf(c, t, { timeout: "30" });
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = (await res.json()) as { status: string; response: { content: string } };
    expect(body.status).toBe("completed");
    expect(body.response.content).toBe(sim.run(t.agent_run_id)?.content);
  });

  it("toolnoise: a raw tool JSON chunk shows up in the stream only", async () => {
    const t = await c.createOk("noisy [sim:toolnoise]");
    const read = await readSse(await streamOf(c, t));
    const whole = await finalContent(t.agent_run_id);
    expect(textOf(read)).toContain('{"tool":"str_replace"');
    expect(whole).not.toContain('"tool"');
    expect(textOf(read).replace(/\{"tool":"str_replace".*?"\}\}/, "")).toBe(whole);
  });

  it("nofinal: the server closes without any final event", async () => {
    const t = await c.createOk("quiet end [sim:nofinal]");
    const read = await readSse(await streamOf(c, t));
    expect(read.error).toBeUndefined();
    expect(statusEvents(read).map((e) => e.status)).toEqual(["running"]);
    expect(textOf(read)).toBe(await finalContent(t.agent_run_id));
  });

  it("a client hanging up a stream leaves nothing behind", async () => {
    const t = await c.createOk("walk away [sim:delay=50] [sim:length=150] [sim:chunk=50]");
    const read = await readSse(await streamOf(c, t), () => true);
    expect(read.events.length).toBe(1);
    await until(() => sim.openStreams() === 0, "the stream to be released");
    expect((await sim.waitForRun(t.agent_run_id)).status).toBe("completed");
  });

  it("a long answer streams in big chunks and adds up", async () => {
    const t = await c.createOk("long [sim:length=60000] [sim:chunk=3000] [sim:delay=1]");
    const read = await readSse(await streamOf(c, t));
    const whole = await finalContent(t.agent_run_id);
    expect(whole.length).toBeGreaterThan(59_000);
    expect(textOf(read)).toBe(whole);
  });
});

describe("load", () => {
  it("300 concurrent runs with streams all complete", async () => {
    const created = await Promise.all(
      Array.from({ length: 300 }, (_, i) => c.createOk(`load ${i} [sim:length=300]`)),
    );
    const reads = await Promise.all(created.map(async (t) => readSse(await streamOf(c, t))));
    for (const [i, t] of created.entries()) {
      expect(textOf(reads[i] ?? { events: [], comments: [], raw: "", error: undefined })).toBe(
        await finalContent(t.agent_run_id),
      );
    }
    expect(sim.openStreams()).toBe(0);
  });
});
