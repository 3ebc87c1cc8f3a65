import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../tools/simulator/server.ts";
import { startAppProcess } from "../support/app-process.ts";
import { API_KEY, CHANNEL, OWNER, SIGNING_SECRET, statusOf, TEAM } from "../support/harness.ts";
import { type LocalSlack, startLocalSlack } from "../../tools/local-slack/index.ts";
import { sendSlashCommand } from "../../tools/local-slack/slack-requests.ts";

describe("npm start as a real process", () => {
  let sim: Simulator;
  let slack: LocalSlack;
  let child: ChildProcess;
  let port = 0;
  let output: string[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), "taskbot-proc-"));

  beforeAll(async () => {
    sim = await startSimulator({ apiKeys: [API_KEY], chunkDelayMs: 5 });
    // The person who asks is one Slack knows: the app refuses anyone it cannot identify.
    slack = await startLocalSlack({ teamId: TEAM, users: [{ id: OWNER, name: "owner" }] });
    // PORT 0: the system picks it when the app listens, and the app's log line says which.
    ({ child, port, output } = await startAppProcess(
      { sim, slack, dataDir },
      { LOG_LEVEL: "debug" },
    ));
  });

  afterAll(async () => {
    if (child.exitCode === null) child.kill("SIGKILL");
    await sim.close();
    await slack.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("answers /task end to end, then exits 0 on SIGTERM with no secret in its output", async () => {
    const res = await sendSlashCommand(`http://127.0.0.1:${port}/slack/events`, SIGNING_SECRET, {
      text: "Build a process-level smoke test [sim:length=300]",
      team_id: TEAM,
      user_id: OWNER,
      channel_id: CHANNEL,
      response_url: slack.responseUrl("proc"),
      trigger_id: "trig.proc",
    });
    expect(res.status).toBe(200);
    await slack.waitFor(
      () =>
        slack
          .messages(CHANNEL, { includeReplies: true })
          .some(
            (m) =>
              m.thread_ts !== undefined && m.thread_ts !== m.ts && /Completed in/.test(statusOf(m)),
          ),
      { timeoutMs: 15_000, description: "a completed answer" },
    );
    child.kill("SIGTERM");
    const [code] = (await once(child, "close")) as [number | null]; // its output read to the end
    expect(code).toBe(0);
    const all = output.join("");
    expect(all).toContain("Task bot is running");
    for (const secret of [API_KEY, slack.botToken, SIGNING_SECRET])
      expect(all).not.toContain(secret);
  });
});
