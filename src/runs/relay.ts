/** The runs this instance shows in Slack: starts, reserves, resumes, stops and hands them over. */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { ThreadRef } from "../service/client.ts";
import { TaskServiceError } from "../service/errors.ts";
import type { AppMetrics } from "../metrics.ts";
import {
  type ReservationId,
  reservationId,
  type ReservedRun,
  type RunOpening,
  personStop,
  type RunRecord,
  type SlackThreadKey,
  type StartPlace,
} from "../store/types.ts";
import { formatDuration } from "../view/render.ts";
import { runLease } from "../store/run-index.ts";
import {
  type Clock,
  type RunningThreads,
  systemClock,
  type ThreadStore,
  type Workspaces,
} from "./ports.ts";
import { type MemoryLimits, memoryLimits } from "./memory.ts";
import { RelayCounters, type RelayMetrics } from "./relay-metrics.ts";
import {
  isShown,
  learnt,
  needsAdopting,
  relayedRecord,
  reopened,
  reservedRecord,
  serviceRef,
  type RunTarget,
  type ShownRun,
  type StartProgress,
} from "./record.ts";
import { type RunDeps, Run, type RunStart } from "./run.ts";
import { type StartRelay, type StartResult, startReserved } from "./start.ts";
import {
  MAX_RELAY_DEATHS,
  MAX_RELAY_DEATHS_FOLLOWING,
  outcomeOf,
  INTERRUPTED,
  EndedHere,
  type RunEnd,
  type RunOutcome,
} from "./outcome.ts";
import { RunFate, type StopAsk } from "./fate.ts";
import { type RelaySpan, startRelaySpan } from "../tracing/run-spans.ts";
import { currentTraceparent, inTrace, linkToTrace } from "../tracing/spans.ts";
import { LeaseKeeper } from "./lease-keeper.ts";

export type { RunOutcome } from "./outcome.ts";

/** The runs to forget: a workspace's, or those of one of its channels, or of one thread. */
export interface RunScope {
  readonly teamId: string;
  readonly channelId?: string;
  readonly threadTs?: string;
}

export interface RelayOptions extends Partial<
  Pick<RunDeps, "streaming" | "follow" | "previews" | "memory" | "clock" | "workflowSteps">
> {
  readonly workspaces: Workspaces;
  readonly store: ThreadStore;
  /** Told when an adopted start's run runs: the thread layer records it. */
  readonly threads: RunningThreads;
  readonly logger: Logger;
  /** This instance, as lease holder. */
  readonly instanceId: string;
  /** A run's lease without renewal (renewed every third of it). */
  readonly leaseTtlMs?: number;
  /** How long a stopped run may take to report its end. */
  readonly stopGraceMs?: number;
  /** A run still going this long after it started is stopped at the service (default: none). */
  readonly maxRunMs?: number;
  readonly metrics?: AppMetrics;
}

interface Relayed {
  readonly fate: RunFate;
  done: Promise<void>;
  /** Only a Stop from this thread stops it. */
  readonly key: SlackThreadKey;
  readonly span: RelaySpan;
}

/** A start being made here, its record kept under a lease while this instance lives. */
interface Reserved {
  readonly keeper: LeaseKeeper;
  record: ReservedRun;
  writing: Promise<void>;
}

export class Relay {
  readonly #opts: RelayOptions;
  readonly #runs = new Map<string, Relayed>();
  readonly #leaseTtl: number;
  readonly #clock: Clock;
  readonly #counters: RelayCounters;
  readonly #memory: MemoryLimits;
  readonly #reserved = new Map<string, Reserved>();
  readonly #endListeners: ((outcome: RunOutcome) => Promise<void>)[] = [];

  constructor(options: RelayOptions) {
    this.#opts = options;
    this.#leaseTtl = options.leaseTtlMs ?? 15_000;
    this.#clock = options.clock ?? systemClock;
    this.#counters = new RelayCounters(options.metrics);
    this.#memory = options.memory ?? memoryLimits();
  }

  /** Hears each run's end once its final state is shown (not a hand-over or a forgotten run). */
  onEnded(listener: (outcome: RunOutcome) => Promise<void>): void {
    this.#endListeners.push(listener);
  }

  metrics(): RelayMetrics {
    return this.#counters.snapshot();
  }

  get activeRuns(): number {
    return this.#runs.size;
  }

  get instanceId(): string {
    return this.#opts.instanceId;
  }

  isActive(runId: string): boolean {
    return this.#runs.has(runId) || this.#reserved.has(runId);
  }

  /** Records a new run, takes its lease and follows it in the background. Never rejects. */
  async start(target: RunTarget): Promise<void> {
    const record = relayedRecord(target);
    const { store, instanceId, logger } = this.#opts;
    let recorded = false;
    try {
      await store.putRun(record);
      recorded = true;
      if (!(await store.acquireLease(runLease(target.runId), instanceId, this.#leaseTtl))) {
        return; // someone else relays it already
      }
    } catch (err) {
      // Without the store the run cannot be handed over, but it can still be shown.
      const { runId, key } = target;
      logger.warn({ err, runId, teamId: key.teamId }, "could not record the run; relaying anyway");
    }
    this.#counters.started();
    void this.#launch(record, "new", !recorded);
  }

  /** Records a start before the service answered, so another instance can finish it. */
  async reserve(place: StartPlace, startedAt: number, opening: RunOpening): Promise<ReservationId> {
    const id = reservationId(`reserved:${place.teamId}:${place.channelId}:${randomUUID()}`);
    // With the request's trace, for the instance that may finish this start.
    const record = reservedRecord(id, place, startedAt, opening, currentTraceparent());
    // Its lease first: another instance's scan that finds the record must not take it over.
    await this.#hold(record);
    try {
      await this.#opts.store.putRun(record);
    } catch (err) {
      await this.#letReservationGo(id, true);
      throw err;
    }
    return id;
  }

  progress(id: ReservationId, change: StartProgress): Promise<void> {
    const held = this.#reserved.get(id);
    if (!held) return Promise.resolve();
    held.record = learnt(held.record, change);
    // One write at a time, each of the latest record: a slower write never undoes a newer one.
    held.writing = held.writing.then(() => this.#opts.store.putRun(held.record));
    return held.writing;
  }

  /** Drops a reservation (its record and lease) once the run is recorded, or the start failed. */
  async release(id: ReservationId): Promise<void> {
    const held = this.#reserved.get(id);
    void this.#letReservationGo(id);
    await held?.writing.catch(() => undefined);
    await this.#opts.store.deleteRun(id);
    await this.#opts.store.releaseLease(runLease(id), this.instanceId);
  }

  async #hold(record: ReservedRun): Promise<void> {
    const { store, instanceId, logger } = this.#opts;
    await store.acquireLease(runLease(record.runId), instanceId, this.#leaseTtl);
    // Creating a task can take longer than a lease: keep it while this instance lives.
    const keeper = new LeaseKeeper({
      store,
      runId: record.runId,
      owner: instanceId,
      ttlMs: this.#leaseTtl,
      clock: this.#clock,
      log: logger,
      onLost: () => undefined,
    });
    keeper.start();
    this.#reserved.set(record.runId, { keeper, record, writing: Promise.resolve() });
  }

  /** Stops keeping a reservation: its lease is released, or a run's relay takes it over. */
  async #letReservationGo(id: string, releaseLease = false): Promise<void> {
    this.#reserved.get(id)?.keeper.stop();
    this.#reserved.delete(id);
    if (releaseLease) {
      await this.#opts.store.releaseLease(runLease(id), this.instanceId).catch(() => undefined);
    }
  }

  /** Finishes a run another instance left, in its request's trace; the caller holds its lease. */
  resume(record: RunRecord): Promise<void> {
    return inTrace(record.traceparent, () => this.#resume(record));
  }

  async #resume(record: RunRecord): Promise<void> {
    // A start its instance left unfinished: its thread, its message or its run still to show.
    if (!isShown(record) || (record.kind === "reserved" && needsAdopting(record))) {
      return this.#adopt(record);
    }
    const { runId, key } = record;
    const log = this.#opts.logger.child({ runId, teamId: key.teamId });
    if (record.kind === "relaying") {
      // Each instance that began relaying it and did not hand it over died doing so; past the
      // limit it is not followed again (it could kill this one too).
      const died = record.openRelays ?? 0;
      if (died >= (record.finishing ? MAX_RELAY_DEATHS : MAX_RELAY_DEATHS_FOLLOWING)) {
        log.error(
          { channel: key.channelId, thread: key.threadTs, died },
          `run quarantined: ${died} instances died relaying it; it is not relayed again`,
        );
        this.#counters.quarantined();
        return this.#launch(record, "quarantined");
      }
      const counted = reopened(record);
      const kept = await this.#opts.store.updateRun(counted).catch((err: unknown) => {
        log.warn({ err }, "could not count a run's relay; relaying anyway");
        return true;
      });
      if (!kept) return this.#opts.store.releaseLease(runLease(runId), this.instanceId);
      record = counted;
    }
    log.info({ shown: record.kind === "relaying" ? record.shownText.length : 0 }, "resuming a run");
    this.#counters.resumed();
    return this.#launch(record, "resumed");
  }

  /** A start whose instance died: it goes on by a fresh start's steps (start.ts). */
  async #adopt(record: ReservedRun): Promise<void> {
    const { workspaces, threads, logger } = this.#opts;
    const { key, opening: plan, created } = record;
    const log = logger.child({ teamId: key.teamId });
    log.info({ id: record.runId }, "finishing the start of a run whose instance stopped");
    await this.#hold(record);
    let result: StartResult | undefined;
    try {
      const relay = this.#adopting(record.traceparent);
      result = await startReserved(
        { relay, workspaces, threads, logger: log },
        {
          place: { ...key, messageTs: record.messageTs[0] },
          plan,
          startedAt: record.startedAt,
          ask: () =>
            created ? Promise.resolve(created) : Promise.reject(new EndedHere(INTERRUPTED)),
          // Only Slack's reason is told: the person asked long ago, on another instance.
          tell: (text) => workspaces.writer(key.teamId).ephemeral(key.channelId, plan.userId, text),
        },
        record.runId,
      );
    } catch (err) {
      // Its messages may be posted and its service run made: forgetting it would leave a
      // thread working for ever. It is left for a later scan, here or on another instance.
      log.error({ err, id: record.runId }, "could not finish a run's start; it is tried again");
      return this.#letReservationGo(record.runId, true);
    }
    if (result?.kind === "refused") {
      // The service never answered: its message ends as interrupted, then the record goes.
      void this.#letReservationGo(record.runId);
      this.#counters.resumed();
      const shown = { ...record, key: result.key, messageTs: [result.messageTs] };
      return this.#launch(shown, "resumed");
    }
    await this.release(record.runId).catch(() => undefined);
    if (result?.kind !== "started") return this.#notShown(record);
    await this.#runs.get(result.run.runId)?.done;
  }

  /** The relay as an adopted start sees it: its service run is claimed, then resumed here. */
  #adopting(traceparent: string | undefined): Pick<StartRelay, "progress" | "start" | "stop"> {
    return {
      progress: (id, change) => this.progress(id, change),
      stop: (run, userId) => this.stop(run, userId),
      start: async ({ traceparent: _here, ...target }) => {
        const record = relayedRecord({ ...target, ...(traceparent ? { traceparent } : {}) });
        // Its lease, unless relayed elsewhere; a record already there wins.
        const { store, instanceId } = this.#opts;
        if (!(await store.acquireLease(runLease(record.runId), instanceId, this.#leaseTtl))) return;
        const known = await store.getRun(record.runId);
        const shown = known && isShown(known) ? known : record;
        if (shown === record) await store.putRun(record);
        this.#counters.resumed();
        void this.#launch(shown, "resumed");
      },
    };
  }

  /** An adopted start nothing shows (its messages could not be posted): its step fails. */
  async #notShown(record: ReservedRun): Promise<void> {
    const { step } = record.opening;
    if (!step) return;
    await this.#opts.workflowSteps?.end(record.key.teamId, step, {
      state: "error",
      answer: "",
      reason: "The task's messages could not be posted in Slack, so it was stopped.",
      files: [],
    });
  }

  #launch(record: ShownRun, start: RunStart, unrecorded = false): Promise<void> {
    const existing = this.#runs.get(record.runId);
    if (existing) return existing.done;
    const { key, runId, traceparent } = record;
    const span = startRelaySpan({ ...key, runId, start, traceparent });
    const relayed: Relayed = { fate: new RunFate(), done: Promise.resolve(), key, span };
    this.#runs.set(record.runId, relayed);
    const { workspaces, streaming, follow } = this.#opts;
    const deps: RunDeps = {
      ...this.#opts, // its store, instanceId, previews and workflowSteps
      service: workspaces.service(key.teamId),
      writer: workspaces.writer(key.teamId),
      clock: this.#clock,
      counters: this.#counters,
      leaseTtlMs: this.#leaseTtl,
      streaming: streaming ?? { mode: "edit" },
      follow: follow ?? {},
      memory: this.#memory,
      onEnded: (end) => {
        span.ended(end.state);
        return this.#ended(end);
      },
    };
    const run = span.run(
      () => new Run(deps, record, relayed.fate, start, this.#opts.logger, unrecorded),
    );
    const limit = span.run(() => this.#timeLimit(record));
    relayed.done = span
      .run(() => run.run())
      .finally(() => {
        span.end(relayed.fate.now.kind === "forgotten" ? "forgotten" : "handed_over");
        if (limit) this.#clock.clearTimeout(limit);
        this.#runs.delete(record.runId);
      });
    return relayed.done;
  }

  /** Stops the run at the service once it has run for `maxRunMs`; the thread says why. */
  #timeLimit(record: RunRecord): ReturnType<Clock["setTimeout"]> | undefined {
    const max = this.#opts.maxRunMs;
    if (max === undefined || record.kind !== "relaying") return undefined;
    const left = Math.max(0, record.startedAt + max - this.#clock.now());
    return this.#clock.setTimeout(() => {
      const reason = `it reached the maximum run time of ${formatDuration(max)}`;
      const log = this.#opts.logger.child({ runId: record.runId });
      log.warn("stopping a run at its maximum run time");
      const relayed = this.#runs.get(record.runId);
      if (!relayed) return;
      void this.#stopHere(relayed, record.ref, { kind: "app", reason }).catch((err: unknown) =>
        log.warn({ err }, "could not stop a run at its time limit"),
      );
    }, left);
  }

  async #ended(end: RunEnd): Promise<void> {
    const outcome = outcomeOf(end);
    for (const listener of this.#endListeners) {
      await listener(outcome).catch((err: unknown) =>
        this.#opts.logger.error(
          { err, runId: end.record.runId },
          "a listener of a run's end failed",
        ),
      );
    }
  }

  /** Stops a run (rejects if the service refuses); false if `run.key`'s thread has no such run. */
  async stop(run: Pick<RunTarget, "runId" | "ref" | "key">, userId: string): Promise<boolean> {
    const { store, workspaces, logger } = this.#opts;
    const { runId, ref } = run;
    const relayed = this.#runs.get(runId);
    // A run of another thread (another workspace's, named by a forged button) is not stopped.
    if (relayed && !inScope(relayed.key, run.key)) return false;
    if (!relayed) {
      const record = await store.getRun(runId);
      if (!record || !inScope(record.key, run.key)) return false;
      // The Stop's request links to the run's trace, where the service is asked.
      linkToTrace(record.traceparent);
      await store.requestStop(runId, personStop(userId));
      try {
        const service = workspaces.service(record.key.teamId);
        await inTrace(record.traceparent, () => service.stopAgent(ref));
      } catch (err) {
        logger.warn({ err, runId, teamId: record.key.teamId }, "stop request failed");
        if (stopNotNeeded(err)) return true;
        // Refused: nobody may take the run as stopped; the person is told and may try again.
        await store.withdrawStop(runId, personStop(userId)).catch(() => undefined);
        throw err;
      }
      return true;
    }
    relayed.span.linkHere();
    await this.#stopHere(relayed, ref, personStop(userId));
    return true;
  }

  /** Stops a run relayed here and resolves once it ended; rejects (the run goes on) if refused. */
  async #stopHere(relayed: Relayed, ref: ThreadRef, ask: StopAsk): Promise<void> {
    const { workspaces, logger } = this.#opts;
    if (relayed.fate.stop(ask)) {
      const asking = (async () => {
        try {
          const service = workspaces.service(relayed.key.teamId);
          await relayed.span.run(() => service.stopAgent(ref));
        } catch (err) {
          logger.warn({ err, teamId: relayed.key.teamId }, "stop request failed");
          if (stopNotNeeded(err)) return;
          // The run goes on: it is not shown as stopped, and Stop may be pressed again.
          relayed.fate.refused();
          throw err;
        }
      })();
      relayed.fate.asking(asking); // a run whose following is cut waits for the answer
      await asking;
      const grace = this.#clock.setTimeout(
        () => relayed.fate.cut("stopped"),
        this.#opts.stopGraceMs ?? 10_000,
      );
      void relayed.done.finally(() => this.#clock.clearTimeout(grace));
    }
    await relayed.done;
  }

  /** The workspace uninstalled the app: its runs stop quietly, everywhere. */
  stopTeam(teamId: string): Promise<void> {
    return this.stopQuietly({ teamId }, "its workspace uninstalled the app");
  }

  /**
   * The records of `scope` are being forgotten: its runs stop without a word to Slack, those
   * relayed elsewhere by a Stop request that tells their relay to say nothing (as does a record
   * found gone).
   */
  async stopQuietly(scope: RunScope, why: string): Promise<void> {
    const here = new Map([...this.#runs].filter(([, run]) => inScope(run.key, scope)));
    const { store, workspaces, logger } = this.#opts;
    const service = workspaces.service(scope.teamId);
    let elsewhere: RunRecord[] = [];
    try {
      elsewhere = (await store.listRuns()).filter(
        (r) => inScope(r.key, scope) && !here.has(r.runId),
      );
    } catch (err) {
      logger.warn({ err, team: scope.teamId }, "could not list the runs to stop them quietly");
    }
    for (const run of here.values()) run.fate.forget(why);
    await Promise.all(
      elsewhere.map(async (record) => {
        const { runId } = record;
        await store.requestStop(runId, { kind: "forgotten" }).catch(() => undefined);
        const ref = serviceRef(record);
        if (!ref) return;
        await service.stopAgent(ref).catch((err: unknown) => {
          logger.warn({ err, runId }, "could not stop a run whose records are forgotten");
        });
      }),
    );
    await Promise.allSettled([...here.values()].map((run) => run.done));
    logger.info(
      { team: scope.teamId, here: here.size, elsewhere: elsewhere.length, why },
      "stopped runs quietly: their records are forgotten",
    );
  }

  /** Resolves once no run is relayed (follow-ups started meanwhile included). */
  async idle(): Promise<void> {
    while (this.#runs.size > 0) {
      await Promise.allSettled([...this.#runs.values()].map((c) => c.done));
    }
  }

  /** Shutdown: every run is handed over at once, its latest text shown and recorded. */
  async handover(): Promise<void> {
    for (const relayed of this.#runs.values()) relayed.fate.handOver("handing over");
    await Promise.allSettled([...this.#runs.values()].map((c) => c.done));
  }
}

/** Nothing to stop (the run ended, or its thread is gone): it ends as stopped all the same. */
function stopNotNeeded(err: unknown): boolean {
  return err instanceof TaskServiceError && err.kind === "not_found";
}

/** Whether `place` is within `scope`. */
function inScope(place: StartPlace, scope: RunScope): boolean {
  if (place.teamId !== scope.teamId) return false;
  if (scope.channelId !== undefined && place.channelId !== scope.channelId) return false;
  return scope.threadTs === undefined || place.threadTs === scope.threadTs;
}
