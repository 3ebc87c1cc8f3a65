/** A redis-server of the tests' own, on a free loopback port (needs `redis-server` on PATH). */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./cluster.ts";

export class RedisServer {
  readonly dir = mkdtempSync(join(tmpdir(), "taskbot-redis-"));
  readonly #persist: boolean;
  port = 0;
  #process: ChildProcess | undefined;

  /** `persist`: an append-only file in `dir`, so that a stop and a start keep the data. */
  constructor(options: { persist?: boolean } = {}) {
    this.#persist = options.persist ?? false;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts it (again, on the same port) and resolves once it accepts connections. */
  async start(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    const child = spawn(
      "redis-server",
      [
        ...["--port", String(this.port), "--bind", "127.0.0.1", "--dir", this.dir],
        ...["--appendonly", this.#persist ? "yes" : "no", "--save", ""],
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    this.#process = child;
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = once(child, "exit");
    for (;;) {
      if (out.includes("Ready to accept connections")) return;
      if (child.exitCode !== null) throw new Error(`redis-server exited: ${out.trim()}`);
      await Promise.race([once(child.stdout ?? child, "data"), exited]);
    }
  }

  async stop(): Promise<void> {
    const child = this.#process;
    if (!child || child.exitCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGTERM"); // graceful: the append-only file is flushed
    await exited;
  }

  async close(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
