/**
 * Tracing as an operator turns it on: `npm start`'s program with OTEL_EXPORTER_OTLP_ENDPOINT
 * pointing at a collector (here a local OTLP/JSON receiver) and nothing else of the app's
 * changed. One /task is one trace: the Slack request, the service calls (which carried its
 * `traceparent`) and the Slack writes, exported by the time the process has stopped; the
 * task's log lines on stdout carry the trace's id and the workspace.
 */
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../tools/simulator/server.ts";
import { startAppProcess } from "../support/app-process.ts";
import { API_KEY, CHANNEL, OWNER, SIGNING_SECRET, statusOf, TEAM } from "../support/harness.ts";
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.ts";
import { type LocalSlack, startLocalSlack } from "../../tools/local-slack/index.ts";
import { sendSlashCommand } from "../../tools/local-slack/slack-requests.ts";

describe("npm start with an OTLP collector configured", () => {
  let sim: Simulator;
  let slack: LocalSlack;
  let receiver: OtlpReceiver;
  let child: ChildProcess;
  let port = 0;
  let output: string[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), "taskbot-otel-"));

  beforeAll(async () => {
    sim = await startSimulator({ apiKeys: [API_KEY], chunkDelayMs: 5 });
    slack = await startLocalSlack({ teamId: TEAM, users: [{ id: OWNER, name: "owner" }] });
    receiver = await startOtlpReceiver();
    ({ child, port, output } = await startAppProcess(
      { sim, slack, dataDir },
      {
        // The standard variables, nothing else: the SDK batches, and exports the rest at exit.
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      },
    ));
  });

  afterAll(async () => {
    if (child.exitCode === null) child.kill("SIGKILL");
    await sim.close();
    await slack.close();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("exports one trace for a /task, whose id its service requests and log lines carry", async () => {
    const res = await sendSlashCommand(`http://127.0.0.1:${port}/slack/events`, SIGNING_SECRET, {
      text: "Trace this task end to end [sim:length=300]",
      team_id: TEAM,
      user_id: OWNER,
      channel_id: CHANNEL,
      response_url: slack.responseUrl("otel"),
      trigger_id: "trig.otel",
    });
    expect(res.status).toBe(200);
    await slack.waitFor(
      () =>
        slack
          .messages(CHANNEL, { includeReplies: true })
          .some((m) => m.thread_ts !== m.ts && /Completed in/.test(statusOf(m))),
      { timeoutMs: 15_000, description: "a completed answer" },
    );
    child.kill("SIGTERM");
    const [code] = (await once(child, "close")) as [number | null]; // its output read to the end
    expect(code).toBe(0);

    const traceIds = new Set(sim.requests.map((r) => r.traceparent?.split("-")[1]));
    expect(traceIds.size).toBe(1);
    const [traceId] = traceIds;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const spans = receiver.spans.filter((s) => s.traceId === traceId);
    const names = spans.map((s) => s.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "POST /slack/events",
        "slack /task",
        "POST /api/v1/public/quick-action",
        "GET /api/v1/public/threads/{thread_id}/response",
        "chat.postMessage",
        "relay run",
      ]),
    );
    expect(spans.filter((s) => s.parentSpanId === undefined).map((s) => s.name)).toEqual([
      "POST /slack/events",
    ]);
    expect(spans[0]?.service).toBe("slack-task-bot");

    const lines = output
      .join("")
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.find((l) => l.component === "opentelemetry")?.msg).toMatch(/tracing on/);
    expect(lines.filter((l) => l.component === "opentelemetry" && Number(l.level) >= 40)).toEqual(
      [],
    );
    const runLines = lines.filter((l) => l.msg === "run ended");
    expect(runLines).toHaveLength(1);
    expect(runLines[0]).toMatchObject({ trace_id: traceId, teamId: TEAM });
  });
});
