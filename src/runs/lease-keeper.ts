/** The lease that makes one instance a run's owner; lost or lapsed, the run lets go. */
import type { Logger } from "pino";
import { runLease } from "../store/run-index.ts";
import type { Clock, RunStore } from "./ports.ts";

export interface LeaseKeeperOptions {
  readonly store: Pick<RunStore, "renewLease" | "acquireLease" | "releaseLease" | "getRun">;
  readonly runId: string;
  /** This instance. */
  readonly owner: string;
  readonly ttlMs: number;
  readonly clock: Clock;
  readonly log: Logger;
  /** The run must be handed over: why. */
  readonly onLost: (why: string) => void;
  /** Lease and record both gone (its records were forgotten); asked only once `recorded()`. */
  readonly onGone?: () => void;
  readonly recorded?: () => boolean;
}

export class LeaseKeeper {
  readonly #opts: LeaseKeeperOptions;
  readonly #name: string;
  #renewedAt: number;
  #timer: unknown;
  #stopped = false;

  constructor(options: LeaseKeeperOptions) {
    this.#opts = options;
    this.#name = runLease(options.runId);
    this.#renewedAt = options.clock.now();
  }

  /** How often the lease is renewed: a third of its TTL (at least every 50 ms). */
  static renewEveryMs(ttlMs: number): number {
    return Math.max(50, Math.floor(ttlMs / 3));
  }

  start(): void {
    const { clock, ttlMs } = this.#opts;
    const tick = () => {
      if (this.#stopped) return;
      void this.#renew().finally(() => {
        if (!this.#stopped) this.#timer = clock.setTimeout(tick, LeaseKeeper.renewEveryMs(ttlMs));
      });
    };
    this.#timer = clock.setTimeout(tick, LeaseKeeper.renewEveryMs(ttlMs));
  }

  stop(): void {
    this.#stopped = true;
    this.#opts.clock.clearTimeout(this.#timer);
  }

  /** Stops renewing and gives the lease up at once. */
  async release(): Promise<void> {
    this.stop();
    await this.#opts.store
      .releaseLease(this.#name, this.#opts.owner)
      .catch((err: unknown) => this.#opts.log.warn({ err }, "could not release the run's lease"));
  }

  async #renew(): Promise<void> {
    const { store, owner, ttlMs, clock, log, onLost, onGone, recorded, runId } = this.#opts;
    try {
      let mine = await store.renewLease(this.#name, owner, ttlMs);
      // The store forgets a workspace's runs before their leases: no lease and no record
      // means the run was forgotten, not merely that the lease lapsed.
      if (!mine && onGone && recorded?.() !== false && !(await store.getRun(runId))) {
        onGone();
        return;
      }
      mine ||= await store.acquireLease(this.#name, owner, ttlMs);
      if (mine) this.#renewedAt = clock.now();
      else onLost("lost the run's lease to another instance; handing over");
    } catch (err) {
      // The store is unreachable. If nobody can reach it, nobody can take the run over, so
      // keep relaying; but once the lease must have lapsed, an instance that still reaches
      // the store may own the run: stop here rather than finish it twice.
      log.warn({ err }, "could not renew the run's lease");
      if (clock.now() - this.#renewedAt > ttlMs) {
        onLost("the run's lease lapsed while the store was unreachable; letting it go");
      }
    }
  }
}
