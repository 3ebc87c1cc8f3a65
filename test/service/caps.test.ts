/**
 * A misbehaving service cannot take the process down: an endless stream event is dropped like
 * a broken connection, an answer past the size cap is not read, a huge answer keeps its head
 * with a line saying where the rest is, and a run uploads at most 20 files (the rest listed).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planFiles } from "../../src/runs/file-delivery.ts";
import { capAnswer, MAX_ANSWER_CHARS } from "../../src/runs/run-state.ts";
import { createTaskServiceClient } from "../../src/service/client.ts";
import { TaskServiceError } from "../../src/service/errors.ts";
import { parseSse } from "../../src/service/stream.ts";
import { type Simulator, startSimulator } from "../../src/simulator/server.ts";

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
      content: `part ${i}`,
      encoding: "utf-8",
      included_inline: true,
    }));
    const { uploads, notes } = planFiles(files as Parameters<typeof planFiles>[0]);
    expect(uploads).toHaveLength(20);
    expect(notes.filter((n) => !n.attached).map((n) => n.reason)).toEqual(
      Array.from({ length: 5 }, () => "more than 20 files: get it from Files under the answer"),
    );
  });
});

describe("an answer past the size cap", () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ apiKeys: ["he-capsTestKey0123456789"], chunkDelayMs: 1 });
  });
  afterAll(async () => {
    await sim.close();
  });

  it("is not read: the request fails with a protocol error", async () => {
    const client = createTaskServiceClient({
      baseUrl: sim.url,
      apiKey: "he-capsTestKey0123456789",
      maxAnswerBytes: 2000,
    });
    const created = await client.createTask({ prompt: "Long [sim:length=5000]" });
    const ref = { projectId: created.project_id, threadId: created.thread_id };
    const err = await client.getTaskResult(ref, { timeout: 5 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskServiceError);
    expect((err as TaskServiceError).kind).toBe("protocol");
    expect((err as Error).message).toContain("larger than");
  });
});
