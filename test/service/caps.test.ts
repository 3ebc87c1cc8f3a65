/**
 * A misbehaving service cannot take the process down: an endless stream event is dropped like
 * a broken connection, an answer past the size cap is not read, a huge answer keeps its head
 * with a line saying where the rest is, and a run uploads at most 20 files (the rest listed).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planFiles } from "../../src/runs/file-delivery.ts";
import { capAnswer, MAX_ANSWER_CHARS } from "../../src/runs/answer/cap.ts";
import { createTaskServiceClient } from "../../src/service/client.ts";
import { TaskServiceError } from "../../src/service/errors.ts";
import { jsonValues, MAX_JSON_VALUES } from "../../src/service/responses.ts";
import { ByteBudget } from "../../src/util/byte-budget.ts";
import { parseSse } from "../../src/service/stream.ts";
import { type Simulator, startSimulator } from "../../tools/simulator/server.ts";
import { until } from "../support/until.ts";

async function* chunks(...parts: string[]) {
  for (const p of parts) yield p;
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe("caps on what the service sends", () => {
  it("drops a stream whose event grows past the cap, like a broken connection", async () => {
    const endless = chunks('data: {"type":"content","content":"', "x".repeat(600), "y".repeat(600));
    const err = await collect(parseSse(endless, 1000)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskServiceError);
    expect((err as TaskServiceError).transient).toBe(true);
  });

  it("drops a stream whose one event grows between comment lines, never ended by a blank line", async () => {
    // Each chunk: a data line and a comment. A comment does not end an event (the SSE spec):
    // before, it reset the count, and the event grew in the parser without bound.
    const parts = Array.from({ length: 50 }, () => `data: ${"z".repeat(100)}\n: ping\n`);
    const err = await collect(parseSse(chunks(...parts), 1000)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskServiceError);
    expect((err as Error).message).toContain("grew past 1,000 characters");
  });

  it("keeps streaming through keep-alive comments and ordinary events however long", async () => {
    const keepAlives = Array.from({ length: 200 }, () => ": keep-alive\n\n");
    const events = Array.from(
      { length: 50 },
      (_, i) => `data: {"type":"content","content":"${i}"}\n\n`,
    );
    const got = await collect(parseSse(chunks(...keepAlives, ...events), 1000));
    expect(got).toHaveLength(50);
  });

  it("keeps the head of an answer past the cap and says where the rest is", () => {
    const text = "a".repeat(MAX_ANSWER_CHARS + 10);
    const kept = capAnswer(text);
    expect(kept.startsWith("a".repeat(MAX_ANSWER_CHARS))).toBe(true);
    expect(kept).toContain("open History under the answer");
    expect(capAnswer("short")).toBe("short");
  });

  it("keeps the head of an answer of emoji whole, without half of one at the cap", () => {
    // Found by fuzzing: the 60,000th character could be the first half of an emoji.
    const kept = capAnswer(`:${"😀".repeat(MAX_ANSWER_CHARS)}`);
    expect(
      kept.startsWith(`:${"😀".repeat(MAX_ANSWER_CHARS / 2 - 1)}\n\n_The answer is longer`),
    ).toBe(true);
    expect(kept.isWellFormed()).toBe(true);
  });

  it("uploads at most 20 files of a run and lists the others", () => {
    const files = Array.from({ length: 25 }, (_, i) => ({
      file_id: `f${i}`,
      file_name: `part-${i}.txt`,
      file_size: 6,
    }));
    const planned = planFiles(files, 1024 * 1024);
    expect(planned.filter((p) => p.upload)).toHaveLength(20);
    expect(planned.filter((p) => !p.upload).map((p) => p.note.reason)).toEqual(
      Array.from({ length: 5 }, () => "more than 20 files: get it from Files under the answer"),
    );
  });
});

describe("the values of a JSON answer", () => {
  /** Every value JSON.parse builds of `v` (containers and what they hold, keys aside). */
  const built = (v: unknown): number =>
    1 +
    (Array.isArray(v)
      ? v.reduce((n: number, x) => n + built(x), 0)
      : typeof v === "object" && v !== null
        ? Object.values(v).reduce((n: number, x) => n + built(x), 0)
        : 0);

  it("are never counted fewer than JSON.parse builds, whatever the text and its strings", () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        expect(jsonValues(text) + 1).toBeGreaterThanOrEqual(built(JSON.parse(text)));
      }),
      { numRuns: 500 },
    );
    expect(jsonValues('{"a":"x,y:[{\\"}"}')).toBe(2); // in a string, none count
  });

  it("are counted no further than needed", () => {
    expect(jsonValues("[" + "1,".repeat(1000) + "1]", 10)).toBe(11);
  });
});

/** A server that answers every request with `body` (JSON). */
async function serving(body: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe("an answer past the size cap", () => {
  let server: Server;
  let serverUrl: string;
  let many: Awaited<ReturnType<typeof serving>>;
  beforeAll(async () => {
    // Says it sends 1 GB and sends a few bytes, then nothing: refused on its word.
    server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "1000000000" });
      res.write("{");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    many = await serving(`{"status":"running","x":[${"{},".repeat(300_000)}{}]}`);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await many.close();
  });

  it("is not parsed when it holds too many values: small within the byte cap, huge as objects", async () => {
    const client = createTaskServiceClient({
      baseUrl: many.url,
      apiKey: "he-capsTestKey0123456789",
      retries: 0,
    });
    const err = await client
      .getTaskResult({ projectId: "p", threadId: "t" }, { timeout: 0 })
      .catch((e: unknown) => e);
    expect((err as TaskServiceError).kind).toBe("too_large");
    expect((err as Error).message).toContain(
      `more than ${MAX_JSON_VALUES.toLocaleString("en-US")} values`,
    );
  });

  it("is a refusal read no further than its first 64 KiB, however long it goes on", async () => {
    const endless = createServer((_req, res) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.write('{"detail":"');
      const more = () => {
        while (!res.destroyed && res.write("x".repeat(65_536)));
      };
      res.on("drain", more).on("error", () => undefined);
      more();
    });
    await new Promise<void>((resolve) => endless.listen(0, "127.0.0.1", resolve));
    const client = createTaskServiceClient({
      baseUrl: `http://127.0.0.1:${(endless.address() as AddressInfo).port}`,
      apiKey: "he-capsTestKey0123456789",
      retries: 0,
    });
    const err = await client
      .getTaskResult({ projectId: "p", threadId: "t" }, { timeout: 0 })
      .catch((e: unknown) => e);
    expect((err as TaskServiceError).kind).toBe("server");
    endless.closeAllConnections();
    await new Promise((resolve) => endless.close(resolve));
  });

  it("is not the contract's when an id is longer than any id", async () => {
    const long = await serving(`{"status":"running","agent_run_id":"${"r".repeat(300)}"}`);
    const client = createTaskServiceClient({
      baseUrl: long.url,
      apiKey: "he-capsTestKey0123456789",
      retries: 0,
    });
    const err = await client
      .getTaskResult({ projectId: "p", threadId: "t" }, { timeout: 0 })
      .catch((e: unknown) => e);
    expect((err as TaskServiceError).kind).toBe("protocol");
    await long.close();
  });

  it("takes from the process's budget while a large one is read, and gives it back", async () => {
    const large = await serving(
      JSON.stringify({ status: "running", response: { content: "x".repeat(3 << 20) } }),
    );
    const full = new ByteBudget(64 << 20);
    const client = createTaskServiceClient({
      baseUrl: large.url,
      apiKey: "he-capsTestKey0123456789",
      retries: 0,
      readBudget: full,
    });
    const ref = { projectId: "p", threadId: "t" };
    expect((await client.getTaskResult(ref, { timeout: 0 })).response.content).toHaveLength(
      3 << 20,
    );
    expect(full.used).toBe(0);
    // With no room for it, it is refused (and the budget left as it was)…
    expect(full.tryTake((64 << 20) - (1 << 20))).toBe(true);
    const err = await client.getTaskResult(ref, { timeout: 0 }).catch((e: unknown) => e);
    expect((err as TaskServiceError).kind).toBe("too_large");
    expect((err as Error).message).toContain("did not fit in what this app holds");
    expect(full.used).toBe((64 << 20) - (1 << 20));
    await large.close();
    // …while a small one never asks it.
    const small = await serving('{"success":true,"agent_run_id":"r","status":"stopped"}');
    const control = createTaskServiceClient({
      baseUrl: small.url,
      apiKey: "he-capsTestKey0123456789",
      retries: 0,
      readBudget: full,
    });
    expect((await control.stopAgent(ref)).status).toBe("stopped");
    await small.close();
  });

  it("is refused at once when its length says it is too large", async () => {
    const client = createTaskServiceClient({
      baseUrl: serverUrl,
      apiKey: "he-capsTestKey0123456789",
      maxAnswerBytes: 2000,
      retries: 0,
    });
    const err = await client
      .getTaskResult({ projectId: "p", threadId: "t" }, { timeout: 0 })
      .catch((e: unknown) => e);
    expect((err as TaskServiceError).kind).toBe("too_large");
  });

  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ apiKeys: ["he-capsTestKey0123456789"], chunkDelayMs: 1 });
  });
  afterAll(async () => {
    await sim.close();
  });

  it("is not read: the request fails as too large", async () => {
    const client = createTaskServiceClient({
      baseUrl: sim.url,
      apiKey: "he-capsTestKey0123456789",
      maxAnswerBytes: 2000,
    });
    const created = await client.createTask({ prompt: "Long [sim:length=5000]" });
    const ref = { projectId: created.project_id, threadId: created.thread_id };
    const err = await client.getTaskResult(ref, { timeout: 5 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskServiceError);
    expect((err as TaskServiceError).kind).toBe("too_large");
    expect((err as Error).message).toContain("larger than");
  });

  it("is not read when the stream is answered with it as JSON: the stream fails as too large", async () => {
    const client = createTaskServiceClient({
      baseUrl: sim.url,
      apiKey: "he-capsTestKey0123456789",
      maxAnswerBytes: 2000,
    });
    // Before, a JSON answer to the stream was read whole, with no cap.
    const created = await client.createTask({
      prompt: "Long [sim:norealtime=json] [sim:length=5000]",
    });
    const ref = { projectId: created.project_id, threadId: created.thread_id };
    await until("the answer to be long", async () => {
      const r = await createTaskServiceClient({
        baseUrl: sim.url,
        apiKey: "he-capsTestKey0123456789",
      }).getTaskResult(ref, { timeout: 0 });
      return r.status === "completed";
    });
    const err = await collect(client.streamTaskResult(ref)).catch((e: unknown) => e);
    expect((err as TaskServiceError).kind).toBe("too_large");
  });
});
