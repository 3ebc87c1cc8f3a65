/**
 * The app as `npm start` runs it (`node src/main.ts`), a child process with only the
 * environment given (the task service and Slack doubles' addresses, `PORT=0`), resolved once
 * its readiness route answers 200.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Simulator } from "../../tools/simulator/server.ts";
import type { LocalSlack } from "../../tools/local-slack/index.ts";
import { listeningPort } from "./cluster.ts";
import { API_KEY, SIGNING_SECRET } from "./harness.ts";

export interface AppProcess {
  readonly child: ChildProcess;
  /** The port the app said it listens on (PORT=0: the system picked it). */
  readonly port: number;
  /** Everything it wrote, stdout and stderr, in order. */
  readonly output: string[];
}

export async function startAppProcess(
  peers: { sim: Simulator; slack: LocalSlack; dataDir: string },
  env: Record<string, string> = {},
): Promise<AppProcess> {
  const { sim, slack, dataDir } = peers;
  const output: string[] = [];
  const child = spawn(process.execPath, ["src/main.ts"], {
    env: {
      PATH: process.env.PATH ?? "",
      TASK_API_URL: sim.url,
      TASK_API_KEY: API_KEY,
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_API_URL: slack.apiUrl,
      PORT: "0",
      DATA_DIR: dataDir,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (d: Buffer) => output.push(d.toString()));
  child.stderr?.on("data", (d: Buffer) => output.push(d.toString()));
  let port = 0;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the app exited: ${output.join("")}`);
    port ||= listeningPort(output.join(""));
    const ready =
      port > 0 &&
      (await fetch(`http://127.0.0.1:${port}/readyz`)
        .then((r) => r.ok)
        .catch(() => false));
    if (ready) return { child, port, output };
    await new Promise((r) => setTimeout(r, 50));
  }
}
