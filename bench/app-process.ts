/**
 * The app as `npm start` runs it: `node src/main.ts` in a child process (HTTP mode, embedded
 * store in a temporary DATA_DIR), so that its CPU time and memory are its own.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { freePort } from "../test/support/cluster.ts";

const ROOT = new URL("..", import.meta.url).pathname;

const counts = z.record(z.string(), z.number()).catch({});

/** The part of `GET /metrics.json` the benchmark reads (anything missing reads as empty). */
const MetricsSchema = z.object({
  process: z.object({
    rssBytes: z.number(),
    cpu: z.object({ user: z.number(), system: z.number() }),
  }),
  slack: z
    .object({
      calls: counts,
      rateLimited: counts,
      failed: counts,
      superseded: z.number().catch(0),
      queueWait: z
        .record(z.string(), z.object({ count: z.number(), sumMs: z.number(), maxMs: z.number() }))
        .catch({}),
    })
    .catch({ calls: {}, rateLimited: {}, failed: {}, superseded: 0, queueWait: {} }),
  relay: z
    .object({
      deltas: z.number().catch(0),
      edits: z.number().catch(0),
      lagMs: z
        .object({ count: z.number(), sum: z.number(), max: z.number() })
        .catch({ count: 0, sum: 0, max: 0 }),
    })
    .catch({ deltas: 0, edits: 0, lagMs: { count: 0, sum: 0, max: 0 } }),
});

export type AppMetrics = z.infer<typeof MetricsSchema>;

export interface AppProcess {
  readonly pid: number;
  readonly port: number;
  readonly eventsUrl: string;
  /** stdout + stderr of the child, for the error message when it dies. */
  readonly output: string[];
  exited(): boolean;
  metrics(): Promise<AppMetrics>;
  /** Peak resident set size from /proc (VmHWM), when the platform has it. */
  peakRssBytes(): number | undefined;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`; removes the data dir. */
  stop(graceMs?: number): Promise<void>;
}

const OUTPUT_LINES = 200;

export async function startAppProcess(
  env: Record<string, string>,
  options: {
    readyTimeoutMs?: number;
    cpuProfileDir?: string | undefined;
    /** The checkout whose `src/main.ts` runs (default: this one). */
    appDir?: string | undefined;
  } = {},
): Promise<AppProcess> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), "taskbot-bench-"));
  const profile =
    options.cpuProfileDir === undefined
      ? []
      : ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfileDir}`];
  // BENCH_NODE_ARGS: extra flags for the app's node (e.g. --perf-basic-prof for `perf`).
  const extra = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter((a) => a !== "");
  const child: ChildProcess = spawn(process.execPath, [...extra, ...profile, "src/main.ts"], {
    cwd: options.appDir ?? ROOT,
    env: { PATH: process.env.PATH ?? "", ...env, PORT: String(port), DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const keep = (d: Buffer) => {
    output.push(d.toString());
    if (output.length > OUTPUT_LINES) output.splice(0, output.length - OUTPUT_LINES);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  let exitCode: number | null | undefined;
  const exit = new Promise<void>((resolve) => {
    child.once("exit", (code) => {
      exitCode = code;
      resolve();
    });
    // Not started at all (e.g. a bad --app directory): no "exit" follows.
    child.once("error", (err) => {
      output.push(String(err));
      exitCode ??= null;
      resolve();
    });
  });
  // If the benchmark itself dies, the app must not outlive it.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);

  const base = `http://127.0.0.1:${port}`;
  const stop = async (graceMs = 10_000): Promise<void> => {
    if (exitCode === undefined) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exit;
      clearTimeout(timer);
    }
    process.off("exit", killOnExit);
    rmSync(dataDir, { recursive: true, force: true });
  };

  const pid = child.pid;
  try {
    if (pid === undefined) throw new Error("the app process did not start");
    const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
    for (;;) {
      if (exitCode !== undefined) {
        throw new Error(`the app exited (${String(exitCode)}) at start-up:\n${output.join("")}`);
      }
      if (Date.now() > deadline)
        throw new Error(`the app was not ready in time:\n${output.join("")}`);
      const ok = await fetch(`${base}/readyz`)
        .then((r) => r.ok)
        .catch(() => false);
      if (ok) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch (err) {
    await stop(2000);
    throw err;
  }

  return {
    pid,
    port,
    eventsUrl: `${base}/slack/events`,
    output,
    exited: () => exitCode !== undefined,
    async metrics() {
      // Versions before Prometheus metrics served this JSON at /metrics (for --app comparisons).
      let res = await fetch(`${base}/metrics.json`, { signal: AbortSignal.timeout(10_000) });
      if (res.status === 404) {
        res = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(10_000) });
      }
      if (!res.ok) throw new Error(`GET /metrics.json answered ${res.status}`);
      return MetricsSchema.parse(await res.json());
    },
    peakRssBytes() {
      try {
        const status = readFileSync(`/proc/${pid}/status`, "utf8");
        const kb = /^VmHWM:\s+(\d+)\s+kB/m.exec(status)?.[1];
        return kb === undefined ? undefined : Number(kb) * 1024;
      } catch {
        return undefined;
      }
    },
    stop,
  };
}
