/**
 * Issue 31's tracing, end to end: the app (Bolt, WebClient, relay, service client) traced by
 * OpenTelemetry's Node SDK, configured by the standard OTEL_* variables only, exporting
 * OTLP/JSON to a local receiver, against the service simulator (which records each request's
 * `traceparent`) and the local Slack.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/config.ts";
import { createLogger } from "../../src/log.ts";
import { startTracing, type Tracing } from "../../src/tracing/sdk.ts";
import { until } from "../support/until.ts";
import {
  API_KEY,
  CHANNEL,
  Harness,
  markdownOf,
  NO_MESSAGE,
  OWNER,
  SIGNING_SECRET,
  statusOf,
  stopButton,
  TEAM,
} from "../support/harness.ts";
import {
  type OtlpReceiver,
  type ReceivedSpan,
  startOtlpReceiver,
} from "../support/otlp-receiver.ts";

const SERVER = 2;
const CLIENT = 3;

/** A W3C traceparent's trace and parent span ids. */
function idsOf(traceparent: string | undefined): { traceId: string; spanId: string } {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(traceparent ?? "");
  if (!m) throw new Error(`not a traceparent: ${traceparent}`);
  return { traceId: m[1] ?? "", spanId: m[2] ?? "" };
}

describe("a trace per task", () => {
  let receiver: OtlpReceiver;
  let tracing: Tracing;
  let h: Harness;
  const tracingLines: string[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const otel = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "task-agent-e2e",
      // Spans go only when a test flushes, and a flush waits for the receiver's answer: a batch
      // the SDK's timer sent is not waited for (BatchSpanProcessorBase.forceFlush), so a test
      // could read the receiver before that batch arrived.
      OTEL_BSP_SCHEDULE_DELAY: "3600000",
      OTEL_BSP_MAX_QUEUE_SIZE: "100000",
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "100000",
    };
    // As in production: the SDK reads its settings from the environment; the app checks them.
    Object.assign(process.env, otel);
    const config = parseConfig({
      TASK_API_URL: "http://127.0.0.1:1",
      TASK_API_KEY: API_KEY,
      SLACK_BOT_TOKEN: "xoxb-placeholder-0000",
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      ...otel,
    });
    expect(config.tracing.enabled).toBe(true);
    const logger = createLogger({
      destination: { write: (line: string) => void tracingLines.push(line) },
    });
    tracing = await startTracing(config.tracing, logger);
    h = await Harness.start();
  });

  afterAll(async () => {
    await h?.close();
    await tracing?.shutdown();
    await receiver?.close();
  });

  /** Every span exported so far of `traceId`, once the SDK has sent what it holds. */
  async function traceOf(traceId: string): Promise<ReceivedSpan[]> {
    await tracing.flush();
    return receiver.spans.filter((s) => s.traceId === traceId);
  }

  it("holds the Slack request, the service calls that carry its traceparent and the Slack writes; its log lines carry its id", async () => {
    const requests = h.sim.requests.length;
    const logs = h.logLines.length;
    const response = await h.command("Summarise the tracing story [sim:length=400]");
    expect(response.status).toBe(200);
    const threadTs = await h.waitForTaskThread("Summarise the tracing story");
    await h.waitForFinal(threadTs);
    const run = h.sim.runs().find((r) => r.promptText.includes("tracing story"));

    // Every request to the service carried one trace's context, each from a span of its own.
    const sent = h.sim.requests.slice(requests);
    expect(sent.map((r) => r.path)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/quick-action$/),
        expect.stringMatching(/response$/),
      ]),
    );
    const traceIds = new Set(sent.map((r) => idsOf(r.traceparent).traceId));
    expect(traceIds.size).toBe(1);
    const [traceId = ""] = traceIds;
    const spans = await traceOf(traceId);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    for (const request of sent) {
      const span = byId.get(idsOf(request.traceparent).spanId);
      expect(span?.kind).toBe(CLIENT);
      expect(span?.attributes["http.request.method"]).toBe(request.method);
      expect(span?.attributes["server.address"]).toBe("127.0.0.1");
      expect(span?.attributes["http.response.status_code"]).toBe(request.status);
    }
    const create = spans.find((s) => s.name === "POST /api/v1/public/quick-action");
    expect(create?.attributes["task.endpoint"]).toBe("create");

    // One trace, one root: the HTTP request Slack sent, around Bolt's handling of /task.
    const roots = spans.filter((s) => s.parentSpanId === undefined);
    expect(roots.map((s) => s.name)).toEqual(["POST /slack/events"]);
    expect(roots[0]?.kind).toBe(SERVER);
    expect(roots[0]?.attributes["http.response.status_code"]).toBe(200);
    const slash = spans.find((s) => s.name === "slack /task");
    expect(slash?.parentSpanId).toBe(roots[0]?.spanId);
    expect(slash?.attributes).toMatchObject({ "slack.team.id": TEAM, "slack.channel.id": CHANNEL });
    expect(slash?.service).toBe("task-agent-e2e");

    // The Slack writes, each a span named after its Web API method.
    const names = spans.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(["chat.postMessage", "chat.update"]));
    for (const call of spans.filter((s) => /^chat\./.test(s.name))) {
      expect(call.kind).toBe(CLIENT);
      expect(call.attributes).toMatchObject({ "slack.team.id": TEAM, "slack.channel.id": CHANNEL });
    }

    // The run's relay, in the same trace, with how it ended.
    const relay = spans.find((s) => s.name === "relay run");
    expect(relay?.attributes).toMatchObject({
      "task.run.id": run?.id,
      "task.run.start": "new",
      "task.run.status": "completed",
    });

    // The run's log lines carry the trace's id and the workspace.
    const runLines = h.logLines
      .slice(logs)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.runId === run?.id);
    expect(runLines.map((l) => l.msg)).toContain("run ended");
    for (const line of runLines) expect(line).toMatchObject({ trace_id: traceId, teamId: TEAM });
  });

  it("continues the trace when a restarted app resumes the run, linked to the request that started it", async () => {
    const requests = h.sim.requests.length;
    await h.command("Write a long traced report [sim:delay=15] [sim:length=3000]");
    const threadTs = await h.waitForTaskThread("Write a long traced report");
    await h.slack.waitFor(() => h.botReplies(threadTs).find((m) => markdownOf(m).length > 100), {
      description: "streaming started",
    });
    await h.restartApp();
    const [answer = NO_MESSAGE] = await h.waitForFinal(threadTs, 1, 30_000);
    expect(markdownOf(answer).length).toBeGreaterThan(1000);

    const sent = h.sim.requests.slice(requests);
    const traceIds = new Set(sent.map((r) => idsOf(r.traceparent).traceId));
    expect(traceIds.size).toBe(1);
    const [traceId = ""] = traceIds;
    const spans = await traceOf(traceId);
    const slash = spans.find((s) => s.name === "slack /task");
    const relays = spans.filter((s) => s.name === "relay run");
    const ends = relays.map((s) => [
      s.attributes["task.run.start"],
      s.attributes["task.run.status"],
    ]);
    expect(ends.sort()).toEqual([
      ["new", "handed_over"],
      ["resumed", "completed"],
    ]);
    const resumed = relays.find((s) => s.attributes["task.run.start"] === "resumed");
    expect(resumed?.parentSpanId).toBe(slash?.spanId);
    expect(resumed?.links).toEqual([{ traceId, spanId: slash?.spanId }]);
    // What the resumed relay asked the service is its own.
    const after = sent.filter(
      (r) => byParent(spans, idsOf(r.traceparent).spanId) === resumed?.spanId,
    );
    expect(after.length).toBeGreaterThan(0);
  });

  it("asks the service to stop in the task's trace, and the Stop click's span links to the run", async () => {
    const requests = h.sim.requests.length;
    await h.command("Write a long traced saga [sim:delay=25] [sim:length=20000]");
    const threadTs = await h.waitForTaskThread("Write a long traced saga");
    const running = await h.slack.waitFor(
      () => h.botReplies(threadTs).find((m) => stopButton(m) && markdownOf(m).length > 40),
      { description: "a streaming message with a Stop button" },
    );
    expect((await h.clickStop(running, OWNER)).status).toBe(200);
    const [final = NO_MESSAGE] = await h.waitForFinal(threadTs);
    expect(statusOf(final)).toMatch(/Stopped/);

    const sent = h.sim.requests.slice(requests);
    const stop = sent.find((r) => r.path.endsWith("/agent/stop"));
    const { traceId, spanId } = idsOf(stop?.traceparent);
    const created = sent.find((r) => r.path.endsWith("/quick-action"));
    expect(idsOf(created?.traceparent).traceId).toBe(traceId);
    const spans = await traceOf(traceId);
    const relay = spans.find((s) => s.name === "relay run");
    expect(relay?.attributes["task.run.status"]).toBe("stopped");
    expect(byParent(spans, spanId)).toBe(relay?.spanId);
    // The click is a request (and a trace) of its own, linked to the run it stopped; its span
    // ends once its handling is over (after the run's final message).
    const clickOf = () =>
      receiver.spans.find(
        (s) => s.name === "slack block_actions" && s.links.some((l) => l.spanId === relay?.spanId),
      );
    await until("the Stop click's span", async () => {
      await tracing.flush();
      return clickOf() !== undefined;
    });
    const click = clickOf();
    expect(click?.attributes).toMatchObject({
      "slack.action.id": "task_stop",
      "slack.team.id": TEAM,
    });
    expect(click?.traceId).not.toBe(traceId);
  });

  it("keeps each task's Slack edits in its own trace when the workspace's budget makes them wait", async () => {
    // A scarce chat.update budget: the edits of two tasks queue together and go in turns.
    const busy = await Harness.start({ rateLimits: { "chat.update": 30 } });
    try {
      const channels = [CHANNEL, "C0SECOND"];
      await Promise.all(
        channels.map((channel) =>
          busy.command(`Draft a budgeted report [sim:length=900] [sim:delay=20]`, { channel }),
        ),
      );
      await until("both answers", () =>
        channels.every((channel) =>
          busy.slack
            .messages(channel, { includeReplies: true })
            .some((m) => m.thread_ts !== m.ts && /Completed in/.test(statusOf(m))),
        ),
      );
      await busy.settled();
      const traces = new Set(busy.sim.requests.map((r) => idsOf(r.traceparent).traceId));
      expect(traces.size).toBe(2);
      let edits = 0;
      for (const traceId of traces) {
        const spans = await traceOf(traceId);
        const channel = spans.find((s) => s.name === "slack /task")?.attributes["slack.channel.id"];
        const updates = spans.filter((s) => s.name === "chat.update");
        edits += updates.length;
        expect(updates.map((s) => s.attributes["slack.channel.id"])).toEqual(
          updates.map(() => channel),
        );
      }
      // Every edit sent is in one of the two traces, none in another.
      const sent = busy.slack.calls.filter((c) => c.method === "chat.update" && c.status === 200);
      expect(edits).toBe(sent.length);
    } finally {
      await busy.close();
    }
  }, 40_000);

  it("never exports a prompt, an answer, a token or a key", async () => {
    await tracing.flush();
    const exported = receiver.bodies.join("\n");
    expect(exported).toContain("relay run"); // the spans are there
    for (const secret of [
      API_KEY,
      SIGNING_SECRET,
      h.slack.botToken,
      "Summarise the tracing story",
    ]) {
      expect(exported).not.toContain(secret);
    }
    const answers = h.sim.runs().map((r) => r.content.slice(0, 40));
    for (const text of answers) expect(exported).not.toContain(text);
    // The SDK had nothing to complain about (an export refused, a bad setting).
    expect(receiver.refused).toBe(0);
    expect(tracingLines.filter((l) => /"level":(40|50)/.test(l))).toEqual([]);
  });
});

/** The parent of a span, by id. */
const byParent = (spans: readonly ReceivedSpan[], spanId: string): string | undefined =>
  spans.find((s) => s.spanId === spanId)?.parentSpanId;
