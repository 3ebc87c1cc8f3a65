/**
 * Control calls have a pool of their own: with every stream connection taken (here: one,
 * held by an open result stream), a new task and a Stop still go through (continue is a POST
 * too and takes the same pool).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent, type Dispatcher } from "undici";
import { createTaskServiceClient } from "../../src/service/client.ts";
import { type Simulator, startSimulator } from "../../tools/simulator/server.ts";

const KEY = "he-poolsTestKey0123456789";

/** An undici Agent that records the requests it carries (method and path). */
class RecordingAgent extends Agent {
  readonly carried: string[] = [];
  override dispatch(
    opts: Dispatcher.DispatchOptions,
    handler: Dispatcher.DispatchHandler,
  ): boolean {
    this.carried.push(`${opts.method} ${opts.path.split("?")[0]}`);
    return super.dispatch(opts, handler);
  }
}

describe("the task service's connection pools", () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ apiKeys: [KEY], chunkDelayMs: 50 });
  });
  afterAll(async () => {
    await sim.close();
  });

  it("sends creates and stops through the control pool while streams fill theirs", async () => {
    const streams = new RecordingAgent({ connections: 1 });
    const control = new RecordingAgent({ connections: 4 });
    const client = createTaskServiceClient({
      baseUrl: sim.url,
      apiKey: KEY,
      dispatcher: streams,
      controlDispatcher: control,
    });
    const first = await client.createTask({ prompt: "A long story [sim:length=20000]" });
    const ref = { projectId: first.project_id, threadId: first.thread_id };
    // The only stream connection is now taken by an open result stream.
    const opened = client.streamTaskResult(ref);
    const stream = opened[Symbol.asyncIterator]();
    await stream.next();
    const second = await client.createTask({ prompt: "Another task [sim:length=100]" });
    expect(second.agent_run_id).not.toBe(first.agent_run_id);
    await client.stopAgent(ref);
    await stream.return?.(undefined);
    expect(control.carried.every((c) => c.startsWith("POST "))).toBe(true);
    expect(control.carried).toHaveLength(3);
    expect(streams.carried.some((c) => c.startsWith("GET ") && c.endsWith("/response"))).toBe(true);
    expect(streams.carried.filter((c) => c.startsWith("POST "))).toEqual([]);
    await Promise.all([streams.close(), control.close()]);
  });
});
