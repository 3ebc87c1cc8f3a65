/**
 * The scheduler for Slack writes: one budget per workspace (team) and Slack method, shared by
 * every run, so that ten runs streaming at once stay inside Slack's tiers instead of each
 * throttling itself and all of them together being rate limited.
 *
 * - Every call waits for a token of its method's bucket (and, for chat.postMessage, of its
 *   channel's bucket too). Buckets live in memory or in Redis (several instances, one budget).
 * - Message edits are coalesced: only the latest pending text of a message is sent; older ones
 *   resolve "superseded". Among messages, the one waiting longest goes first, final edits before
 *   interim ones, and each message gets at most one interim edit per `minEditIntervalMs`.
 * - A 429 pauses that method for that team only, for Retry-After, then the call is retried (for
 *   an edit, whatever text is latest by then).
 */
import { connectRedisBuckets, MemoryTokenBuckets } from "./token-buckets.ts";
import type { BucketSpec, TokenBuckets } from "./token-buckets.ts";

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface Rate {
  /** Slack's allowance per minute (the tier figure, before `safety`). */
  readonly perMinute: number;
  /** Calls that may go out back to back after a quiet spell. */
  readonly burst: number;
}

export interface MethodBudget extends Rate {
  /** A second budget per key (chat.postMessage: per channel), taken together with the team's. */
  readonly perKey?: Rate;
}

/**
 * Tier figures from the Slack docs (see /work/shared/notes/slack-platform-facts.md). Bursts stay
 * small so a quiet bucket never lets a minute's worth out at once.
 */
export const DEFAULT_BUDGETS: Readonly<Record<string, MethodBudget>> = {
  // About 1 per second per channel, plus a workspace-wide cap Slack does not publish.
  "chat.postMessage": { perMinute: 60, burst: 5, perKey: { perMinute: 60, burst: 3 } },
  "chat.update": { perMinute: 50, burst: 3 }, // Tier 3
  "chat.delete": { perMinute: 50, burst: 3 }, // Tier 3
  "reactions.add": { perMinute: 50, burst: 3 }, // Tier 3
  "reactions.remove": { perMinute: 50, burst: 3 }, // Tier 3
  "conversations.join": { perMinute: 50, burst: 3 }, // Tier 3
  "conversations.replies": { perMinute: 50, burst: 3 }, // Tier 3
  "chat.postEphemeral": { perMinute: 100, burst: 5 }, // Tier 4
  "files.getUploadURLExternal": { perMinute: 100, burst: 5 }, // Tier 4
  "files.completeUploadExternal": { perMinute: 100, burst: 5 }, // Tier 4
  "chat.appendStream": { perMinute: 100, burst: 5 }, // Tier 4
  "users.info": { perMinute: 100, burst: 5 }, // Tier 4
  "chat.startStream": { perMinute: 20, burst: 2 }, // Tier 2
  "chat.stopStream": { perMinute: 20, burst: 2 }, // Tier 2
};

export const EDIT_METHOD = "chat.update";

export type EditResult = "sent" | "superseded";
export type Priority = "high" | "normal";

export interface EditOptions {
  /** The last edit of a run: goes before interim edits and is not held by the per-message interval. */
  readonly final?: boolean;
  /** Edits of one run share the per-message interval (a run split over several messages). */
  readonly runId?: string;
}

export interface ScheduleOptions {
  /** The per-key bucket to take from as well (chat.postMessage: the channel). */
  readonly key?: string;
  readonly priority?: Priority;
}

export interface SchedulerOptions {
  readonly clock?: Clock;
  /** Memory by default; RedisTokenBuckets to share the budget between instances. close() closes them. */
  readonly buckets?: TokenBuckets;
  /** Share of every budget the scheduler may use in any minute. Default 0.9. */
  readonly safety?: number;
  /** Overrides of DEFAULT_BUDGETS, by method. */
  readonly budgets?: Readonly<Record<string, MethodBudget>>;
  /** Minimum time between two interim edits of one message (or run). Default 1000 ms. */
  readonly minEditIntervalMs?: number;
  /** How many 429s in a row a call survives before it fails. Default 10 (as WebClient's own retries). */
  readonly maxRateLimitRetries?: number;
  /** Told about unexpected failures of the scheduler itself (e.g. the bucket store). */
  readonly onError?: (err: unknown) => void;
}

export interface WaitStats {
  count: number;
  sumMs: number;
  maxMs: number;
  /** Cumulative counts by upper bound in ms ("+Inf" = all), as a Prometheus histogram. */
  le: Record<string, number>;
}

export interface SchedulerMetrics {
  /** Calls started, by method (429 retries included). */
  calls: Record<string, number>;
  /** 429 answers, by method. */
  rateLimited: Record<string, number>;
  /** Calls that failed otherwise, by method. */
  failed: Record<string, number>;
  /** Edits dropped because a newer text of the same message replaced them. */
  superseded: number;
  /** Time from queueing (of a message's oldest unsent text, for edits) to the call, by method. */
  queueWait: Record<string, WaitStats>;
  /** Calls and edits waiting right now. */
  queued: number;
}

const SHARED_JITTER_MS = 100;
const WAIT_BOUNDS_MS = [100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000];

/** Seconds Slack asked to wait when `err` is a 429 (WebClient with rejectRateLimitedCalls). */
export function rateLimitedRetryAfter(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as { code?: unknown; retryAfter?: unknown };
  if (e.code !== "slack_webapi_rate_limited_error") return undefined;
  return typeof e.retryAfter === "number" && e.retryAfter > 0 ? e.retryAfter : 1;
}

/** What the pick order compares: priority rank, then waiting since, then arrival. */
interface Place {
  rank: 0 | 1;
  since: number;
  seq: number;
}

interface Job extends Place {
  readonly key: string | undefined;
  readonly attempt: () => Promise<void>;
  readonly fail: (err: unknown) => void;
  retries: number;
}

interface PendingEdit extends Place {
  readonly send: () => Promise<void>;
  readonly settle: (result: EditResult) => void;
  readonly fail: (err: unknown) => void;
  retries: number;
}

interface EditSlot {
  /** Whose interval applies: the run, or the message itself. */
  readonly unit: string;
  pending: PendingEdit | undefined;
  /** One edit of a message at a time, so an older text can never land after a newer one. */
  inflight: boolean;
}

type Candidate =
  | { readonly kind: "job"; readonly place: Job; readonly key: string | undefined }
  | {
      readonly kind: "edit";
      readonly place: PendingEdit;
      readonly key: undefined;
      readonly messageKey: string;
    };

interface Lane {
  readonly method: string;
  readonly bucket: BucketSpec;
  readonly perKey: Omit<BucketSpec, "key"> | undefined;
  readonly jobs: Job[];
  readonly edits: Map<string, EditSlot>;
  /** Last interim-or-final edit per unit, kept only while it still holds the unit back. */
  readonly lastEditAt: Map<string, number>;
  pausedUntil: number;
  /** The bucket is empty until then: arrivals need not ask it again (the timer will). */
  blockedUntil: number;
  timer: unknown;
  timerAt: number;
  pumping: boolean;
  again: boolean;
}

function better(a: Place, b: Place | undefined): boolean {
  if (!b) return true;
  if (a.rank !== b.rank) return a.rank < b.rank;
  if (a.since !== b.since) return a.since < b.since;
  return a.seq < b.seq;
}

export class SlackScheduler {
  readonly #clock: Clock;
  readonly #buckets: TokenBuckets;
  readonly #safety: number;
  readonly #budgets: Readonly<Record<string, MethodBudget>>;
  readonly #minInterval: number;
  readonly #maxRetries: number;
  readonly #onError: (err: unknown) => void;
  readonly #lanes = new Map<string, Lane>();
  readonly #metrics: SchedulerMetrics = {
    calls: {},
    rateLimited: {},
    failed: {},
    superseded: 0,
    queueWait: {},
    queued: 0,
  };
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
    this.#maxRetries = options.maxRateLimitRetries ?? 10;
    this.#onError = options.onError ?? (() => {});
    if (!(this.#safety > 0 && this.#safety <= 1)) throw new Error("safety must be in (0, 1]");
    // Fail at start-up, not on the first call, when a budget cannot keep its margin.
    for (const [method, budget] of Object.entries(this.#budgets)) {
      this.#refillPerMs(method, budget);
      if (budget.perKey) this.#refillPerMs(method, budget.perKey);
    }
  }

  /**
   * Queues an edit of one message (`messageKey`, e.g. "C123:1700000000.000100"). Resolves "sent"
   * once this text reached Slack, "superseded" when a newer text of the message replaced it
   * before it was sent; rejects when Slack refused it (other than 429).
   */
  scheduleEdit(
    teamId: string,
    messageKey: string,
    send: () => Promise<void>,
    options: EditOptions = {},
  ): Promise<EditResult> {
    if (this.#closed) return Promise.reject(new Error("the Slack scheduler is closed"));
    const lane = this.#lane(teamId, EDIT_METHOD);
    return handled(
      new Promise<EditResult>((settle, fail) => {
        let slot = lane.edits.get(messageKey);
        if (!slot) {
          slot = { unit: options.runId ?? messageKey, pending: undefined, inflight: false };
          lane.edits.set(messageKey, slot);
        }
        const previous = slot.pending;
        const final = options.final === true || previous?.rank === 0;
        // The replacement keeps the message's place in line: fairness is per message, not per text.
        slot.pending = {
          send,
          settle,
          fail,
          rank: final ? 0 : 1,
          since: previous?.since ?? this.#clock.now(),
          seq: previous?.seq ?? this.#seq++,
          retries: previous?.retries ?? 0,
        };
        if (previous) {
          this.#metrics.superseded += 1;
          previous.settle("superseded");
        }
        // Replacing a text changes nothing the pump cares about, unless the edit just became final.
        if (!previous || (final && previous.rank !== 0)) this.#requestPump(lane, false);
      }),
    );
  }

  /** Runs `fn` (one call of `method` for `teamId`) once the budget allows; retries it after a 429. */
  schedule<T>(
    teamId: string,
    method: string,
    fn: () => Promise<T>,
    options: ScheduleOptions = {},
  ): Promise<T> {
    if (this.#closed) return Promise.reject(new Error("the Slack scheduler is closed"));
    let lane: Lane;
    try {
      lane = this.#lane(teamId, method);
    } catch (err) {
      return Promise.reject(err);
    }
    return handled(
      new Promise<T>((resolve, reject) => {
        const key = lane.perKey ? options.key : undefined;
        lane.jobs.push({
          key,
          attempt: async () => resolve(await fn()),
          fail: reject,
          rank: options.priority === "high" ? 0 : 1,
          since: this.#clock.now(),
          seq: this.#seq++,
          retries: 0,
        });
        this.#requestPump(lane, key !== undefined);
      }),
    );
  }

  metrics(): SchedulerMetrics {
    let queued = 0;
    for (const lane of this.#lanes.values()) {
      queued += lane.jobs.length;
      for (const slot of lane.edits.values()) if (slot.pending) queued += 1;
    }
    return structuredClone({ ...this.#metrics, queued });
  }

  /**
   * Resolves when no bucket request and no call is in progress. Calls waiting for a timer (budget,
   * pause, interval) do not count: tests advance a fake clock, then await this.
   */
  settled(): Promise<void> {
    if (this.#busy === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Stops: clears timers, rejects what is still queued, closes the buckets. Calls in progress finish. */
  async close(): Promise<void> {
    this.#closed = true;
    const error = new Error("the Slack scheduler is closed");
    for (const lane of this.#lanes.values()) {
      if (lane.timer !== undefined) this.#clock.clearTimeout(lane.timer);
      lane.timer = undefined;
      for (const job of lane.jobs.splice(0)) job.fail(error);
      for (const slot of lane.edits.values()) {
        slot.pending?.fail(error);
        slot.pending = undefined;
      }
    }
    await this.#buckets.close();
  }

  // ----------------------------------------------------------------------------------------------

  /**
   * Tokens per ms such that burst + refill × 1 minute ≤ safety × perMinute: the safety margin
   * holds for every sliding minute, bursts included, not just on average.
   */
  #refillPerMs(method: string, rate?: Rate): number {
    const r = rate ?? this.#budgets[method];
    if (!r) throw new Error(`no Slack rate budget for ${method}`);
    const perMs = (r.perMinute * this.#safety - r.burst) / 60_000;
    if (!(r.burst >= 1 && perMs > 0)) {
      throw new Error(`${method}: burst must be ≥ 1 and below safety × perMinute`);
    }
    return perMs;
  }

  #lane(teamId: string, method: string): Lane {
    const id = `${teamId} ${method}`;
    let lane = this.#lanes.get(id);
    if (lane) return lane;
    const budget = this.#budgets[method];
    if (!budget) throw new Error(`no Slack rate budget for ${method}`);
    lane = {
      method,
      // The {team} hash tag keeps a team's keys in one Redis Cluster slot (one script, many keys).
      bucket: {
        key: `{${teamId}}:${method}`,
        ratePerMs: this.#refillPerMs(method),
        burst: budget.burst,
      },
      perKey: budget.perKey && {
        ratePerMs: this.#refillPerMs(method, budget.perKey),
        burst: budget.perKey.burst,
      },
      jobs: [],
      edits: new Map(),
      lastEditAt: new Map(),
      pausedUntil: 0,
      blockedUntil: 0,
      timer: undefined,
      timerAt: 0,
      pumping: false,
      again: false,
    };
    this.#lanes.set(id, lane);
    return lane;
  }

  #requestPump(lane: Lane, keyed: boolean): void {
    const now = this.#clock.now();
    // A timer is armed for the end of a pause or an empty bucket; asking the bucket (perhaps in
    // Redis) on every arrival meanwhile would only hear "wait". A keyed call may have a
    // different per-key bucket, so it always asks.
    if (now < lane.pausedUntil || (!keyed && now < lane.blockedUntil)) return;
    void this.#pump(lane);
  }

  /** One pump per lane at a time: a single loop owns the lane's bucket requests and dispatches. */
  async #pump(lane: Lane): Promise<void> {
    if (lane.pumping) {
      lane.again = true;
      return;
    }
    lane.pumping = true;
    this.#busy += 1;
    try {
      do {
        lane.again = false;
        await this.#drain(lane);
      } while (lane.again && !this.#closed);
    } catch (err) {
      this.#onError(err);
      this.#arm(lane, this.#clock.now() + 1000);
    } finally {
      lane.pumping = false;
      this.#done();
    }
  }

  /** Sends what the budget allows now, then arms the lane's timer for when more can go. */
  async #drain(lane: Lane): Promise<void> {
    // Per-key buckets found empty in this round: their calls wait, other keys may still go.
    const blocked = new Map<string, number>();
    for (;;) {
      if (this.#closed) return;
      const now = this.#clock.now();
      if (now < lane.pausedUntil) {
        this.#arm(lane, lane.pausedUntil);
        return;
      }
      const { best, nextAt } = this.#pick(lane, now, blocked);
      if (!best) {
        if (nextAt < Infinity) this.#arm(lane, nextAt);
        return;
      }
      const specs = [lane.bucket];
      if (best.key !== undefined && lane.perKey) {
        specs.push({ key: `${lane.bucket.key}:${best.key}`, ...lane.perKey });
      }
      let wait = await this.#buckets.take(specs, now);
      // Instances sharing a bucket all wake when its next token is due; whoever asks first wins.
      // Without jitter the same instance could win every time and starve the others' messages.
      if (wait > 0 && this.#buckets.shared) wait += Math.floor(Math.random() * SHARED_JITTER_MS);
      if (wait > 0) {
        if (best.key !== undefined) {
          blocked.set(best.key, now + wait);
          continue;
        }
        lane.blockedUntil = now + wait;
        this.#arm(lane, lane.blockedUntil);
        return;
      }
      // A 429 may have arrived while the bucket answered; the token is lost, the call waits.
      if (this.#clock.now() < lane.pausedUntil || this.#closed) continue;
      if (best.kind === "job") this.#dispatchJob(lane, best.place);
      else this.#dispatchEdit(lane, best.messageKey);
    }
  }

  #pick(
    lane: Lane,
    now: number,
    blocked: ReadonlyMap<string, number>,
  ): { best: Candidate | undefined; nextAt: number } {
    let best: Candidate | undefined;
    let nextAt = Infinity;
    for (const job of lane.jobs) {
      const until = job.key === undefined ? undefined : blocked.get(job.key);
      if (until !== undefined) nextAt = Math.min(nextAt, until);
      else if (better(job, best?.place)) best = { kind: "job", place: job, key: job.key };
    }
    for (const [unit, at] of lane.lastEditAt) {
      if (at + this.#minInterval <= now) lane.lastEditAt.delete(unit);
    }
    for (const [messageKey, slot] of lane.edits) {
      const pending = slot.pending;
      if (!pending || slot.inflight) continue;
      const last = pending.rank === 0 ? undefined : lane.lastEditAt.get(slot.unit);
      if (last !== undefined) nextAt = Math.min(nextAt, last + this.#minInterval);
      else if (better(pending, best?.place)) {
        best = { kind: "edit", place: pending, key: undefined, messageKey };
      }
    }
    return { best, nextAt };
  }

  #dispatchJob(lane: Lane, job: Job): void {
    const index = lane.jobs.indexOf(job);
    if (index < 0) return;
    lane.jobs.splice(index, 1);
    this.#started(lane.method, job.since);
    this.#busy += 1;
    Promise.resolve()
      .then(job.attempt)
      .catch((err: unknown) => {
        if (this.#rateLimited(lane, err) && job.retries < this.#maxRetries && !this.#closed) {
          // Back in line with its original place: it goes first once the pause ends.
          job.retries += 1;
          lane.jobs.push(job);
        } else {
          if (rateLimitedRetryAfter(err) === undefined) this.#count("failed", lane.method);
          job.fail(err);
        }
      })
      .finally(() => {
        void this.#pump(lane);
        this.#done();
      });
  }

  #dispatchEdit(lane: Lane, messageKey: string): void {
    const slot = lane.edits.get(messageKey);
    const edit = slot?.pending;
    if (!slot || !edit) return;
    slot.pending = undefined;
    slot.inflight = true;
    lane.lastEditAt.set(slot.unit, this.#clock.now());
    this.#started(lane.method, edit.since);
    this.#busy += 1;
    Promise.resolve()
      .then(edit.send)
      .then(
        () => edit.settle("sent"),
        (err: unknown) => {
          const limited = this.#rateLimited(lane, err);
          const newer = slot.pending;
          if (limited && newer) {
            // Nothing is lost: the newer text goes once the pause ends, in this text's place.
            newer.since = Math.min(newer.since, edit.since);
            newer.seq = Math.min(newer.seq, edit.seq);
            this.#metrics.superseded += 1;
            edit.settle("superseded");
          } else if (limited && edit.retries < this.#maxRetries && !this.#closed) {
            edit.retries += 1;
            slot.pending = edit;
          } else {
            if (!limited) this.#count("failed", lane.method);
            edit.fail(err);
          }
        },
      )
      .finally(() => {
        slot.inflight = false;
        if (!slot.pending) lane.edits.delete(messageKey);
        void this.#pump(lane);
        this.#done();
      });
  }

  /** On a 429: pauses the lane (this team, this method) for Retry-After. */
  #rateLimited(lane: Lane, err: unknown): boolean {
    const retryAfter = rateLimitedRetryAfter(err);
    if (retryAfter === undefined) return false;
    this.#count("rateLimited", lane.method);
    lane.pausedUntil = Math.max(lane.pausedUntil, this.#clock.now() + retryAfter * 1000);
    return true;
  }

  #arm(lane: Lane, at: number): void {
    if (this.#closed) return;
    if (lane.timer !== undefined) {
      if (lane.timerAt <= at) return; // an earlier wake-up re-evaluates anyway
      this.#clock.clearTimeout(lane.timer);
    }
    lane.timerAt = at;
    lane.timer = this.#clock.setTimeout(
      () => {
        lane.timer = undefined;
        void this.#pump(lane);
      },
      Math.max(0, at - this.#clock.now()),
    );
  }

  #started(method: string, since: number): void {
    this.#count("calls", method);
    const wait = Math.max(0, this.#clock.now() - since);
    let stats = this.#metrics.queueWait[method];
    if (!stats) {
      stats = { count: 0, sumMs: 0, maxMs: 0, le: {} };
      for (const bound of WAIT_BOUNDS_MS) stats.le[String(bound)] = 0;
      stats.le["+Inf"] = 0;
      this.#metrics.queueWait[method] = stats;
    }
    stats.count += 1;
    stats.sumMs += wait;
    stats.maxMs = Math.max(stats.maxMs, wait);
    for (const bound of WAIT_BOUNDS_MS)
      if (wait <= bound) stats.le[String(bound)] = (stats.le[String(bound)] ?? 0) + 1;
    stats.le["+Inf"] = (stats.le["+Inf"] ?? 0) + 1;
  }

  #count(what: "calls" | "rateLimited" | "failed", method: string): void {
    const counts = this.#metrics[what];
    counts[method] = (counts[method] ?? 0) + 1;
  }

  #done(): void {
    this.#busy -= 1;
    if (this.#busy > 0) return;
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }
}

/**
 * A scheduler whose budget lives in Redis when `redisUrl` is set (every instance of the app
 * shares it), in memory otherwise.
 */
export async function createSlackScheduler(
  options: SchedulerOptions & {
    readonly redisUrl?: string | undefined;
    /** Prefix of the bucket keys in Redis (default "slack-rl:"). */
    readonly redisPrefix?: string;
  },
): Promise<SlackScheduler> {
  const { redisUrl, redisPrefix, ...rest } = options;
  if (!redisUrl) return new SlackScheduler(rest);
  const buckets = await connectRedisBuckets(redisUrl, {
    ...(redisPrefix === undefined ? {} : { prefix: redisPrefix }),
    ...(rest.onError ? { onError: rest.onError } : {}),
  });
  return new SlackScheduler({ ...rest, buckets });
}

/**
 * A caller may fire and forget (an interim edit nobody awaits); the rejection a closing
 * scheduler gives such a promise must not surface as an unhandled rejection.
 */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}
