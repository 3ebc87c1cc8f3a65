/**
 * Tasks and follow-ups being created here: each recorded (a `reserved` run record) with the
 * messages it will post and, once the service answered, the service's run, under a lease this
 * instance keeps while it lives, so another instance can finish the start if this one dies.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import {
  type ReservationId,
  reservationId,
  type ReservedRun,
  type RunOpening,
  type StartPlace,
} from "../store/types.ts";
import { currentTraceparent } from "../tracing/spans.ts";
import { runLease } from "../store/run-index.ts";
import { LeaseKeeper } from "./lease-keeper.ts";
import type { Clock, RunStore } from "./ports.ts";
import { learnt, reservedRecord, type StartProgress } from "./record.ts";

export interface ReservationsOptions {
  readonly store: RunStore;
  readonly instanceId: string;
  readonly leaseTtlMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

interface Reserved {
  readonly keeper: LeaseKeeper;
  record: ReservedRun;
  /** The latest write of the record. */
  writing: Promise<void>;
}

export class Reservations {
  readonly #opts: ReservationsOptions;
  readonly #held = new Map<string, Reserved>();

  constructor(options: ReservationsOptions) {
    this.#opts = options;
  }

  holds(id: string): boolean {
    return this.#held.has(id);
  }

  /** Records a start (see Relay.reserve); returns its id. */
  async reserve(
    key: StartPlace,
    startedAt: number,
    opening: RunOpening,
    messageTs?: string,
  ): Promise<ReservationId> {
    const id = reservationId(`reserved:${key.teamId}:${key.channelId}:${randomUUID()}`);
    // With the request's trace, for the instance that may finish this start.
    const record = reservedRecord(id, key, startedAt, opening, messageTs, currentTraceparent());
    await this.#opts.store.putRun(record);
    await this.hold(record);
    return id;
  }

  /** Records what a reservation learnt: its thread, its message, the service's run. */
  progress(id: ReservationId, change: StartProgress): Promise<void> {
    const held = this.#held.get(id);
    if (!held) return Promise.resolve();
    held.record = learnt(held.record, change);
    // One write at a time, each of the latest record: a slower write never undoes a newer one.
    held.writing = held.writing.then(() => this.#opts.store.putRun(held.record));
    return held.writing;
  }

  /** Drops a reservation: its record and its lease. */
  async release(id: ReservationId): Promise<void> {
    const held = this.#held.get(id);
    held?.keeper.stop();
    this.#held.delete(id);
    await held?.writing.catch(() => undefined);
    await this.#opts.store.deleteRun(id);
    await this.#opts.store.releaseLease(runLease(id), this.#opts.instanceId);
  }

  /** Stops keeping a reservation whose record a run relay takes over (with its lease). */
  forget(id: ReservationId): void {
    this.#held.get(id)?.keeper.stop();
    this.#held.delete(id);
  }

  /** Takes (or keeps) a reservation's lease while this instance lives. */
  async hold(record: ReservedRun): Promise<void> {
    const { store, instanceId, logger, leaseTtlMs, clock } = this.#opts;
    await store.acquireLease(runLease(record.runId), instanceId, leaseTtlMs);
    // Creating a task can take longer than a lease: keep it while this instance lives.
    const keeper = new LeaseKeeper({
      store,
      runId: record.runId,
      owner: instanceId,
      ttlMs: leaseTtlMs,
      clock,
      log: logger,
      onLost: () => undefined,
    });
    keeper.start();
    this.#held.set(record.runId, { keeper, record, writing: Promise.resolve() });
  }
}
