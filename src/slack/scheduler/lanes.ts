/** The scheduler's queues for one team and one Slack method (a lane), and their pick order. */
import type { Clock } from "../../util/clock.ts";
import type { TokenBucketSpec } from "./token-buckets.ts";
import { WINDOW_MS, type WindowSpec } from "./windows.ts";
import { Heap, type Indexed } from "./heap.ts";

export type EditResult = "sent" | "superseded";

/** What the pick order compares: owed calls before paced ones, then waiting since, then arrival. */
export interface Place {
  paced: boolean; // an interim text (an edit, or an append with more to come): spare calls only
  rank: 0 | 1;
  since: number;
  seq: number;
}

export interface Job extends Place, Indexed {
  readonly kind: "job";
  readonly unit: string | undefined; // ScheduleOptions.pace
  readonly key: string | undefined;
  readonly attempt: () => Promise<void>;
  readonly fail: (err: unknown) => void;
  retries: number;
}

/** A message's unsent text; a newer text takes over this object (its place, new callbacks). */
export interface PendingEdit extends Place {
  send: () => Promise<void>;
  settle: (result: EditResult) => void;
  fail: (err: unknown) => void;
  retries: number;
}

export interface EditSlot extends Indexed {
  readonly kind: "edit";
  readonly messageKey: string;
  readonly unit: string; // whose interval applies: the run, or the message itself
  pending: PendingEdit | undefined;
  /** One edit of a message at a time, so an older text can never land after a newer one. */
  inflight: boolean;
  parked: boolean; // set aside in its unit's hold (interim text, interval not over)
}

/** Parks calls out of the ready heaps until `until`: an empty key bucket's, or a unit's edits. */
export interface Hold<T> extends Indexed {
  readonly name: string;
  until: number;
  readonly parked: T[];
}

/** Units kept before the first sweep of expired ones; then twice as many as survived the last. */
const UNITS_SWEEP_MIN = 1024;

/** Priority (a final edit) goes before calls queued up to this long before it: nobody starves. */
const PRIORITY_HEADSTART_MS = 30_000;

const placeOf = (p: Place) => p.since - (p.rank === 0 ? PRIORITY_HEADSTART_MS : 0);

function better(a: Place, b: Place): boolean {
  if (a.paced !== b.paced) return b.paced;
  const [pa, pb] = [placeOf(a), placeOf(b)];
  if (pa !== pb) return pa < pb;
  if (a.rank !== b.rank) return a.rank < b.rank;
  return a.seq < b.seq;
}

const slotBefore = (a: EditSlot, b: EditSlot) =>
  a.pending !== undefined && (!b.pending || better(a.pending, b.pending));

const holdBefore = <T>(a: Hold<T>, b: Hold<T>) => a.until < b.until;

/**
 * The next call to send, among jobs whose key is not held and edits not held by their unit's
 * interval (held ones are parked on the way, ended holds released first). Sets `lane.nextAt`.
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

/** What a lane's budget carries now, as this instance sees it. */
export function laneLoad(lane: Lane, now: number) {
  let recent = 0;
  for (const unit of lane.units.values()) if (unit.until > now) recent += 1;
  return {
    perMinute: lane.bucket.limit, // safety margin kept
    waiting: waitingJobs(lane),
    /** Messages being edited: a text waiting or being sent, or edited within the interval. */
    editing: Math.max(recent, lane.edits.size),
  };
}

export type LaneLoad = ReturnType<typeof laneLoad>;

/** A paced call's units and their mean age (≥ `minAgeMs`); units unseen for a window go. */
export function paceOf(lane: Lane, now: number, minAgeMs: number) {
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
  const u = lane.open.get(unit);
  if (!paced) lane.open.delete(unit);
  else if (u) u.at = now;
  else lane.open.set(unit, { since: now, at: now });
}

function waitingJobs(lane: Lane): number {
  let waiting = lane.jobs.size;
  for (const hold of lane.keyHolds.values()) waiting += hold.parked.length;
  return waiting;
}

/** Jobs, and messages with a text not sent yet. */
export function waitingCalls(lane: Lane): number {
  let waiting = waitingJobs(lane);
  for (const slot of lane.edits.values()) if (slot.pending) waiting += 1;
  return waiting;
}

/**
 * Holds `key`'s calls until `until` (a call of the key in flight, or its bucket empty), parking
 * `job` (refused by the bucket) with them.
 */
export function holdKey(lane: Lane, key: string, until: number, job?: Job): void {
  if (job && !lane.jobs.remove(job)) return;
  let hold = lane.keyHolds.get(key);
  if (hold) {
    hold.until = until;
    lane.heldKeys.update(hold);
  } else {
    hold = { name: key, until, parked: [], heapIndex: -1 };
    lane.keyHolds.set(key, hold);
    lane.heldKeys.push(hold);
  }
  if (job) hold.parked.push(job);
}

/** A pending edit just became final: the interval no longer holds it. */
function promote(lane: Lane, slot: EditSlot): void {
  if (!slot.parked) return lane.readyEdits.update(slot); // no-op while in flight
  unpark(lane, slot);
  lane.readyEdits.push(slot);
}

/** Takes a parked slot out of its unit's hold (the hold leaves the heap once empty). */
function unpark(lane: Lane, slot: EditSlot): void {
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
  bucket: WindowSpec, // the workspace's window for the method
  perKey: Omit<TokenBucketSpec, "key"> | undefined,
  wake: () => void,
) {
  return {
    method,
    bucket,
    perKey,
    /** Jobs in pick order; those of a held key are moved to its hold when they reach the top. */
    jobs: new Heap<Job>(better),
    /** Per-key buckets found empty, by key and by when they will have a token. */
    keyHolds: new Map<string, Hold<Job>>(),
    heldKeys: new Heap<Hold<Job>>(holdBefore),
    edits: new Map<string, EditSlot>(),
    /** Units (runs, or messages) owing a final call: when each was first and last seen. */
    open: new Map<string, { readonly since: number; at: number }>(),
    /** Slots with a pending text, neither in flight nor parked, in pick order. */
    readyEdits: new Heap<EditSlot>(slotBefore),
    /** Units edited within the interval (`until` = last edit + interval); swept now and then. */
    units: new Map<string, Hold<EditSlot>>(),
    heldUnits: new Heap<Hold<EditSlot>>(holdBefore), // units with parked edits, by interval end
    unitsSweepAt: UNITS_SWEEP_MIN,
    pausedUntil: 0,
    blockedUntil: 0, // the team's window is full until then: no call of the lane goes before
    pacedUntil: 0, // no spare call for paced ones until then; owed calls may still go
    nextAt: Infinity, // set by `pick`: when the earliest hold ends
    timer: undefined as unknown,
    timerAt: 0,
    wake,
    pumping: undefined as Promise<void> | undefined, // the lane's one pump while it runs
    again: false,
    stopped: false, // closed, or the workspace uninstalled the app
  };
}

export type Lane = ReturnType<typeof newLane>;

/** Rejects everything a lane still holds, in arrival order. */
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
 * Queues a text of `messageKey`: a newer text takes over the waiting one's place (fairness is per
 * message) and the older resolves "superseded". The pump cares about "queued" and "promoted".
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
    // Taking over the object keeps its place in the heap.
    const superseded = previous.settle;
    previous.send = text.send;
    previous.settle = text.settle;
    previous.fail = text.fail;
    superseded("superseded");
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

/** Drops a message's text still waiting (not one being sent): "superseded". */
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

/** A call with `maxWaitMs` that the budget (or a 429's pause) did not let go in time. */
export class BudgetWaitExceeded extends Error {
  override readonly name = "BudgetWaitExceeded";
  readonly method: string;
  constructor(method: string, ms: number) {
    super(`${method} had no Slack rate budget within ${ms} ms`);
    this.method = method;
  }
}

/** Puts a job in line; with `maxWaitMs`, one not started by then leaves it and fails. */
export function enqueueJob(
  lane: Lane,
  job: Job,
  maxWaitMs: number | undefined,
  clock: Pick<Clock, "setTimeout">,
): void {
  lane.jobs.push(job);
  if (maxWaitMs === undefined) return;
  clock.setTimeout(() => {
    if (lane.jobs.remove(job)) job.fail(new BudgetWaitExceeded(lane.method, maxWaitMs));
  }, maxWaitMs);
}
