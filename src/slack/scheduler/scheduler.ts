/**
 * The scheduler for Slack writes: one budget per workspace and Slack method (a lane), shared by
 * every run; owed calls first, interim texts paced (windows.ts), a message's edits coalesced.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type Clock, systemClock } from "../../util/clock.ts";
import { handled } from "../../util/handled.ts";
import { bindToCurrent } from "../../tracing/spans.ts";
import {
  bucketFor,
  DEFAULT_BUDGETS,
  type MethodBudget,
  rateLimitedRetryAfter,
  windowFor,
} from "./budgets.ts";
import {
  type EditResult,
  type EditSlot,
  dropEdit,
  edited,
  failAll,
  newLane,
  holdKey,
  type Job,
  type Lane,
  pick,
  queueEdit,
  paceOf,
  track,
  enqueueJob,
  laneLoad,
  type LaneLoad,
  waitingCalls,
} from "./lanes.ts";
import type { AppMetrics } from "../../metrics.ts";
import { type SchedulerMetrics, SchedulerStats } from "./metrics.ts";
import { MemoryTokenBuckets, type TokenBuckets } from "./token-buckets.ts";

export interface EditOptions {
  readonly final?: boolean; // a run's last edit: before interim ones, not held by the interval
  readonly runId?: string; // edits of one run share the interval (a run over several messages)
}

export interface ScheduleOptions {
  readonly key?: string; // take from this key's bucket too (chat.postMessage: the channel)
  readonly priority?: "high" | "normal";
  readonly since?: number; // waiting since then (default: now); one rank goes oldest first
  /** Give up (BudgetWaitExceeded) when the call has not started within this long. */
  readonly maxWaitMs?: number;
  /** An interim text of `unit` (more to come): spends only spare calls. `last`: its owed final. */
  readonly pace?: { readonly unit: string; readonly last?: boolean };
}

export interface SchedulerOptions {
  readonly clock?: Clock;
  readonly buckets?: TokenBuckets; // memory by default
  readonly safety?: number; // share of every budget usable in any minute, default 0.9
  readonly budgets?: Readonly<Record<string, MethodBudget>>;
  readonly minEditIntervalMs?: number; // between interim edits of a message (or run), default 1000
  readonly metrics?: AppMetrics;
  readonly onError?: (err: unknown) => void; // failures of the scheduler itself (the bucket store)
}

const SHARED_JITTER_MS = 100;
/** How long a call of a key holds the key's next calls at most. */
const KEY_CALL_HOLD_MS = 30_000;
/** How many 429s in a row a call survives (as many as WebClient's own retries). */
const MAX_429_RETRIES = 10;

export class SlackScheduler {
  readonly #clock: Clock;
  readonly #buckets: TokenBuckets;
  readonly #safety: number;
  readonly #budgets: Readonly<Record<string, MethodBudget>>;
  readonly #minInterval: number;
  readonly #onError: (err: unknown) => void;
  readonly #lanes = new Map<string, Map<string, Lane>>(); // by team, then method
  readonly #allLanes = () => [...this.#lanes.values()].flatMap((lanes) => [...lanes.values()]);
  readonly #stats: SchedulerStats;
  #seq = 0;
  #busy = 0;
  #idleWaiters: (() => void)[] = [];
  #closed = false;

  constructor(options: SchedulerOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#buckets = options.buckets ?? new MemoryTokenBuckets();
    this.#safety = options.safety ?? 0.9;
    this.#budgets = { ...DEFAULT_BUDGETS, ...options.budgets };
    this.#minInterval = options.minEditIntervalMs ?? 1000;
    this.#onError = options.onError ?? (() => {});
    this.#stats = new SchedulerStats(options.metrics);
    if (!(this.#safety > 0 && this.#safety <= 1)) throw new Error("safety must be in (0, 1]");
    // Fails at start-up, not on the first call, when a budget cannot keep its margin.
    for (const [method, budget] of Object.entries(this.#budgets)) {
      windowFor("", method, budget, this.#safety);
      if (budget.perKey) bucketFor(method, budget.perKey, this.#safety);
    }
  }

  /** Edits "C123:1700000000.000100": "sent", "superseded" by a newer text, or rejects (not 429). */
  scheduleEdit(
    teamId: string,
    messageKey: string,
    send: () => Promise<void>,
    options?: EditOptions,
  ): Promise<EditResult> {
    return this.#queue<EditResult>((settle, fail) => {
      const lane = this.#lane(teamId, "chat.update");
      // Sent later, it stays in the trace of whoever asked for it (its span is that run's).
      const call = bindToCurrent(send);
      const queued = queueEdit(lane, messageKey, { send: call, settle, fail }, options, () => ({
        since: this.#clock.now(),
        seq: this.#seq++,
      }));
      if (queued !== "queued") this.#stats.superseded();
      if (queued !== "replaced") this.#requestPump(lane);
    });
  }

  /** Drops a message's text still waiting (its run ended: the final edit replaces it). */
  cancelEdit(teamId: string, messageKey: string): boolean {
    const lane = this.#lanes.get(teamId)?.get("chat.update");
    if (!lane || !dropEdit(lane, messageKey)) return false;
    this.#stats.superseded();
    return true;
  }

  /** Runs `fn` (one call of `method` for `teamId`) once the budget allows; retries it after a 429. */
  schedule<T>(
    teamId: string,
    method: string,
    fn: () => Promise<T>,
    options?: ScheduleOptions,
  ): Promise<T> {
    return this.#queue<T>((resolve, reject) => {
      const lane = this.#lane(teamId, method);
      const paced = options?.pace !== undefined && options.pace.last !== true;
      if (options?.pace) track(lane, options.pace.unit, paced, this.#clock.now());
      const job: Job = {
        kind: "job",
        paced,
        unit: options?.pace?.unit,
        key: lane.perKey ? options?.key : undefined,
        attempt: bindToCurrent(async () => resolve(await fn())),
        fail: reject,
        rank: options?.priority === "high" ? 0 : 1,
        since: Math.min(options?.since ?? Infinity, this.#clock.now()),
        seq: this.#seq++,
        retries: 0,
        heapIndex: -1,
      };
      enqueueJob(lane, job, options?.maxWaitMs, this.#clock);
      this.#requestPump(lane);
    });
  }

  #queue<T>(executor: ConstructorParameters<typeof Promise<T>>[0]): Promise<T> {
    if (this.#closed) return Promise.reject(new Error("the Slack scheduler is closed"));
    return handled(new Promise<T>(executor));
  }

  /** `unit` (of ScheduleOptions.pace) owes `method` no final call any more (its stream ended). */
  closeUnit(teamId: string, method: string, unit: string): void {
    this.#lanes.get(teamId)?.get(method)?.open.delete(unit);
  }

  /** `unit`'s run ended: its paced calls still waiting carry its end now, owed like any call. */
  hurry(teamId: string, method: string, unit: string): void {
    const lane = this.#lanes.get(teamId)?.get(method);
    if (!lane) return;
    lane.open.delete(unit);
    const waiting = lane.jobs.items().filter((job) => job.unit === unit && job.paced);
    for (const job of waiting) {
      job.paced = false;
      lane.jobs.update(job);
    }
    if (waiting.length > 0) this.#requestPump(lane);
  }

  /** What `method`'s budget for `teamId` carries now here (stream-choice.ts weighs it). */
  load(teamId: string, method: string): LaneLoad {
    return laneLoad(this.#lane(teamId, method), this.#clock.now());
  }

  metrics(): SchedulerMetrics {
    return this.#stats.snapshot(this.#allLanes().reduce((n, lane) => n + waitingCalls(lane), 0));
  }

  /** Calls and edits waiting for their budget now, by method, every workspace together. */
  queueDepth(): Map<string, number> {
    const depth = new Map<string, number>();
    for (const lane of this.#allLanes()) {
      depth.set(lane.method, (depth.get(lane.method) ?? 0) + waitingCalls(lane));
    }
    return depth;
  }

  /** Resolves when no bucket request and no call is in progress (timers do not count). */
  settled(): Promise<void> {
    if (this.#busy === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Forgets a workspace's budgets (it uninstalled the app) once none is asked (queued calls fail). */
  async forgetTeam(teamId: string): Promise<void> {
    const lanes = [...(this.#lanes.get(teamId)?.values() ?? [])];
    this.#lanes.delete(teamId);
    for (const lane of lanes) this.#stop(lane, new Error("the workspace uninstalled the app"));
    // Its pumps end first (at most 5 s: a budget store that never answers holds no uninstall).
    const pumps = Promise.allSettled(lanes.map((lane) => lane.pumping));
    await Promise.race([pumps, sleep(5000, undefined, { ref: false })]);
    await this.#buckets.forget?.(`{${teamId}}:`);
  }

  /** Rejects what is still queued and closes the buckets; calls in progress finish. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const lane of this.#allLanes())
      this.#stop(lane, new Error("the Slack scheduler is closed"));
    await this.#buckets.close();
  }

  /** No call of the lane takes from its budget again: queued ones fail, those in progress finish. */
  #stop(lane: Lane, error: Error): void {
    lane.stopped = true;
    if (lane.timer !== undefined) this.#clock.clearTimeout(lane.timer);
    lane.timer = undefined;
    failAll(lane, error);
  }

  #lane(teamId: string, method: string): Lane {
    let lanes = this.#lanes.get(teamId);
    const existing = lanes?.get(method);
    if (existing) return existing;
    const budget = this.#budgets[method];
    if (!budget) throw new Error(`no Slack rate budget for ${method}`);
    // The {team} hash tag keeps a team's keys in one Redis Cluster slot (one script, many keys).
    const bucket = windowFor(`{${teamId}}:${method}`, method, budget, this.#safety);
    const perKey = budget.perKey && bucketFor(method, budget.perKey, this.#safety);
    const lane: Lane = newLane(method, bucket, perKey, () => {
      lane.timer = undefined;
      void this.#pump(lane);
    });
    if (!lanes) this.#lanes.set(teamId, (lanes = new Map()));
    lanes.set(method, lane);
    return lane;
  }

  #requestPump(lane: Lane): void {
    const now = this.#clock.now();
    // Paused or blocked, a timer is armed: asking the bucket meanwhile would only hear "wait".
    if (now < lane.pausedUntil || now < lane.blockedUntil) return;
    void this.#pump(lane);
  }

  /** One pump per lane at a time: a single loop owns the lane's bucket requests and dispatches. */
  async #pump(lane: Lane): Promise<void> {
    if (lane.pumping) {
      lane.again = true;
      return;
    }
    let ended = () => {};
    lane.pumping = new Promise<void>((resolve) => (ended = resolve));
    this.#busy += 1;
    try {
      do {
        lane.again = false;
        await this.#drain(lane);
      } while (lane.again && !lane.stopped);
    } catch (err) {
      this.#onError(err);
      this.#arm(lane, this.#clock.now() + 1000);
    } finally {
      lane.pumping = undefined;
      ended();
      this.#done();
    }
  }

  /**
   * Sends what the budget allows now, then arms the timer. An empty team window ends the drain; an
   * empty per-key bucket holds that key's calls while other keys go on.
   */
  async #drain(lane: Lane): Promise<void> {
    for (;;) {
      if (lane.stopped) return;
      const now = this.#clock.now();
      if (now < lane.pausedUntil) {
        this.#arm(lane, lane.pausedUntil);
        return;
      }
      if (now < lane.blockedUntil) {
        this.#arm(lane, lane.blockedUntil);
        return;
      }
      const best = pick(lane, now);
      if (!best) {
        if (lane.nextAt < Infinity) this.#arm(lane, lane.nextAt);
        return;
      }
      // Owed calls go first (pick), so a paced one on top means none is ready to go.
      const paced = best.kind === "job" ? best.paced : best.pending?.paced === true;
      if (paced && now < lane.pacedUntil) {
        this.#arm(lane, Math.min(lane.pacedUntil, lane.nextAt));
        return;
      }
      const key = best.kind === "job" ? best.key : undefined;
      const specs = paced
        ? [{ ...lane.bucket, ...paceOf(lane, now, this.#minInterval) }]
        : key === undefined || !lane.perKey
          ? [lane.bucket]
          : [lane.bucket, { key: `${lane.bucket.key}:${key}`, ...lane.perKey }];
      const { wait, firstWait: teamWait } = await this.#buckets.take(specs, now);
      if (wait > 0) {
        // Instances sharing a bucket all wake when its next token is due: without jitter the one
        // that asks first could win every time and starve the others' messages.
        const jitter = this.#buckets.shared ? Math.floor(Math.random() * SHARED_JITTER_MS) : 0;
        if (paced) {
          // Owed calls arriving meanwhile still go (#requestPump does not look at this).
          lane.pacedUntil = now + wait + jitter;
          this.#arm(lane, Math.min(lane.pacedUntil, lane.nextAt));
          return;
        }
        if (teamWait > 0 || key === undefined || best.kind !== "job") {
          lane.blockedUntil = now + (teamWait > 0 ? teamWait : wait) + jitter;
          this.#arm(lane, lane.blockedUntil);
          return;
        }
        holdKey(lane, key, now + wait + jitter, best);
        continue;
      }
      // A 429 may have arrived while the bucket answered; the token is lost, the call waits.
      if (this.#clock.now() < lane.pausedUntil || lane.stopped) continue;
      if (best.kind === "job") this.#dispatchJob(lane, best);
      else this.#dispatchEdit(lane, best);
    }
  }

  #dispatchJob(lane: Lane, job: Job): void {
    if (!lane.jobs.remove(job)) return;
    // One call of a key (a channel) at a time: Slack orders a channel's messages as they arrive,
    // and two requests on their way at once may arrive either way round. A call that hangs
    // holds the others 30 s at most.
    if (job.key !== undefined) holdKey(lane, job.key, this.#clock.now() + KEY_CALL_HOLD_MS);
    this.#stats.started(lane.method, this.#clock.now() - job.since);
    this.#busy += 1;
    Promise.resolve()
      .then(job.attempt)
      .then(() => this.#stats.ended(lane.method, "ok"))
      .catch((err: unknown) => {
        if (this.#rateLimited(lane, err) && job.retries < MAX_429_RETRIES && !lane.stopped) {
          // Back in line with its original place: it goes first once the pause ends.
          job.retries += 1;
          lane.jobs.push(job);
        } else {
          if (rateLimitedRetryAfter(err) === undefined) this.#stats.ended(lane.method, "error");
          job.fail(err);
        }
      })
      .finally(() => {
        if (job.key !== undefined) holdKey(lane, job.key, this.#clock.now());
        void this.#pump(lane);
        this.#done();
      });
  }

  #dispatchEdit(lane: Lane, slot: EditSlot): void {
    const edit = slot.pending;
    if (!edit || !lane.readyEdits.remove(slot)) return;
    slot.pending = undefined;
    slot.inflight = true;
    edited(lane, slot.unit, this.#clock.now(), this.#minInterval);
    this.#stats.started(lane.method, this.#clock.now() - edit.since);
    this.#busy += 1;
    Promise.resolve()
      .then(edit.send)
      .then(
        () => {
          this.#stats.ended(lane.method, "ok");
          edit.settle("sent");
        },
        (err: unknown) => {
          const limited = this.#rateLimited(lane, err);
          const newer = slot.pending;
          if (limited && newer) {
            // Nothing is lost: the newer text goes once the pause ends, in this text's place.
            newer.since = Math.min(newer.since, edit.since);
            newer.seq = Math.min(newer.seq, edit.seq);
            this.#stats.superseded();
            edit.settle("superseded");
          } else if (limited && edit.retries < MAX_429_RETRIES && !lane.stopped) {
            edit.retries += 1;
            slot.pending = edit;
          } else {
            if (!limited) this.#stats.ended(lane.method, "error");
            edit.fail(err);
          }
        },
      )
      .finally(() => {
        slot.inflight = false;
        if (!slot.pending) lane.edits.delete(slot.messageKey);
        else if (!lane.stopped) lane.readyEdits.push(slot);
        void this.#pump(lane);
        this.#done();
      });
  }

  /** On a 429: pauses the lane (this team, this method) for Retry-After. */
  #rateLimited(lane: Lane, err: unknown): boolean {
    const retryAfter = rateLimitedRetryAfter(err);
    if (retryAfter === undefined) return false;
    this.#stats.ended(lane.method, "rate_limited");
    lane.pausedUntil = Math.max(lane.pausedUntil, this.#clock.now() + retryAfter * 1000);
    return true;
  }

  #arm(lane: Lane, at: number): void {
    if (lane.stopped) return;
    if (lane.timer !== undefined) {
      if (lane.timerAt <= at) return; // an earlier wake-up re-evaluates anyway
      this.#clock.clearTimeout(lane.timer);
    }
    lane.timerAt = at;
    lane.timer = this.#clock.setTimeout(lane.wake, Math.max(0, at - this.#clock.now()));
  }

  #done(): void {
    this.#busy -= 1;
    if (this.#busy > 0) return;
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }
}
