/**
 * Long polling never spins: a service that answers a long poll at once (ignoring `timeout`)
 * is asked again after a second, then less and less often, not in a tight loop.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTaskServiceClient } from "../../src/service/client.ts";
import { followRun } from "../../src/service/follow.ts";

const KEY = "he-polling-test-key";
const ref = { projectId: "p1", threadId: "t1", agentRunId: "r1" };
const polls: number[] = [];
/** Polls answered "running" before the run completes. */
const RUNNING_POLLS = 3;

let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.searchParams.get("realtime") === "true") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ detail: "Not Found" }));
      return;
    }
    // Answers at once, whatever `timeout` asked for: "running" RUNNING_POLLS times, then done.
    polls.push(Date.now());
    const done = polls.length > RUNNING_POLLS;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        success: true,
        agent_run_id: ref.agentRunId,
        status: done ? "completed" : "running",
        response: { content: done ? "Done." : "Working" },
      }),
    );
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

describe("long polling", () => {
  it("waits at least a second between polls that the service answers at once, backing off", async () => {
    const client = createTaskServiceClient({ baseUrl, apiKey: KEY, retries: 0 });
    const gen = followRun(client, ref, { pollTimeoutS: 30 });
    let step = await gen.next();
    while (!step.done) step = await gen.next();
    expect(step.value).toMatchObject({ status: "completed", text: "Done." });
    // The pause before each poll after a "running" answered at once: 1 s, 2 s, 4 s.
    const gaps = polls.slice(1, RUNNING_POLLS + 1).map((t, i) => t - (polls[i] ?? t));
    expect(gaps).toHaveLength(RUNNING_POLLS);
    expect(gaps[0]).toBeGreaterThanOrEqual(950);
    expect(gaps[1]).toBeGreaterThanOrEqual(1950);
    expect(gaps[2]).toBeGreaterThanOrEqual(3950);
  }, 20_000);
});
