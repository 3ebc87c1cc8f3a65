/**
 * The relay as the threads see it (`CoordinatorDeps["relay"]`), for unit tests: it records the runs handed
 * to it, the reservations made and what they learnt, and the runs asked to stop.
 */
import type { RunOutcome, RunScope } from "../../../src/runs/relay.ts";
import type { RunTarget, StartProgress } from "../../../src/runs/record.ts";
import { type ReservationId, reservationId } from "../../../src/store/types.ts";
import type { CoordinatorDeps } from "../../../src/threads/coordinator-deps.ts";

type RelayOfThreads = CoordinatorDeps["relay"];

/** The relay: records the runs handed to it; `relayed` are the runs it says it relays. */
export class FakeRelay implements RelayOfThreads {
  readonly started: RunTarget[] = [];
  readonly relayed = new Set<string>();
  readonly reserved = new Set<string>();
  #n = 0;

  async start(target: RunTarget): Promise<void> {
    this.started.push(target);
    this.relayed.add(target.runId);
  }

  async reserve(): Promise<ReservationId> {
    const id = reservationId(`reservation_${++this.#n}`);
    this.reserved.add(id);
    return id;
  }

  /** What each reservation learnt (its thread, message and service run), by id. */
  readonly progresses = new Map<string, StartProgress[]>();

  async progress(id: ReservationId, change: StartProgress): Promise<void> {
    this.progresses.set(id, [...(this.progresses.get(id) ?? []), change]);
  }

  async release(id: ReservationId): Promise<void> {
    this.reserved.delete(id);
  }

  /** Runs asked to stop, and by whom. */
  readonly stopped: { runId: string; userId: string }[] = [];

  async stop(run: { readonly runId: string }, userId: string): Promise<boolean> {
    const { runId } = run;
    if (!this.relayed.has(runId)) return false;
    this.stopped.push({ runId, userId });
    return true;
  }

  isActive(runId: string): boolean {
    return this.relayed.has(runId);
  }

  /** What was asked to stop quietly (its records forgotten), and why. */
  readonly stoppedQuietly: { scope: RunScope; why: string }[] = [];

  async stopQuietly(scope: RunScope, why: string): Promise<void> {
    this.stoppedQuietly.push({ scope, why });
  }

  /** Who listens for runs' ends (the coordinator subscribes when it is made). */
  readonly endListeners: ((outcome: RunOutcome) => Promise<void>)[] = [];

  onEnded(listener: (outcome: RunOutcome) => Promise<void>): void {
    this.endListeners.push(listener);
  }
}
