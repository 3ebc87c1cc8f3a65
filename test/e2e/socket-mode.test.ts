import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Simulator } from "../../tools/simulator/server.ts";
import { freePort } from "../support/cluster.ts";
import { appEnv, CHANNEL, OWNER, startPeers, statusOf, TEAM } from "../support/harness.ts";
import type { LocalSlack } from "../../tools/local-slack/index.ts";
import { LocalSocketMode } from "../../tools/local-slack/local-socket-mode.ts";
import { until } from "../support/until.ts";

describe("Socket Mode (SLACK_APP_TOKEN set): npm start with no public URL", () => {
  let sim: Simulator;
  let slack: LocalSlack;
  let socket: LocalSocketMode;
  let child: ChildProcess;
  let port: number;
  const output: string[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), "taskbot-socket-"));

  beforeAll(async () => {
    ({ sim, slack } = await startPeers());
    socket = await LocalSocketMode.start();
    slack.socketModeUrl = socket.url;
    port = await freePort();
    const env = appEnv(sim, slack, {
      SLACK_APP_TOKEN: slack.appToken,
      PORT: String(port),
      DATA_DIR: dataDir,
    });
    delete env.SLACK_SIGNING_SECRET;
    child = spawn(process.execPath, ["src/main.ts"], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (d: Buffer) => output.push(d.toString()));
    child.stderr?.on("data", (d: Buffer) => output.push(d.toString()));
    await socket.connected();
  });

  afterAll(async () => {
    if (child.exitCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    }
    await socket.close();
    await sim.close();
    await slack.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("acknowledges /task over the socket and answers in a thread; a reply continues it", async () => {
    const ack = await socket.send("slash_commands", {
      command: "/task",
      text: "Socket mode task [sim:length=300]",
      team_id: TEAM,
      user_id: OWNER,
      channel_id: CHANNEL,
      response_url: slack.responseUrl("socket"),
      trigger_id: "trig.socket.1",
    });
    expect(ack.envelope_id).toBeTruthy();
    const parent = await slack.waitFor(
      () =>
        slack
          .messages(CHANNEL)
          .find((m) => JSON.stringify(m.blocks ?? []).includes("Socket mode task")),
      { description: "the task message" },
    );
    const answered = () =>
      slack
        .thread(CHANNEL, parent.ts)
        .filter((m) => m.ts !== parent.ts && /Completed in/.test(statusOf(m)));
    await slack.waitFor(() => answered().length === 1, {
      timeoutMs: 15_000,
      description: "the answer",
    });

    const replyTs = slack.addMessage({
      channel: CHANNEL,
      user: OWNER,
      text: "More please [sim:length=100]",
      thread_ts: parent.ts,
    });
    await socket.send(
      "events_api",
      {
        team_id: TEAM,
        event_id: "EvSocket1",
        type: "event_callback",
        event: {
          type: "message",
          channel: CHANNEL,
          user: OWNER,
          text: "More please [sim:length=100]",
          ts: replyTs,
          thread_ts: parent.ts,
        },
      },
      { retry_attempt: 0, retry_reason: "" },
    );
    await slack.waitFor(() => answered().length === 2, {
      timeoutMs: 15_000,
      description: "the follow-up answer",
    });
    expect(sim.runs().filter((r) => r.followUp)).toHaveLength(1);
    expect(output.join("")).not.toContain(slack.appToken);
  });

  it("is not ready while its Socket Mode connection is down, yet alive, and ready again once reconnected", async () => {
    const probe = async (path: string) => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      return { status: res.status, body: (await res.json()) as unknown };
    };
    const ready = { ok: true, running: true, slack: true, store: true };
    expect(await probe("/readyz")).toEqual({ status: 200, body: ready });

    // Slack's end drops the connection and refuses new ones for a while.
    socket.refuse();
    socket.drop();
    await until("/readyz to say 503 once the connection dropped", async () => {
      return (await probe("/readyz")).status === 503;
    });
    expect((await probe("/readyz")).body).toEqual({ ...ready, ok: false, slack: false });
    // Alive all along: restarting the process would not bring Slack back.
    expect(await probe("/healthz")).toEqual({ status: 200, body: { ok: true } });
    // The client tries again by itself; refused, the instance stays not ready.
    await until("a reconnection attempt", () => socket.refused > 0);
    expect((await probe("/readyz")).status).toBe(503);

    socket.refuse(false);
    await until("/readyz to say 200 once reconnected", async () => {
      return (await probe("/readyz")).status === 200;
    });
    expect(socket.open).toBe(true);
    // Ready means reachable: Slack's deliveries are acknowledged again.
    const ack = await socket.send("slash_commands", {
      command: "/task",
      text: "",
      team_id: TEAM,
      user_id: OWNER,
      channel_id: CHANNEL,
      response_url: slack.responseUrl("socket-again"),
      trigger_id: "trig.socket.2",
    });
    expect(ack.envelope_id).toBeTruthy();
  }, 40_000);

  it("acknowledges a Workflow Builder step over the socket and ends it when its task ends", async () => {
    const inputs = { prompt: "Socket step [sim:length=120]", channel: CHANNEL, requester: OWNER };
    const { id, token } = await slack.executeFunction(
      { callbackId: "run_task", inputs },
      { socket },
    );
    const ended = await slack.waitFor(
      () => (slack.execution(id)?.status === "completed" ? slack.execution(id) : undefined),
      { timeoutMs: 15_000, description: "the step ended" },
    );
    expect(ended?.outputs?.answer).toContain("Socket step");
    // The execution's token never reaches the logs.
    expect(output.join("")).not.toContain(token);
  });
});
