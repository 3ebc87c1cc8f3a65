/**
 * A result stream refused with any answer that is not about the key, the credits or access
 * falls back to long polling; the refusal is remembered per thread for a while, not forever.
 * The service here is a small HTTP server speaking the service's protocol, because the
 * simulator streams on every route and these answers come from proxies in front of it.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTaskServiceClient, type TaskService } from "../../src/service/client.ts";
import { TaskServiceError } from "../../src/service/errors.ts";
import { followRun, type RunUpdate } from "../../src/service/follow.ts";
import { StreamRefusals } from "../../src/service/refusals.ts";

const KEY = "he-refusal-test-key";
const ANSWER = "The whole answer, as the poll returns it.";
const ref = { projectId: "p1", threadId: "t1", agentRunId: "r1" };

/** How the server answers a request for the realtime stream; polls always answer the result. */
let streamAnswer: (res: ServerResponse) => void = () => undefined;
const asked: { realtime: boolean }[] = [];

function result(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      success: true,
      thread_id: ref.threadId,
      project_id: ref.projectId,
      agent_run_id: ref.agentRunId,
      status: "completed",
      response: { role: "assistant", content: ANSWER },
      code_blocks: [],
      files: [],
    }),
  );
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://x");
  if (req.headers["x-api-key"] !== KEY) {
    res.writeHead(401, { "content-type": "application/json" });
    res.end(JSON.stringify({ detail: "Invalid API key" }));
    return;
  }
  const realtime = url.searchParams.get("realtime") === "true";
  asked.push({ realtime });
  if (realtime) streamAnswer(res);
  else result(res);
}

const status =
  (code: number, body: unknown = { detail: `refused with ${code}` }) =>
  (res: ServerResponse) => {
    res.writeHead(code, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };

let server: Server;
let client: TaskService;

beforeAll(async () => {
  server = createServer(handle);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  client = createTaskServiceClient({
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    apiKey: KEY,
    retries: 0,
  });
});
afterAll(() => server.close());
beforeEach(() => {
  asked.length = 0;
});

async function follow(refusals?: StreamRefusals) {
  const updates: RunUpdate[] = [];
  const gen = followRun(client, ref, { reconnectDelayMs: 5, pollTimeoutS: 1, refusals });
  for (;;) {
    const step = await gen.next();
    if (step.done) return { updates, final: step.value };
    updates.push(step.value);
  }
}

describe("a refused result stream", () => {
  it.each([400, 404, 405, 406, 415, 422, 501])(
    "falls back to polling when the stream is answered %i, with the whole answer",
    async (code) => {
      streamAnswer = status(code);
      const { updates, final } = await follow();
      expect(updates.find((u) => u.type === "transport")).toMatchObject({ mode: "poll" });
      expect(final).toMatchObject({ status: "completed", text: ANSWER });
      expect(asked.filter((a) => a.realtime)).toHaveLength(1);
    },
  );

  it("falls back to polling when a 200 is not an event stream (an HTML page from a proxy)", async () => {
    streamAnswer = (res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html><body>Welcome</body></html>");
    };
    const { updates, final } = await follow();
    expect(updates.find((u) => u.type === "transport")).toMatchObject({ mode: "poll" });
    expect(final).toMatchObject({ status: "completed", text: ANSWER });
  });

  it.each([
    [402, "credits"],
    [403, "forbidden"],
  ] as const)("ends the run at once when the stream says %i (%s)", async (code, kind) => {
    streamAnswer = status(code);
    const err = await follow().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskServiceError);
    expect((err as TaskServiceError).kind).toBe(kind);
    expect(asked.filter((a) => !a.realtime)).toHaveLength(0); // no poll after it
  });

  it("polls at once on the same thread while the refusal is remembered, and streams again after", async () => {
    let now = 1_000_000;
    const refusals = new StreamRefusals({ ttlMs: 60_000, now: () => now });
    streamAnswer = status(404);
    await follow(refusals);
    expect(asked.filter((a) => a.realtime)).toHaveLength(1);

    // The next run within the window: no stream request at all.
    asked.length = 0;
    now += 30_000;
    const second = await follow(refusals);
    expect(asked.filter((a) => a.realtime)).toHaveLength(0);
    expect(second.final.text).toBe(ANSWER);

    // After the window, a stream is tried again, and this time the deployment serves it.
    asked.length = 0;
    now += 31_000;
    streamAnswer = (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify({ type: "content", content: ANSWER })}\n\n`);
      res.end(`data: ${JSON.stringify({ type: "status", status: "completed" })}\n\n`);
    };
    const third = await follow(refusals);
    expect(asked[0]).toEqual({ realtime: true });
    expect(third.updates.some((u) => u.type === "transport")).toBe(false);
    expect(third.final.text).toBe(ANSWER);
  });
});
