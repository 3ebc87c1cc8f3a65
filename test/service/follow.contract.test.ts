/**
 * Contract tests of the run follower (src/service/follow.ts) against the simulator: whatever
 * the stream format, drops, refusals and stalls, the `delta` updates add up to the run's final
 * content exactly (nothing lost, nothing repeated) and the returned FinalRun is authoritative.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTaskServiceClient,
  type TaskService,
  type TaskServiceClientOptions,
  type ThreadRef,
} from "../../src/service/client.ts";
import {
  type FinalRun,
  type FollowOptions,
  followRun,
  type RunUpdate,
} from "../../src/service/follow.ts";
import { hashString } from "../../tools/simulator/answers.ts";
import { parseDirectives } from "../../tools/simulator/directives.ts";
import { generateFiles } from "../../tools/simulator/files.ts";
import { type Simulator, startSimulator } from "../../tools/simulator/server.ts";

const FORMATS = ["contract", "agent", "minimal"] as const;
type Format = (typeof FORMATS)[number];

function clientFor(sim: Simulator, extra: Partial<TaskServiceClientOptions> = {}): TaskService {
  return createTaskServiceClient({
    baseUrl: sim.url,
    apiKey: sim.apiKey,
    retryMinDelayMs: 10,
    retryMaxDelayMs: 50,
    ...extra,
  });
}

interface Followed {
  updates: RunUpdate[];
  /** The `delta` updates, concatenated. */
  text: string;
  deltas: string[];
  statuses: string[];
  transports: Array<{ mode: string; reason: string }>;
  final: FinalRun;
}

async function follow(
  client: TaskService,
  ref: ThreadRef & { agentRunId?: string },
  options: FollowOptions = {},
): Promise<Followed> {
  const gen = followRun(client, ref, { reconnectDelayMs: 5, ...options });
  const updates: RunUpdate[] = [];
  for (;;) {
    const step = await gen.next();
    if (step.done) {
      const deltas = updates.flatMap((u) => (u.type === "delta" ? [u.text] : []));
      return {
        updates,
        text: deltas.join(""),
        deltas,
        statuses: updates.flatMap((u) => (u.type === "status" ? [u.status] : [])),
        transports: updates.flatMap((u) =>
          u.type === "transport" ? [{ mode: u.mode, reason: u.reason }] : [],
        ),
        final: step.value,
      };
    }
    updates.push(step.value);
  }
}

/** Resolves with the reason of the next `streamClose` of `runId`. */
function streamClosed(sim: Simulator, runId: string): Promise<string> {
  return new Promise((resolve) => {
    const on = (id: string, reason: string) => {
      if (id !== runId) return;
      sim.events.off("streamClose", on);
      resolve(reason);
    };
    sim.events.on("streamClose", on);
  });
}

describe("following a run", () => {
  let sim: Simulator;
  let client: TaskService;
  const dropped = new Map<string, number>();

  beforeAll(async () => {
    sim = await startSimulator({ chunkDelayMs: 3, keepAliveMs: 0, answerLength: 900 });
    client = clientFor(sim);
    sim.events.on("streamClose", (id, reason) => {
      if (reason === "dropped") dropped.set(id, (dropped.get(id) ?? 0) + 1);
    });
  });
  afterAll(async () => {
    await sim?.close();
  });

  async function start(prompt: string) {
    const c = await client.createTask({ prompt });
    return {
      runId: c.agent_run_id,
      ref: { threadId: c.thread_id, projectId: c.project_id, agentRunId: c.agent_run_id },
    };
  }

  /** The run's final content, as the service holds it. */
  function contentOf(runId: string): string {
    const run = sim.run(runId);
    expect(run?.status).not.toBe("running");
    return run?.content ?? "<no run>";
  }

  it.each(FORMATS)(
    "streams the %s format: the deltas add up to the final content exactly, and FinalRun.text equals it",
    async (format) => {
      const { runId, ref } = await start(`Format ${format} [sim:format=${format}]`);
      const f = await follow(client, ref);
      const content = contentOf(runId);
      expect(content.length).toBeGreaterThan(500);
      expect(f.text).toBe(content);
      expect(f.deltas.every((d) => d !== "")).toBe(true);
      expect(f.final).toMatchObject({
        status: "completed",
        text: content,
        streamedText: content,
        agentRunId: runId,
      });
      expect(f.final.messageId).toBeTruthy();
      expect(f.statuses).toEqual(["completed"]);
      expect(f.updates.at(-1)).toEqual({ type: "status", status: "completed" });
      expect(f.transports).toEqual([]);
      expect(sim.run(runId)?.streamsOpened).toBe(1);
    },
  );

  it.each(FORMATS)("ignores the noise of a malformed %s stream", async (format) => {
    const { runId, ref } = await start(`Noisy ${format} [sim:format=${format}] [sim:malformed]`);
    const f = await follow(client, ref);
    const content = contentOf(runId);
    expect(f.text).toBe(content);
    expect(f.text).not.toContain("ACK-SHOULD-NOT-APPEAR");
    expect(f.final.text).toBe(content);
    expect(f.statuses).toEqual(["completed"]);
  });

  describe.each(FORMATS)("a dropped %s stream", (format) => {
    it.each([
      ["once after 4 events", "[sim:drop=4]", 1],
      ["twice after 3 events", "[sim:drop=3] [sim:drops=2]", 2],
      ["three times after 1 event", "[sim:drop=1] [sim:drops=3]", 3],
    ])(
      "%s, with a server that replays: reconnects, and no text is lost or repeated",
      async (_what, drops, times) => {
        const { runId, ref } = await start(
          `Drops ${format} [sim:format=${format}] [sim:reconnect=replay] [sim:length=1500] ${drops}`,
        );
        const f = await follow(client, ref);
        const content = contentOf(runId);
        expect(dropped.get(runId)).toBe(times);
        expect(sim.run(runId)?.streamsOpened).toBe(times + 1);
        expect(f.text).toBe(content);
        expect(f.final.text).toBe(content);
        expect(f.statuses).toEqual(["completed"]);
        expect(f.transports).toHaveLength(times);
        expect(
          f.transports.every((t) => t.mode === "stream" && /reconnecting/.test(t.reason)),
        ).toBe(true);
      },
    );

    // A server that continues sends only chunks produced after the new connection opened:
    // the follower places the new connection's text in a polled snapshot, filling the gap.
    it("reconnects to a server that continues without losing what was produced while disconnected", async () => {
      const { runId, ref } = await start(
        `Continue ${format} [sim:format=${format}] [sim:reconnect=continue] [sim:length=1500] [sim:drop=4] [sim:drops=2]`,
      );
      const f = await follow(client, ref, { reconnectDelayMs: 30 });
      const content = contentOf(runId);
      expect(f.final.text, "FinalRun.text").toBe(content);
      expect(sim.run(runId)?.streamsOpened, "connections").toBe(3);
      expect(f.text, "the deltas, concatenated").toBe(content);
    });
  });

  it("falls back to polling when streaming is refused, with the complete text", async () => {
    const { runId, ref } = await start("Refused stream [sim:norealtime]");
    const f = await follow(client, ref);
    const content = contentOf(runId);
    expect(f.transports).toHaveLength(1);
    expect(f.transports[0]?.mode).toBe("poll");
    expect(f.transports[0]?.reason).toContain("Realtime streaming is not available");
    expect(f.text).toBe(content);
    expect(f.final).toMatchObject({ status: "completed", text: content });
    expect(f.statuses).toEqual(["completed"]);
    expect(sim.run(runId)?.streamsOpened).toBe(0);
  });

  it("takes a plain JSON answer to a realtime request (norealtime=json) as the whole text", async () => {
    const { runId, ref } = await start("Ignored realtime [sim:norealtime=json]");
    const f = await follow(client, ref);
    const content = contentOf(runId);
    expect(f.text).toBe(content);
    expect(f.final).toMatchObject({ status: "completed", text: content });
    expect(f.statuses).toEqual(["completed"]);
    expect(sim.run(runId)?.streamsOpened).toBe(0);
    const asked = sim.requests.filter((r) => r.path.endsWith(`${ref.threadId}/response`));
    expect(asked[0]?.query).toMatchObject({ realtime: "true" });
  });

  it.each(FORMATS)(
    "completes a %s stream that closes without a final status (nofinal)",
    async (format) => {
      const { runId, ref } = await start(`No final ${format} [sim:format=${format}] [sim:nofinal]`);
      const f = await follow(client, ref);
      const content = contentOf(runId);
      expect(f.text).toBe(content);
      expect(f.final).toMatchObject({ status: "completed", text: content });
      expect(f.statuses).toEqual(["completed"]);
      expect(f.transports).toEqual([]);
    },
  );

  it("treats a stalled stream as dropped after streamIdleTimeoutMs and recovers", async () => {
    // undici checks body timeouts on a coarse timer wheel (about 1 s), so the 300 ms idle
    // timeout fires after about 1 s: the stall has to be longer than that.
    const impatient = clientFor(sim, { streamIdleTimeoutMs: 300 });
    const { runId, ref } = await start(
      "Stalling [sim:stall=1500] [sim:keepalive=0] [sim:reconnect=replay]",
    );
    const firstClose = streamClosed(sim, runId);
    const f = await follow(impatient, ref);
    const content = contentOf(runId);
    expect(await firstClose).toBe("client");
    expect(f.transports.length).toBeGreaterThanOrEqual(1);
    expect(f.transports.every((t) => t.mode === "stream" && /dropped/.test(t.reason))).toBe(true);
    expect(sim.run(runId)?.streamsOpened).toBe(f.transports.length + 1);
    expect(f.text).toBe(content);
    expect(f.final).toMatchObject({ status: "completed", text: content });
  });

  it("ends a run with empty content: no text, the result in code blocks and files", async () => {
    const { runId, ref } = await start("Empty answer [sim:empty]");
    const f = await follow(client, ref);
    expect(contentOf(runId)).toBe("");
    expect(f.deltas).toEqual([]);
    expect(f.final).toMatchObject({ status: "completed", text: "", streamedText: "" });
    expect(f.final.codeBlocks.length).toBeGreaterThan(0);
    expect(f.final.codeBlocks.every((b) => b.code !== "")).toBe(true);
    expect(f.final.files.length).toBeGreaterThanOrEqual(2);
    expect(f.statuses).toEqual(["completed"]);
  });

  it.each(FORMATS)("reports a failed %s run with its error message", async (format) => {
    const { runId, ref } = await start(`Doomed ${format} [sim:format=${format}] [sim:run=fail]`);
    const f = await follow(client, ref);
    const run = sim.run(runId);
    expect(run?.status).toBe("failed");
    expect(f.text).toBe(run?.content);
    expect(f.final.status).toBe("failed");
    expect(f.final.text).toBe(run?.content);
    expect(f.final.errorMessage).toBe(run?.error);
    expect(f.final.errorMessage).toContain("out of memory");
    expect(f.statuses).toEqual(["failed"]);
  });

  it("returns every file without its content, read alone at its place; the big one as a download link", async () => {
    const prompt = "Files please [sim:files=3] [sim:bigfile]";
    const { runId, ref } = await start(prompt);
    const f = await follow(client, ref, { filePageSize: 2 });
    expect(f.final.status).toBe("completed");
    expect(f.final.files.map((x) => x.file_name)).toEqual([
      "report.md",
      "chart.png",
      "data.json",
      "dataset-large.csv",
    ]);
    expect(f.final.files.map((x) => x.file_id)).toEqual(sim.run(runId)?.files.map((x) => x.fileId));

    const expected = generateFiles({
      threadId: ref.threadId,
      folder: "output",
      seed: (hashString(prompt) ^ 1) >>> 0,
      title: parseDirectives(prompt).text.slice(0, 60) || "task",
      count: 3,
      bigFileBytes: undefined,
      now: 0,
    });
    for (const [i, want] of expected.entries()) {
      const got = f.final.files[i];
      // The result does not carry the content: a run's files may weigh hundreds of MB.
      expect(Object.keys(got ?? {})).not.toContain("content");
      const bytes = await client.readResultFile(
        ref,
        { position: i, fileId: got?.file_id ?? "" },
        { maxBytes: 1024 * 1024 },
      );
      expect(bytes?.equals(want.content), want.name).toBe(true);
    }

    const big = f.final.files[3];
    expect(big?.included_inline).toBe(false);
    expect(big?.file_size).toBeGreaterThan(1_000_000);
    expect(big?.download_url).toMatch(/^http:\/\//);
    const download = await fetch(big?.download_url ?? "");
    expect(download.status).toBe(200);
    const body = Buffer.from(await download.arrayBuffer());
    expect(body.length).toBe(big?.file_size);
    expect(body.subarray(0, 15).toString()).toBe("id,label,value\n");
  });

  it("keeps raw tool-execution JSON out of the final text", async () => {
    const { runId, ref } = await start("Tool noise [sim:toolnoise]");
    const f = await follow(client, ref);
    expect(f.final.text).toBe(contentOf(runId));
    expect(f.final.text).not.toContain('"tool":"str_replace"');
  });

  it("property: any format, drop count, drop point and reconnect mode: deltas add up to the final content", async () => {
    const reconnectModes = ["replay", "continue"] as const;
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...FORMATS),
        fc.constantFrom(...reconnectModes),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 50, max: 700 }),
        fc.boolean(),
        async (format: Format, reconnect, drops, dropAfter, length, malformed) => {
          const directives = [
            `[sim:format=${format}]`,
            `[sim:reconnect=${reconnect}]`,
            `[sim:length=${length}]`,
            drops > 0 ? `[sim:drop=${dropAfter}] [sim:drops=${drops}]` : "",
            malformed ? "[sim:malformed]" : "",
          ].join(" ");
          const { runId, ref } = await start(`Property ${n++} ${directives}`);
          const f = await follow(client, ref, { reconnectDelayMs: 2 });
          const content = contentOf(runId);
          expect(f.text).toBe(content);
          expect(f.final.text).toBe(content);
          expect(f.final.status).toBe("completed");
          expect(f.statuses).toEqual(["completed"]);
        },
      ),
      { numRuns: 15 },
    );
  });

  describe("cancellation", () => {
    it("rejects with an AbortError soon after the signal is aborted mid-stream, closing the stream", async () => {
      const { runId, ref } = await start("Cancel me [sim:delay=10] [sim:length=20000]");
      const ctl = new AbortController();
      const closed = streamClosed(sim, runId);
      const gen = followRun(client, ref, { signal: ctl.signal });
      const first = await gen.next();
      expect(first.value).toMatchObject({ type: "delta" });
      expect(sim.openStreams()).toBe(1);

      const abortedAt = performance.now();
      ctl.abort();
      let error: unknown;
      try {
        for (let i = 0; i < 1000; i++) if ((await gen.next()).done) break;
      } catch (err) {
        error = err;
      }
      expect((error as Error | undefined)?.name).toBe("AbortError");
      expect(performance.now() - abortedAt).toBeLessThan(500);
      expect(await closed).toBe("client");
      expect(sim.openStreams()).toBe(0);
      expect(sim.run(runId)?.status).toBe("running");
      await client.stopAgent(ref);
    });

    it("closes the connection when the consumer breaks out of streamTaskResult", async () => {
      const { runId, ref } = await start("Break out [sim:delay=10] [sim:length=20000]");
      const closed = streamClosed(sim, runId);
      let seen = 0;
      for await (const ev of client.streamTaskResult(ref)) {
        if (ev.type === "delta" && ++seen === 2) break;
      }
      expect(seen).toBe(2);
      expect(await closed).toBe("client");
      expect(sim.openStreams()).toBe(0);
      await client.stopAgent(ref);
    });
  });
});
