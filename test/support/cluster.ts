/**
 * Several real app processes (`node src/main.ts`, as `npm start` runs it) sharing one Redis,
 * against the in-test service simulator and Slack double. Slack's requests can be sent to
 * any instance; instances can be killed (SIGKILL) or stopped (SIGTERM) at chosen moments.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@keyv/redis";
import type { Simulator } from "../../tools/simulator/server.ts";
import { decodeRunEntry } from "../../src/store/run-index.ts";
import type { RunRecord } from "../../src/store/types.ts";
import { appEnv, type HarnessOptions, SlackScenario, startPeers } from "./harness.ts";
import type { LocalSlack } from "../../tools/local-slack/index.ts";

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  server.close();
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** The few Redis reads the tests make. */
interface RedisReads {
  get(key: string): Promise<string | null>;
  hGet(key: string, field: string): Promise<string | null | undefined>;
  hVals(key: string): Promise<string[]>;
}

export interface Instance {
  readonly id: string;
  /** Where it listens: 0 until it said so. */
  port: number;
  readonly process: ChildProcess;
  readonly output: string[];
  exitCode: number | null | undefined;
}

export interface ClusterOptions extends Pick<HarnessOptions, "simulator" | "slack"> {
  /** Redis, shared by the instances; without it they keep the embedded store in one directory. */
  readonly redisUrl: string | undefined;
  /** More settings of every instance's environment. */
  readonly env?: Readonly<Record<string, string>>;
  readonly instances: number;
  readonly leaseTtlMs?: number;
  readonly scanIntervalMs?: number;
}

export class Cluster extends SlackScenario {
  readonly instances = new Map<string, Instance>();
  readonly namespace = `cl${process.pid}x${Date.now().toString(36)}`;
  readonly #options: ClusterOptions;
  #target = "";
  #redisUrl: string | undefined;
  /** The embedded store's directory when there is no Redis. */
  readonly #dataDir = mkdtempSync(join(tmpdir(), "taskbot-cluster-"));

  private constructor(sim: Simulator, slack: LocalSlack, options: ClusterOptions) {
    super(sim, slack);
    this.#options = options;
    this.#redisUrl = options.redisUrl;
  }

  static async start(options: ClusterOptions): Promise<Cluster> {
    // Several app processes share the machine's cores with the test: a wait for what they
    // show gets three times a single app's default (5 s) before it fails the test.
    const slackOptions = { defaultWaitTimeoutMs: 15_000, ...options.slack };
    const { sim, slack } = await startPeers({ ...options, slack: slackOptions });
    const c = new Cluster(sim, slack, options);
    for (let i = 1; i <= options.instances; i++) await c.spawn(`i${i}`);
    c.target(`i1`);
    return c;
  }

  /** Starts an instance (with `env` on top of the cluster's) and waits until it is healthy. */
  async spawn(
    id: string,
    redisUrl = this.#redisUrl,
    env: Readonly<Record<string, string>> = {},
  ): Promise<Instance> {
    // The system picks the port when the instance listens, and the instance says which: a
    // port found free beforehand could be taken by another suite's server in between.
    const child = spawn(process.execPath, ["src/main.ts"], {
      env: {
        PATH: process.env.PATH ?? "",
        ...appEnv(this.sim, this.slack, {
          PORT: "0",
          ...(redisUrl ? { REDIS_URL: redisUrl } : { DATA_DIR: this.#dataDir }),
          ...this.#options.env,
          STORE_NAMESPACE: this.namespace,
          INSTANCE_ID: id,
          RUN_LEASE_TTL_MS: String(this.#options.leaseTtlMs ?? 3000),
          RESUME_SCAN_INTERVAL_MS: String(this.#options.scanIntervalMs ?? 300),
          ...env,
        }),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const instance: Instance = { id, port: 0, process: child, output: [], exitCode: undefined };
    child.stdout?.on("data", (d: Buffer) => instance.output.push(d.toString()));
    child.stderr?.on("data", (d: Buffer) => instance.output.push(d.toString()));
    child.on("exit", (code) => {
      instance.exitCode = code;
    });
    this.instances.set(id, instance);
    for (;;) {
      if (instance.exitCode !== undefined) {
        throw new Error(`instance ${id} exited: ${instance.output.join("")}`);
      }
      instance.port ||= listeningPort(instance.output.join(""));
      const ok =
        instance.port > 0 &&
        (await fetch(`http://127.0.0.1:${instance.port}/readyz`)
          .then((r) => r.ok)
          .catch(() => false));
      if (ok) return instance;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Slack's next requests go to this instance. */
  target(id: string): this {
    this.#target = id;
    return this;
  }

  get eventsUrl(): string {
    const instance = this.instances.get(this.#target);
    if (!instance) throw new Error(`no instance ${this.#target}`);
    return `http://127.0.0.1:${instance.port}/slack/events`;
  }

  instance(id: string): Instance {
    const i = this.instances.get(id);
    if (!i) throw new Error(`no instance ${id}`);
    return i;
  }

  /** Sends a signal and waits for the process to end; returns its exit code. */
  async kill(id: string, signal: NodeJS.Signals): Promise<number | null> {
    const i = this.instance(id);
    if (i.exitCode === undefined) {
      const exited = once(i.process, "exit");
      i.process.kill(signal);
      await exited;
    }
    return i.exitCode ?? null;
  }

  /** The instance holding a run's lease, read from Redis. */
  async owner(runId: string): Promise<string | undefined> {
    return (await this.#redis((r) => r.get(`${this.namespace}:lease:run:${runId}`))) ?? undefined;
  }

  /** The id of the service run whose prompt contains `label`, as soon as it exists. */
  async runFor(label: string, timeoutMs = 10_000): Promise<string> {
    const find = () => this.sim.runs().find((r) => r.promptText.includes(label))?.id;
    const found = find();
    if (found) return found;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.sim.events.off("run", onRun);
        reject(new Error(`no run for "${label}"`));
      }, timeoutMs);
      const onRun = () => {
        const id = find();
        if (!id) return;
        clearTimeout(timer);
        this.sim.events.off("run", onRun);
        resolve(id);
      };
      this.sim.events.on("run", onRun);
    });
  }

  /** Waits (polling Redis, bounded) until some instance holds the run's lease. */
  waitForOwner(runId: string, timeoutMs = 10_000): Promise<string> {
    return this.#poll(() => this.owner(runId), timeoutMs, `nobody took run ${runId}`);
  }

  /** Waits until the store records a run (by id) as unfinished. */
  waitForRecord(runId: string, timeoutMs = 10_000): Promise<string> {
    return this.#poll(
      () => this.#redis((r) => r.hGet(`${this.namespace}:runs`, `${this.namespace}:run:${runId}`)),
      timeoutMs,
      `run ${runId} was never recorded`,
    );
  }

  /** The first unfinished-run record (as the store reads it) that `matches`, once there is one. */
  waitForRecordWhere(
    matches: (record: RunRecord) => boolean,
    timeoutMs = 10_000,
  ): Promise<RunRecord> {
    return this.#poll(
      async () => {
        const all = await this.#redis((r) => r.hVals(`${this.namespace}:runs`));
        return all.map((raw) => decodeRunEntry(raw)?.record).find((r) => r && matches(r));
      },
      timeoutMs,
      "no such run was recorded",
    );
  }

  async #poll<T>(read: () => Promise<T | null | undefined>, timeoutMs: number, failure: string) {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (value) return value;
      if (Date.now() > until) throw new Error(failure);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async #redis<T>(fn: (client: RedisReads) => Promise<T>): Promise<T> {
    const client = createClient({ url: this.#redisUrl });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.close();
    }
  }

  /** Log lines (JSON) of an instance that match `msg`. */
  logs(id: string, msg: string): Array<Record<string, unknown>> {
    return this.instance(id)
      .output.join("")
      .split("\n")
      .filter((l) => l.includes(msg))
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return [];
        }
      });
  }

  async close(): Promise<void> {
    for (const i of this.instances.values()) {
      if (i.exitCode === undefined) {
        const exited = once(i.process, "exit");
        i.process.kill("SIGKILL");
        await exited;
      }
    }
    await this.sim.close();
    await this.slack.close();
    rmSync(this.#dataDir, { recursive: true, force: true });
  }
}

/** The port in an instance's "Task bot is running" log line, or 0 before it is written. */
export function listeningPort(output: string): number {
  const lines = output.split("\n");
  lines.pop(); // a line still being written
  const running = lines.find((line) => line.includes("Task bot is running"));
  const port = running ? (JSON.parse(running) as { port?: unknown }).port : undefined;
  return typeof port === "number" ? port : 0;
}
