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
import { type Clock, systemClock } from "../util/clock.ts";
import { connectRedisBuckets, MemoryTokenBuckets } from "./token-buckets.ts";
import type { BucketSpec, TokenBuckets } from "./token-buckets.ts";

export type { Clock };

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
 * Tier figures from Slack's rate-limits page and each method's reference page. Bursts stay
 * small so a quiet bucket never lets a minute's worth out at once.
 */
export const DEFAULT_BUDGETS: Readonly<Record<string, MethodBudget>> = {
  // "1 message per second to a specific channel", and a workspace-wide limit of "several
  // hundred messages per minute" (chat.postMessage's reference page): the low end of that.
  "chat.postMessage": { perMinute: 300, burst: 10, perKey: { perMinute: 60, burst: 3 } },
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
const WAIT_BOUNDS = [100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000].map((ms) => ({
  ms,
  label: String(ms),
}));

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

/** Where an item sits in its Heap, -1 when in none. */
interface Indexed {
  heapIndex: number;
}

interface Job extends Place, Indexed {
  readonly kind: "job";
  readonly key: string | undefined;
  readonly attempt: () => Promise<void>;
  readonly fail: (err: unknown) => void;
  retries: number;
}

/** A message's unsent text. A newer text takes over this object: same place in line, new callbacks. */
interface PendingEdit extends Place {
  send: () => Promise<void>;
  settle: (result: EditResult) => void;
  fail: (err: unknown) => void;
  retries: number;
}

interface EditSlot extends Indexed {
  readonly kind: "edit";
  readonly messageKey: string;
  /** Whose interval applies: the run, or the message itself. */
  readonly unit: string;
  pending: PendingEdit | undefined;
  /** One edit of a message at a time, so an older text can never land after a newer one. */
  inflight: boolean;
  /** Set aside in its unit's hold (interim text, interval not over). */
  parked: boolean;
}

/**
 * Something that holds calls back until `until`: an empty per-key bucket (its jobs) or a unit's
 * edit interval (its interim edits). Held calls are parked here, out of the ready heaps, so a pick
 * never looks at them again before `until`; then they go back in line with their places.
 */
interface Hold<T> extends Indexed {
  readonly name: string;
  until: number;
  readonly parked: T[];
}

interface Lane {
  readonly method: string;
  readonly bucket: BucketSpec;
  /** [bucket]: what unkeyed calls take from. */
  readonly teamSpecs: readonly BucketSpec[];
  readonly perKey: Omit<BucketSpec, "key"> | undefined;
  /** Jobs in pick order; those of a held key are moved to its hold when they reach the top. */
  readonly jobs: Heap<Job>;
  /** Per-key buckets found empty, by key... */
  readonly keyHolds: Map<string, Hold<Job>>;
  /** ...and by when they will have a token. */
  readonly heldKeys: Heap<Hold<Job>>;
  readonly edits: Map<string, EditSlot>;
  /** Slots with a pending text, neither in flight nor parked, in pick order. */
  readonly readyEdits: Heap<EditSlot>;
  /** Units edited less than the interval ago (`until` = last edit + interval); swept now and then. */
  readonly units: Map<string, Hold<EditSlot>>;
  /** Units with parked edits, by end of interval. */
  readonly heldUnits: Heap<Hold<EditSlot>>;
  unitsSweepAt: number;
  pausedUntil: number;
  /** The team's bucket is empty until then: no call of the lane can go before (the timer asks again). */
  blockedUntil: number;
  /** Set by #pick: when the earliest hold ends. */
  nextAt: number;
  timer: unknown;
  timerAt: number;
  /** The timer's callback (one per lane, not one per arming). */
  wake: () => void;
  pumping: boolean;
  again: boolean;
}

/** Units kept before the first sweep of expired ones; then twice as many as survived the last. */
const UNITS_SWEEP_MIN = 1024;

function better(a: Place, b: Place | undefined): boolean {
  if (!b) return true;
  if (a.rank !== b.rank) return a.rank < b.rank;
  if (a.since !== b.since) return a.since < b.since;
  return a.seq < b.seq;
}

function slotBefore(a: EditSlot, b: EditSlot): boolean {
  return a.pending !== undefined && better(a.pending, b.pending);
}

function holdBefore<T>(a: Hold<T>, b: Hold<T>): boolean {
  return a.until < b.until;
}

/** A binary min-heap whose items know their index: push, pop, remove and re-order in O(log n). */
class Heap<T extends Indexed> {
  readonly #items: T[] = [];
  readonly #before: (a: T, b: T) => boolean;

  constructor(before: (a: T, b: T) => boolean) {
    this.#before = before;
  }

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    item.heapIndex = this.#items.length;
    this.#items.push(item);
    this.#up(item);
  }

  pop(): T | undefined {
    const top = this.#items[0];
    if (top) this.remove(top);
    return top;
  }

  /** Takes `item` out wherever it is; false when it is not in this heap. */
  remove(item: T): boolean {
    const i = item.heapIndex;
    if (this.#items[i] !== item) return false;
    item.heapIndex = -1;
    const last = this.#items.pop();
    if (last && last !== item) {
      this.#items[i] = last;
      last.heapIndex = i;
      this.#up(last);
      this.#down(last);
    }
    return true;
  }

  /** Restores the order after `item`'s key changed; false when it is not in this heap. */
  update(item: T): boolean {
    if (this.#items[item.heapIndex] !== item) return false;
    this.#up(item);
    this.#down(item);
    return true;
  }

  /** Empties the heap; returns its items, in no particular order. */
  clear(): T[] {
    const items = this.#items.splice(0);
    for (const item of items) item.heapIndex = -1;
    return items;
  }

  #up(item: T): void {
    let i = item.heapIndex;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = this.#items[p];
      if (!parent || !this.#before(item, parent)) break;
      this.#items[i] = parent;
      parent.heapIndex = i;
      i = p;
    }
    this.#items[i] = item;
    item.heapIndex = i;
  }

  #down(item: T): void {
    const n = this.#items.length;
    let i = item.heapIndex;
    for (;;) {
      let c = 2 * i + 1;
      let child = this.#items[c];
      if (!child) break;
      const right = c + 1 < n ? this.#items[c + 1] : undefined;
      if (right && this.#before(right, child)) {
        c += 1;
        child = right;
      }
      if (!this.#before(child, item)) break;
      this.#items[i] = child;
      child.heapIndex = i;
      i = c;
    }
    this.#items[i] = item;
    item.heapIndex = i;
  }
}

export class SlackScheduler {
  readonly #clock: Clock;
  readonly #buckets: TokenBuckets;
  readonly #safety: number;
  readonly #budgets: Readonly<Record<string, MethodBudget>>;
  readonly #minInterval: number;
  readonly #maxRetries: number;
  readonly #onError: (err: unknown) => void;
  /** By team, then method: no string is built per call to find a lane. */
  readonly #lanes = new Map<string, Map<string, Lane>>();
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
    options?: EditOptions,
  ): Promise<EditResult> {
    if (this.#closed) return Promise.reject(new Error("the Slack scheduler is closed"));
    const lane = this.#lane(teamId, EDIT_METHOD);
    return handled(
      new Promise<EditResult>((settle, fail) => {
        const final = options?.final === true;
        let slot = lane.edits.get(messageKey);
        if (!slot) {
          slot = {
            kind: "edit",
            messageKey,
            unit: options?.runId ?? messageKey,
            pending: undefined,
            inflight: false,
            parked: false,
            heapIndex: -1,
          };
          lane.edits.set(messageKey, slot);
        }
        const previous = slot.pending;
        if (previous) {
          // The replacement keeps the message's place in line: fairness is per message, not per
          // text. Taking over the object keeps its place in the heap too (and allocates nothing).
          const superseded = previous.settle;
          previous.send = send;
          previous.settle = settle;
          previous.fail = fail;
          this.#metrics.superseded += 1;
          superseded("superseded");
          // Replacing a text changes nothing the pump cares about, unless the edit just became final.
          if (final && previous.rank !== 0) {
            previous.rank = 0;
            this.#promote(lane, slot);
            this.#requestPump(lane);
          }
          return;
        }
        slot.pending = {
          send,
          settle,
          fail,
          rank: final ? 0 : 1,
          since: this.#clock.now(),
          seq: this.#seq++,
          retries: 0,
        };
        // In flight: it joins the line when the current edit of the message is done.
        if (!slot.inflight) lane.readyEdits.push(slot);
        this.#requestPump(lane);
      }),
    );
  }

  /**
   * Drops the text of a message still waiting for its turn (not one being sent): its run has
   * ended and the final edit will replace it, so it need not spend a call of the budget first.
   * That edit resolves "superseded". Returns whether there was one.
   */
  cancelEdit(teamId: string, messageKey: string): boolean {
    const lane = this.#lanes.get(teamId)?.get(EDIT_METHOD);
    const slot = lane?.edits.get(messageKey);
    const edit = slot?.pending;
    if (!lane || !slot || !edit) return false;
    slot.pending = undefined;
    if (slot.parked) this.#unpark(lane, slot);
    else lane.readyEdits.remove(slot);
    // One being sent keeps its slot: it is deleted when that call is done.
    if (!slot.inflight) lane.edits.delete(messageKey);
    this.#metrics.superseded += 1;
    edit.settle("superseded");
    return true;
  }

  /** Runs `fn` (one call of `method` for `teamId`) once the budget allows; retries it after a 429. */
  schedule<T>(
    teamId: string,
    method: string,
    fn: () => Promise<T>,
    options?: ScheduleOptions,
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
        lane.jobs.push({
          kind: "job",
          key: lane.perKey ? options?.key : undefined,
          attempt: async () => resolve(await fn()),
          fail: reject,
          rank: options?.priority === "high" ? 0 : 1,
          since: this.#clock.now(),
          seq: this.#seq++,
          retries: 0,
          heapIndex: -1,
        });
        this.#requestPump(lane);
      }),
    );
  }

  metrics(): SchedulerMetrics {
    let queued = 0;
    for (const lane of this.#allLanes()) {
      queued += lane.jobs.size;
      for (const hold of lane.keyHolds.values()) queued += hold.parked.length;
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
    for (const lane of this.#allLanes()) {
      if (lane.timer !== undefined) this.#clock.clearTimeout(lane.timer);
      lane.timer = undefined;
      const jobs = lane.jobs.clear();
      for (const hold of lane.heldKeys.clear()) for (const job of hold.parked) jobs.push(job);
      lane.keyHolds.clear();
      jobs.sort((a, b) => a.seq - b.seq);
      for (const job of jobs) job.fail(error);
      lane.readyEdits.clear();
      lane.heldUnits.clear();
      lane.units.clear();
      for (const slot of lane.edits.values()) {
        slot.parked = false;
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

  *#allLanes(): Iterable<Lane> {
    for (const lanes of this.#lanes.values()) yield* lanes.values();
  }

  #lane(teamId: string, method: string): Lane {
    let lanes = this.#lanes.get(teamId);
    const existing = lanes?.get(method);
    if (existing) return existing;
    const budget = this.#budgets[method];
    if (!budget) throw new Error(`no Slack rate budget for ${method}`);
    // The {team} hash tag keeps a team's keys in one Redis Cluster slot (one script, many keys).
    const bucket: BucketSpec = {
      key: `{${teamId}}:${method}`,
      ratePerMs: this.#refillPerMs(method),
      burst: budget.burst,
    };
    const lane: Lane = {
      method,
      bucket,
      teamSpecs: [bucket],
      perKey: budget.perKey && {
        ratePerMs: this.#refillPerMs(method, budget.perKey),
        burst: budget.perKey.burst,
      },
      jobs: new Heap<Job>(better),
      keyHolds: new Map(),
      heldKeys: new Heap<Hold<Job>>(holdBefore),
      edits: new Map(),
      readyEdits: new Heap<EditSlot>(slotBefore),
      units: new Map(),
      heldUnits: new Heap<Hold<EditSlot>>(holdBefore),
      unitsSweepAt: UNITS_SWEEP_MIN,
      pausedUntil: 0,
      blockedUntil: 0,
      nextAt: Infinity,
      timer: undefined,
      timerAt: 0,
      wake: () => {
        lane.timer = undefined;
        void this.#pump(lane);
      },
      pumping: false,
      again: false,
    };
    if (!lanes) {
      lanes = new Map();
      this.#lanes.set(teamId, lanes);
    }
    lanes.set(method, lane);
    return lane;
  }

  #requestPump(lane: Lane): void {
    const now = this.#clock.now();
    // A timer is armed for the end of a pause or of an empty team bucket, which every call of the
    // lane takes from; asking the bucket (perhaps in Redis) on every arrival meanwhile would only
    // hear "wait".
    if (now < lane.pausedUntil || now < lane.blockedUntil) return;
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

  /**
   * Sends what the budget allows now, then arms the lane's timer for when more can go. Each round
   * asks the buckets once: an empty team bucket ends the drain (no other call could go either), an
   * empty per-key bucket holds that key's calls until it refills while other keys go on.
   */
  async #drain(lane: Lane): Promise<void> {
    for (;;) {
      if (this.#closed) return;
      const now = this.#clock.now();
      if (now < lane.pausedUntil) {
        this.#arm(lane, lane.pausedUntil);
        return;
      }
      if (now < lane.blockedUntil) {
        this.#arm(lane, lane.blockedUntil);
        return;
      }
      const best = this.#pick(lane, now);
      if (!best) {
        if (lane.nextAt < Infinity) this.#arm(lane, lane.nextAt);
        return;
      }
      const key = best.kind === "job" ? best.key : undefined;
      const specs =
        key === undefined || !lane.perKey
          ? lane.teamSpecs
          : [lane.bucket, { key: `${lane.bucket.key}:${key}`, ...lane.perKey }];
      let wait: number;
      let teamWait: number;
      if (this.#buckets.tryTake) {
        ({ wait, firstWait: teamWait } = await this.#buckets.tryTake(specs, now));
      } else {
        // Buckets that cannot say which bucket refused: a keyed refusal holds just that key (still
        // correct, only one question per queued key instead of one while the team's is empty).
        wait = await this.#buckets.take(specs, now);
        teamWait = specs.length === 1 ? wait : 0;
      }
      if (wait > 0) {
        // Instances sharing a bucket all wake when its next token is due; whoever asks first wins.
        // Without jitter the same instance could win every time and starve the others' messages.
        const jitter = this.#buckets.shared ? Math.floor(Math.random() * SHARED_JITTER_MS) : 0;
        if (teamWait > 0 || key === undefined || best.kind !== "job") {
          // The team's bucket is empty: nothing else in this lane can go before it refills.
          lane.blockedUntil = now + (teamWait > 0 ? teamWait : wait) + jitter;
          this.#arm(lane, lane.blockedUntil);
          return;
        }
        this.#holdKey(lane, best, key, now + wait + jitter);
        continue;
      }
      // A 429 may have arrived while the bucket answered; the token is lost, the call waits.
      if (this.#clock.now() < lane.pausedUntil || this.#closed) continue;
      if (best.kind === "job") this.#dispatchJob(lane, best);
      else this.#dispatchEdit(lane, best);
    }
  }

  /**
   * The next call to send: the best (rank, since, seq) among queued jobs whose key is not held
   * and pending edits not held by their unit's interval. Held ones are parked on the way, once;
   * holds that ended are released first. Sets `lane.nextAt` to when the earliest hold ends.
   */
  #pick(lane: Lane, now: number): Job | EditSlot | undefined {
    for (let hold = lane.heldKeys.peek(); hold && hold.until <= now; hold = lane.heldKeys.peek()) {
      lane.heldKeys.pop();
      lane.keyHolds.delete(hold.name);
      for (const job of hold.parked) lane.jobs.push(job);
    }
    let job = lane.jobs.peek();
    while (job && job.key !== undefined) {
      const hold = lane.keyHolds.get(job.key);
      if (!hold) break;
      lane.jobs.pop();
      hold.parked.push(job);
      job = lane.jobs.peek();
    }

    for (
      let unit = lane.heldUnits.peek();
      unit && unit.until <= now;
      unit = lane.heldUnits.peek()
    ) {
      lane.heldUnits.pop();
      lane.units.delete(unit.name);
      for (const slot of unit.parked) {
        slot.parked = false;
        lane.readyEdits.push(slot);
      }
      unit.parked.length = 0;
    }
    let slot = lane.readyEdits.peek();
    // Final edits are not held by the interval.
    while (slot && slot.pending?.rank === 1) {
      const unit = lane.units.get(slot.unit);
      if (!unit || unit.until <= now) break;
      lane.readyEdits.pop();
      slot.parked = true;
      if (unit.parked.push(slot) === 1) lane.heldUnits.push(unit);
      slot = lane.readyEdits.peek();
    }

    lane.nextAt = Math.min(
      lane.heldKeys.peek()?.until ?? Infinity,
      lane.heldUnits.peek()?.until ?? Infinity,
    );
    const edit = slot?.pending;
    if (slot && edit && (!job || better(edit, job))) return slot;
    return job;
  }

  /** Parks `job`, refused by its key's bucket, with the other calls of its key until `until`. */
  #holdKey(lane: Lane, job: Job, key: string, until: number): void {
    if (!lane.jobs.remove(job)) return;
    let hold = lane.keyHolds.get(key);
    if (hold) {
      hold.until = until;
      lane.heldKeys.update(hold);
    } else {
      hold = { name: key, until, parked: [], heapIndex: -1 };
      lane.keyHolds.set(key, hold);
      lane.heldKeys.push(hold);
    }
    hold.parked.push(job);
  }

  /** A pending edit just became final: the interval no longer holds it. */
  #promote(lane: Lane, slot: EditSlot): void {
    if (!slot.parked) {
      lane.readyEdits.update(slot); // no-op while in flight
      return;
    }
    this.#unpark(lane, slot);
    lane.readyEdits.push(slot);
  }

  /** Takes a parked slot out of its unit's hold (the hold leaves the heap once empty). */
  #unpark(lane: Lane, slot: EditSlot): void {
    slot.parked = false;
    const unit = lane.units.get(slot.unit);
    if (!unit) return;
    const i = unit.parked.indexOf(slot);
    if (i >= 0) unit.parked.splice(i, 1);
    if (unit.parked.length === 0) lane.heldUnits.remove(unit);
  }

  /** A unit was edited at `now`: its interim edits wait for the interval. */
  #edited(lane: Lane, name: string, now: number): void {
    const until = now + this.#minInterval;
    const unit = lane.units.get(name);
    if (unit) {
      unit.until = until;
      lane.heldUnits.update(unit);
      return;
    }
    if (lane.units.size >= lane.unitsSweepAt) {
      // Units whose interval is over are as good as absent: forget them (amortised O(1)).
      for (const [n, u] of lane.units) {
        if (u.until <= now && u.parked.length === 0) lane.units.delete(n);
      }
      lane.unitsSweepAt = Math.max(UNITS_SWEEP_MIN, 2 * lane.units.size);
    }
    lane.units.set(name, { name, until, parked: [], heapIndex: -1 });
  }

  #dispatchJob(lane: Lane, job: Job): void {
    if (!lane.jobs.remove(job)) return;
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

  #dispatchEdit(lane: Lane, slot: EditSlot): void {
    const edit = slot.pending;
    if (!edit || !lane.readyEdits.remove(slot)) return;
    slot.pending = undefined;
    slot.inflight = true;
    this.#edited(lane, slot.unit, this.#clock.now());
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
        if (!slot.pending) lane.edits.delete(slot.messageKey);
        else if (!this.#closed) lane.readyEdits.push(slot);
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
    lane.timer = this.#clock.setTimeout(lane.wake, Math.max(0, at - this.#clock.now()));
  }

  #started(method: string, since: number): void {
    this.#count("calls", method);
    const wait = Math.max(0, this.#clock.now() - since);
    let stats = this.#metrics.queueWait[method];
    if (!stats) {
      stats = { count: 0, sumMs: 0, maxMs: 0, le: {} };
      for (const bound of WAIT_BOUNDS) stats.le[bound.label] = 0;
      stats.le["+Inf"] = 0;
      this.#metrics.queueWait[method] = stats;
    }
    stats.count += 1;
    stats.sumMs += wait;
    stats.maxMs = Math.max(stats.maxMs, wait);
    for (const bound of WAIT_BOUNDS)
      if (wait <= bound.ms) stats.le[bound.label] = (stats.le[bound.label] ?? 0) + 1;
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
  promise.catch(ignore);
  return promise;
}

function ignore(): void {}
