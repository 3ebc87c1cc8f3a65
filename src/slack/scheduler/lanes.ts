/**
 * The scheduler's queues for one team and one Slack method (a lane): jobs, edit slots, holds,
 * and the order in which calls are picked (waiting longest, priority a head start, then arrival).
 */
import type { Clock } from "../../util/clock.ts";
import type { BucketSpec, TokenBucketSpec, WindowSpec } from "./token-buckets.ts";
import { WINDOW_MS } from "./windows.ts";
import { Heap, type Indexed } from "./heap.ts";

/** How an edit ended: sent, or replaced by a newer text before it was. */
export type EditResult = "sent" | "superseded";

/**
 * What the pick order compares: owed calls before paced ones (windows.ts), then waiting since
 * (priority counts as a head start), then arrival.
 */
export interface Place {
  /** An interim text (an edit, or an append with more to come): it spends only spare calls. */
  paced: boolean;
  rank: 0 | 1;
  since: number;
  seq: number;
}

export interface Job extends Place, Indexed {
  readonly kind: "job";
  /** Of a paced call (ScheduleOptions.pace): its unit. */
  readonly unit: string | undefined;
  readonly key: string | undefined;
  readonly attempt: () => Promise<void>;
  readonly fail: (err: unknown) => void;
  retries: number;
}

/** A message's unsent text. A newer text takes over this object: same place in line, new callbacks. */
export interface PendingEdit extends Place {
  send: () => Promise<void>;
  settle: (result: EditResult) => void;
  fail: (err: unknown) => void;
  retries: number;
}

export interface EditSlot extends Indexed {
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
export interface Hold<T> extends Indexed {
  readonly name: string;
  until: number;
  readonly parked: T[];
}

export interface Lane {
  readonly method: string;
  readonly bucket: WindowSpec; // the workspace's window for the method
  /** [bucket]: what unkeyed calls take from. */
  readonly teamSpecs: readonly BucketSpec[];
  readonly perKey: Omit<TokenBucketSpec, "key"> | undefined;
  /** Jobs in pick order; those of a held key are moved to its hold when they reach the top. */
  readonly jobs: Heap<Job>;
  /** Per-key buckets found empty, by key... */
  readonly keyHolds: Map<string, Hold<Job>>;
  /** ...and by when they will have a token. */
  readonly heldKeys: Heap<Hold<Job>>;
  readonly edits: Map<string, EditSlot>;
  /**
   * Units (runs, or messages) with paced calls and no final one yet: each owes the window a final
   * call. When each was first and last seen.
   */
  readonly open: Map<string, { readonly since: number; at: number }>;
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
  /** No spare call for paced ones until then; owed calls may still go. */
  pacedUntil: number;
  /** Set by #pick: when the earliest hold ends. The timer's callback is `wake` (one per lane). */
  nextAt: number;
  timer: unknown;
  timerAt: number;
  wake: () => void;
  pumping: Promise<void> | undefined; // the lane's one pump while it runs
  again: boolean;
  /** The scheduler closed, or the workspace uninstalled the app: the lane asks its budget no more. */
  stopped: boolean;
}

/** Units kept before the first sweep of expired ones; then twice as many as survived the last. */
export const UNITS_SWEEP_MIN = 1024;

/**
 * How far ahead priority puts a call (a run's final edit): it goes before calls queued up to
 * this long before it, not before older ones. No call waits behind later ones for longer,
 * whatever their priority: nobody starves.
 */
export const PRIORITY_HEADSTART_MS = 30_000;

const placeOf = (p: Place) => p.since - (p.rank === 0 ? PRIORITY_HEADSTART_MS : 0);

export function better(a: Place, b: Place | undefined): boolean {
  if (!b) return true;
  if (a.paced !== b.paced) return b.paced;
  const [pa, pb] = [placeOf(a), placeOf(b)];
  if (pa !== pb) return pa < pb;
  if (a.rank !== b.rank) return a.rank < b.rank;
  return a.seq < b.seq;
}

export function slotBefore(a: EditSlot, b: EditSlot): boolean {
  return a.pending !== undefined && better(a.pending, b.pending);
}

export function holdBefore<T>(a: Hold<T>, b: Hold<T>): boolean {
  return a.until < b.until;
}

/**
 * The next call to send: the best (rank, since, seq) among queued jobs whose key is not held
 * and pending edits not held by their unit's interval. Held ones are parked on the way, once;
 * holds that ended are released first. Sets `lane.nextAt` to when the earliest hold ends.
 */
export function pick(lane: Lane, now: number): Job | EditSlot | undefined {
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

  for (let unit = lane.heldUnits.peek(); unit && unit.until <= now; unit = lane.heldUnits.peek()) {
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

/** What a lane's budget carries now, as this instance sees it (other instances' calls are not known). */
export interface LaneLoad {
  /** Calls allowed in any minute (the safety margin kept). */
  readonly perMinute: number;
  /** Jobs waiting for the budget. */
  readonly waiting: number;
  /** Messages being edited: a text waiting or being sent, or edited within the interval. */
  readonly editing: number;
}

export function laneLoad(lane: Lane, now: number): LaneLoad {
  let recent = 0;
  for (const unit of lane.units.values()) if (unit.until > now) recent += 1;
  return {
    perMinute: lane.bucket.limit,
    waiting: waitingJobs(lane),
    editing: Math.max(recent, lane.edits.size),
  };
}

/**
 * What a paced call of the lane asks of its window (windows.ts): the open units, each owing a
 * final call, and their mean age. A unit counts as at least `minAgeMs` old (the interval between
 * two of its edits: it was seen to go on for at least that long). Units not seen for a window
 * are forgotten (their runs ended without a final call, or went quiet).
 */
export function paceOf(
  lane: Lane,
  now: number,
  minAgeMs: number,
): { readonly units: number; readonly ageMs: number } {
  let ages = 0;
  for (const [unit, u] of lane.open) {
    if (u.at <= now - WINDOW_MS) lane.open.delete(unit);
    else ages += Math.max(minAgeMs, now - u.since);
  }
  const units = lane.open.size;
  return { units: Math.max(1, units), ageMs: units === 0 ? minAgeMs : ages / units };
}

/** A unit's paced call (it owes a final one), or its final call (it owes no more). */
export function track(lane: Lane, unit: string, paced: boolean, now: number): void {
  if (!paced) {
    lane.open.delete(unit);
    return;
  }
  const u = lane.open.get(unit);
  if (u) u.at = now;
  else lane.open.set(unit, { since: now, at: now });
}

/** The jobs waiting in a lane, held keys' too (edits are not jobs). */
function waitingJobs(lane: Lane): number {
  let waiting = lane.jobs.size;
  for (const hold of lane.keyHolds.values()) waiting += hold.parked.length;
  return waiting;
}

/** The calls waiting in a lane: jobs, and messages with a text not sent yet. */
export function waitingCalls(lane: Lane): number {
  let waiting = waitingJobs(lane);
  for (const slot of lane.edits.values()) if (slot.pending) waiting += 1;
  return waiting;
}

/** Parks `job`, refused by its key's bucket, with the other calls of its key until `until`. */
export function holdKey(lane: Lane, job: Job, key: string, until: number): void {
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
export function promote(lane: Lane, slot: EditSlot): void {
  if (!slot.parked) {
    lane.readyEdits.update(slot); // no-op while in flight
    return;
  }
  unpark(lane, slot);
  lane.readyEdits.push(slot);
}

/** Takes a parked slot out of its unit's hold (the hold leaves the heap once empty). */
export function unpark(lane: Lane, slot: EditSlot): void {
  slot.parked = false;
  const unit = lane.units.get(slot.unit);
  if (!unit) return;
  const i = unit.parked.indexOf(slot);
  if (i >= 0) unit.parked.splice(i, 1);
  if (unit.parked.length === 0) lane.heldUnits.remove(unit);
}

/** A unit was edited at `now`: its interim edits wait for the interval. */
export function edited(lane: Lane, name: string, now: number, minIntervalMs: number): void {
  const until = now + minIntervalMs;
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

/** A lane with nothing queued; `wake` is its timer's callback. */
export function newLane(
  method: string,
  bucket: WindowSpec,
  perKey: Omit<TokenBucketSpec, "key"> | undefined,
  wake: () => void,
): Lane {
  return {
    method,
    bucket,
    teamSpecs: [bucket],
    perKey,
    jobs: new Heap<Job>(better),
    keyHolds: new Map(),
    heldKeys: new Heap<Hold<Job>>(holdBefore),
    edits: new Map(),
    open: new Map(),
    readyEdits: new Heap<EditSlot>(slotBefore),
    units: new Map(),
    heldUnits: new Heap<Hold<EditSlot>>(holdBefore),
    unitsSweepAt: UNITS_SWEEP_MIN,
    pausedUntil: 0,
    blockedUntil: 0,
    pacedUntil: 0,
    nextAt: Infinity,
    timer: undefined,
    timerAt: 0,
    wake,
    pumping: undefined,
    again: false,
    stopped: false,
  };
}

/** Rejects everything a lane still holds, in arrival order (the scheduler is closing). */
export function failAll(lane: Lane, error: Error): void {
  const jobs = lane.jobs.clear();
  for (const hold of lane.heldKeys.clear()) for (const job of hold.parked) jobs.push(job);
  lane.keyHolds.clear();
  jobs.sort((a, b) => a.seq - b.seq);
  for (const job of jobs) job.fail(error);
  lane.readyEdits.clear();
  lane.heldUnits.clear();
  lane.units.clear();
  lane.open.clear();
  for (const slot of lane.edits.values()) {
    slot.parked = false;
    slot.pending?.fail(error);
    slot.pending = undefined;
  }
}

/**
 * Queues the text of an edit of `messageKey`. A newer text takes over the waiting one's place
 * (fairness is per message, not per text) and the older resolves "superseded"; a final edit
 * is no longer held by the interval. Returns what happened: queued anew, or replaced a
 * waiting text (and promoted it to final); the pump cares about the first two.
 */
export function queueEdit(
  lane: Lane,
  messageKey: string,
  text: Pick<PendingEdit, "send" | "settle" | "fail">,
  options: { readonly final?: boolean; readonly runId?: string } | undefined,
  place: () => { since: number; seq: number },
): "queued" | "promoted" | "replaced" {
  const final = options?.final === true;
  const unit = options?.runId ?? messageKey;
  let slot = lane.edits.get(messageKey);
  if (!slot) {
    slot = {
      kind: "edit",
      messageKey,
      unit,
      pending: undefined,
      inflight: false,
      parked: false,
      heapIndex: -1,
    };
    lane.edits.set(messageKey, slot);
  }
  const previous = slot.pending;
  const at = place();
  track(lane, unit, !final, at.since);
  if (previous) {
    // Taking over the object keeps its place in the heap too (and allocates nothing).
    const superseded = previous.settle;
    previous.send = text.send;
    previous.settle = text.settle;
    previous.fail = text.fail;
    superseded("superseded");
    // Replacing a text changes nothing the pump cares about, unless the edit just became final.
    if (final && previous.paced) {
      previous.rank = 0;
      previous.paced = false;
      promote(lane, slot);
      return "promoted";
    }
    return "replaced";
  }
  slot.pending = { ...text, paced: !final, rank: final ? 0 : 1, ...at, retries: 0 };
  // In flight: it joins the line when the current edit of the message is done.
  if (!slot.inflight) lane.readyEdits.push(slot);
  return "queued";
}

/** Drops a message's text still waiting (not one being sent); it resolves "superseded". */
export function dropEdit(lane: Lane, messageKey: string): boolean {
  const slot = lane.edits.get(messageKey);
  const edit = slot?.pending;
  if (!slot || !edit) return false;
  slot.pending = undefined;
  if (slot.parked) unpark(lane, slot);
  else lane.readyEdits.remove(slot);
  // One being sent keeps its slot: it is deleted when that call is done.
  if (!slot.inflight) lane.edits.delete(messageKey);
  edit.settle("superseded");
  return true;
}

/** A call with `maxWaitMs` that Slack's budget (or a 429's pause) did not let go in time. */
export class BudgetWaitExceeded extends Error {
  override readonly name = "BudgetWaitExceeded";
  readonly method: string;
  constructor(method: string, ms: number) {
    super(`${method} had no Slack rate budget within ${ms} ms`);
    this.method = method;
  }
}

/**
 * Puts a job in line; with `maxWaitMs`, a job not started by then leaves the line and fails
 * (one started meanwhile goes on).
 */
export function enqueueJob(
  lane: Lane,
  job: Job,
  maxWaitMs: number | undefined,
  clock: Pick<Clock, "setTimeout">,
  fail: (err: BudgetWaitExceeded) => void,
): void {
  lane.jobs.push(job);
  if (maxWaitMs === undefined) return;
  clock.setTimeout(() => {
    if (lane.jobs.remove(job)) fail(new BudgetWaitExceeded(lane.method, maxWaitMs));
  }, maxWaitMs);
}
