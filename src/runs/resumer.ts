/** Takes over unfinished runs nobody relays: whoever gets a run's lease first resumes it. */
import type { Logger } from "pino";
import type { ThreadStore } from "./ports.ts";
import { runLease } from "../store/run-index.ts";
import type { Relay } from "./relay.ts";

export interface ResumerOptions {
  readonly store: ThreadStore;
  readonly relay: Relay;
  readonly logger: Logger;
  readonly leaseTtlMs: number;
  readonly intervalMs: number;
}

export class Resumer {
  readonly #opts: ResumerOptions;
  #timer: NodeJS.Timeout | undefined;
  #scanning: Promise<void> | undefined;
  #stopped = false;

  constructor(options: ResumerOptions) {
    this.#opts = options;
  }

  /** Scans at once (runs left over from before a restart), then every interval. */
  start(): void {
    this.#stopped = false;
    void this.scan();
    this.#timer = setInterval(() => void this.scan(), this.#opts.intervalMs);
    this.#timer.unref();
  }

  /** One pass over the unfinished runs nobody holds the lease of (one pass at a time). */
  scan(): Promise<void> {
    this.#scanning ??= this.#scan().finally(() => {
      this.#scanning = undefined;
    });
    return this.#scanning;
  }

  async #scan(): Promise<void> {
    const { store, relay, logger } = this.#opts;
    let runs;
    try {
      runs = await store.listRuns();
    } catch (err) {
      logger.debug({ err }, "cannot list unfinished runs now");
      return;
    }
    for (const run of runs) {
      if (this.#stopped) return;
      if (relay.isActive(run.runId)) continue;
      try {
        if (
          await store.acquireLease(runLease(run.runId), relay.instanceId, this.#opts.leaseTtlMs)
        ) {
          // Read it again under the lease: the previous owner may have written since the
          // list, or finished it (record gone) just before letting the lease go.
          const fresh = await store.getRun(run.runId);
          if (fresh) void relay.resume(fresh);
          else await store.releaseLease(runLease(run.runId), relay.instanceId);
        }
      } catch (err) {
        logger.debug({ err, runId: run.runId }, "could not take over a run");
      }
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#scanning;
  }
}
