/** The store on keyv: records as keyv values; claims, leases, locks, runs by backend primitives. */
import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type { Keyv } from "keyv";
import { DEFAULT_RETENTION_DAYS } from "../config/config.ts";
import {
  type DefaultsScope,
  type PersonForgotten,
  type RateLimit,
  type RecordLife,
  RECENT_TASKS_KEPT,
  type RecentTask,
  type RunRecord,
  type SlackThreadKey,
  type StartPlace,
  type StopRequest,
  StoreUnavailableError,
  type TaskDefaults,
  type ThreadRecord,
  type ThreadStore,
} from "./types.ts";

import { checkRateCall, type RateCount, rateDecision, type RateRefusal } from "./rate-window.ts";
import { OTHER_FORMAT, stamp, type StampedRecord, unstamp } from "./record-format.ts";
import {
  decodeRunEntry,
  decodeStopRequest,
  DEFAULT_RUN_TTL_MS,
  encodeRunEntry,
  runLease,
} from "./run-index.ts";

const DAY_MS = 24 * 3600 * 1000;
const LOCK_TTL_MS = 10_000;
/** Default key prefix; several bots (or test suites) may share one Redis with their own. */
export const DEFAULT_NAMESPACE = "taskbot";

const threadsOf = (teamId: string, channelId = "") =>
  `t:${teamId}:thread:${channelId === "" ? "" : `${channelId}:`}`;
const threadKey = (k: SlackThreadKey) => `${threadsOf(k.teamId, k.channelId)}${k.threadTs}`;
const recentsOf = (teamId: string) => `t:${teamId}:recent:`;
const recentKey = (teamId: string, userId: string) => `${recentsOf(teamId)}${userId}`;
const defaultsKey = (teamId: string, scope: DefaultsScope) =>
  `t:${teamId}:defaults:${scope.kind === "user" ? `user:${scope.userId}` : `channel:${scope.channelId}`}`;

function threadOfKey(teamId: string, key: string): SlackThreadKey | undefined {
  const [channelId, threadTs, ...more] = key.slice(threadsOf(teamId).length).split(":");
  if (!channelId || !threadTs || more.length > 0) return undefined;
  return { teamId, channelId, threadTs };
}

type ThreadOf = { readonly channelId: string; readonly threadTs: string };
const sameThread = (a: ThreadOf, b: ThreadOf) =>
  a.channelId === b.channelId && a.threadTs === b.threadTs;

function placeIn(
  place: StartPlace,
  scope: { readonly channelId?: string; readonly threadTs?: string },
): boolean {
  if (scope.channelId !== undefined && place.channelId !== scope.channelId) return false;
  return scope.threadTs === undefined || place.threadTs === scope.threadTs;
}

/**
 * A backend's atomic operations. Claims, leases and locks are keys (`…IfHolds`: only while it
 * holds its holder's `value`); the run index and Stop requests are entries.
 */
export interface Primitives {
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  /** One request counted in every log of `counts`, or in none, atomically (rate-window.ts). */
  consumeRate(counts: readonly RateCount[], windowMs: number, now: number): Promise<RateRefusal>;
  renewIfHolds(key: string, value: string, ttlMs: number): Promise<boolean>;
  deleteIfHolds(key: string, value: string): Promise<boolean>;
  putEntry(key: string, value: string, ttlMs: number): Promise<void>;
  /** Only while it exists (and is live). */
  replaceEntry(key: string, value: string, ttlMs: number): Promise<boolean>;
  getEntry(key: string): Promise<string | undefined>;
  deleteEntry(key: string): Promise<void>;
  /** Deletes `key`, and the `also` keys with it, only while `key` still holds `value`. */
  deleteEntryIfSame(key: string, value: string, also: readonly string[]): Promise<boolean>;
  entries(prefix: string): Promise<Array<[string, string]>>;
  /** Whoever holds them. */
  deleteKeys(keys: readonly string[]): Promise<void>;
  deletePrefix(prefix: string): Promise<void>;
  /** By keyv's key (without the namespace). */
  deleteRecords(prefix: string): Promise<void>;
  recordKeys(prefix: string): Promise<string[]>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** Record keys by keyv's own iterator (on Redis a SCAN of keyv's values only), by prefix. */
export async function iteratedKeys(keyv: Keyv<unknown>, prefix: string): Promise<string[]> {
  if (!keyv.iterator) throw new Error("this store cannot list its records");
  const keys: string[] = [];
  for await (const [key] of keyv.iterator(undefined)) {
    if (typeof key === "string" && key.startsWith(prefix)) keys.push(key);
  }
  return keys;
}

async function guard<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw err instanceof StoreUnavailableError ? err : new StoreUnavailableError(err);
  }
}

/** How long a run index entry (`runTtlMs`) and what is retained outlive their last write. */
export interface StoreOptions {
  readonly namespace?: string;
  readonly runTtlMs?: number;
  readonly retentionMs?: number;
  readonly now?: () => number;
}

export class KeyvThreadStore implements ThreadStore {
  readonly #keyv: Keyv<StampedRecord>;
  readonly #p: Primitives;
  readonly #ns: string;
  readonly #runTtlMs: number;
  readonly #retentionMs: number;
  readonly #now: () => number;
  readonly #locks = new Map<string, Promise<unknown>>();

  constructor(keyv: Keyv<StampedRecord>, primitives: Primitives, options: StoreOptions = {}) {
    this.#keyv = keyv;
    this.#p = primitives;
    this.#ns = options.namespace ?? DEFAULT_NAMESPACE;
    this.#runTtlMs = options.runTtlMs ?? DEFAULT_RUN_TTL_MS;
    this.#retentionMs = options.retentionMs ?? DEFAULT_RETENTION_DAYS * DAY_MS;
    this.#now = options.now ?? Date.now;
  }

  #lease = (name: string) => `${this.#ns}:lease:${name}`;
  #run = (runId: string) => `${this.#ns}:run:${runId}`;
  #stop = (runId: string) => `${this.#ns}:stopreq:${runId}`;
  #claim = (teamId: string, name: string) => `${this.#ns}:claim:t:${teamId}:${name}`;
  #rate = (teamId: string, name: string) => `${this.#ns}:rate:t:${teamId}:${name}`;

  /** OTHER_FORMAT when of another format. */
  async getRecord(key: string): Promise<unknown> {
    const stored = await guard(() => this.#keyv.get<unknown>(key));
    return stored === undefined ? undefined : unstamp(stored);
  }

  async #write(key: string, value: unknown, ttlMs: number | undefined): Promise<void> {
    await guard(async () => {
      if (!(await this.#keyv.set(key, stamp(value), ttlMs))) {
        throw new Error("the store did not accept the write");
      }
    });
  }

  async getThread(key: SlackThreadKey): Promise<ThreadRecord | undefined> {
    const stored = await this.getRecord(threadKey(key));
    return stored === OTHER_FORMAT ? undefined : (stored as ThreadRecord | undefined);
  }

  async putThread(record: ThreadRecord): Promise<void> {
    await this.#write(threadKey(record), record, this.#retentionMs);
  }

  updateThread(
    key: SlackThreadKey,
    change: (current: ThreadRecord) => ThreadRecord | undefined,
  ): Promise<ThreadRecord | undefined> {
    // In this process, one update of a thread at a time (cheap, keeps order); across
    // instances, a short lock in the shared store.
    const k = threadKey(key);
    const previous = this.#locks.get(k) ?? Promise.resolve();
    const next = previous
      .catch(() => undefined)
      .then(() =>
        this.#withLock(`lock:${k}`, async () => {
          const current = await this.getThread(key);
          if (!current) return undefined;
          const updated = change(current);
          if (!updated) return current;
          const stamped = { ...updated, updatedAt: Date.now() };
          await this.putThread(stamped);
          return stamped;
        }),
      );
    this.#locks.set(k, next);
    void next
      .catch(() => undefined)
      .finally(() => {
        if (this.#locks.get(k) === next) this.#locks.delete(k);
      });
    return next;
  }

  async #withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const key = this.#lease(name);
    const token = randomUUID();
    const deadline = Date.now() + LOCK_TTL_MS;
    for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
      if (await guard(() => this.#p.setIfAbsent(key, token, LOCK_TTL_MS))) break;
      if (Date.now() > deadline) throw new StoreUnavailableError(new Error(`lock ${name} is busy`));
      await delay(wait + Math.random() * wait);
    }
    try {
      return await fn();
    } finally {
      await this.#p.deleteIfHolds(key, token).catch(() => false);
    }
  }

  claimOnce(teamId: string, name: string, ttlMs: number): Promise<boolean> {
    return guard(() => this.#p.setIfAbsent(this.#claim(teamId, name), "1", ttlMs));
  }

  async releaseClaim(teamId: string, name: string): Promise<void> {
    await guard(() => this.#p.deleteIfHolds(this.#claim(teamId, name), "1"));
  }

  async consumeRate(teamId: string, limits: readonly RateLimit[], windowMs: number, now: number) {
    checkRateCall(limits, windowMs, now);
    const counts = limits.map(({ name, limit }) => ({ key: this.#rate(teamId, name), limit }));
    return rateDecision(limits, await guard(() => this.#p.consumeRate(counts, windowMs, now)));
  }

  acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return guard(() => this.#p.setIfAbsent(this.#lease(name), owner, ttlMs));
  }

  renewLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return guard(() => this.#p.renewIfHolds(this.#lease(name), owner, ttlMs));
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    await guard(() => this.#p.deleteIfHolds(this.#lease(name), owner));
  }

  async putRun(record: RunRecord): Promise<void> {
    const entry = encodeRunEntry(record, this.#now(), this.#runTtlMs);
    await guard(() => this.#p.putEntry(this.#run(record.runId), entry, this.#runTtlMs));
  }

  updateRun(record: RunRecord): Promise<boolean> {
    const entry = encodeRunEntry(record, this.#now(), this.#runTtlMs);
    return guard(() => this.#p.replaceEntry(this.#run(record.runId), entry, this.#runTtlMs));
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    const key = this.#run(runId);
    const raw = await guard(() => this.#p.getEntry(key));
    return raw === undefined ? undefined : this.#live(key, raw);
  }

  async deleteRun(runId: string): Promise<void> {
    await guard(async () => {
      await this.#p.deleteEntry(this.#run(runId));
      await this.#p.deleteEntry(this.#stop(runId));
    });
  }

  async requestStop(runId: string, request: StopRequest): Promise<void> {
    const value = JSON.stringify(request);
    await guard(async () => {
      await this.#p.putEntry(this.#stop(runId), value, this.#runTtlMs);
      // The run may have ended since the caller looked: then the request goes too (either this
      // sees the run gone, or the run's deleteRun comes after the request and deletes it).
      if ((await this.#p.getEntry(this.#run(runId))) === undefined) {
        await this.#p.deleteEntryIfSame(this.#stop(runId), value, []);
      }
    });
  }

  async withdrawStop(runId: string, request: StopRequest): Promise<void> {
    const value = JSON.stringify(request);
    await guard(() => this.#p.deleteEntryIfSame(this.#stop(runId), value, []));
  }

  async stopRequest(runId: string): Promise<StopRequest | undefined> {
    const raw = await guard(() => this.#p.getEntry(this.#stop(runId)));
    return raw === undefined ? undefined : decodeStopRequest(raw);
  }

  async listRuns(): Promise<RunRecord[]> {
    const entries = await guard(() => this.#p.entries(this.#run("")));
    const runs = await Promise.all(entries.map(([key, raw]) => this.#live(key, raw)));
    return runs.filter((run): run is RunRecord => run !== undefined);
  }

  /**
   * An expired entry goes with its Stop request (unless rewritten meanwhile); one that does not
   * read (damaged, another format) is skipped and left, so it cannot keep other runs from resuming.
   */
  async #live(key: string, raw: string): Promise<RunRecord | undefined> {
    const entry = decodeRunEntry(raw);
    if (!entry) return undefined;
    if (entry.expiresAt > this.#now()) return entry.record;
    const stop = this.#stop(entry.record.runId);
    await guard(() => this.#p.deleteEntryIfSame(key, raw, [stop]));
    return undefined;
  }

  /** Only those written within the retention. */
  async recentTasks(teamId: string, userId: string, limit: number): Promise<RecentTask[]> {
    const list = await this.getRecord(recentKey(teamId, userId));
    const since = this.#now() - this.#retentionMs;
    const tasks = Array.isArray(list) ? (list as RecentTask[]) : [];
    return tasks.filter((task) => task.updatedAt > since).slice(0, limit);
  }

  async putRecentTask(teamId: string, userId: string, task: RecentTask): Promise<void> {
    await this.#changeRecent(teamId, userId, (list) => {
      const others = list.filter((t) => !sameThread(t, task));
      return [task, ...others].sort((a, b) => b.startedAt - a.startedAt);
    });
  }

  async updateRecentTask(
    teamId: string,
    userId: string,
    thread: { readonly channelId: string; readonly threadTs: string },
    change: (task: RecentTask) => RecentTask,
  ): Promise<void> {
    await this.#changeRecent(teamId, userId, (list) => {
      const at = list.findIndex((t) => sameThread(t, thread));
      const found = list[at];
      if (!found) return undefined;
      return list.map((t, i) => (i === at ? change(found) : t));
    });
  }

  /** Under a shared lock, bounded (empty: deleted); whether it changed. */
  async #changeRecent(
    teamId: string,
    userId: string,
    change: (list: RecentTask[]) => RecentTask[] | undefined,
  ): Promise<boolean> {
    const key = recentKey(teamId, userId);
    return this.#withLock(`lock:${key}`, async () => {
      const list = await this.recentTasks(teamId, userId, RECENT_TASKS_KEPT);
      const next = change(list);
      if (!next) return false;
      if (next.length === 0) await guard(() => this.#keyv.delete(key));
      else await this.#write(key, next.slice(0, RECENT_TASKS_KEPT), this.#retentionMs);
      return true;
    });
  }

  async getDefaults(teamId: string, scope: DefaultsScope): Promise<TaskDefaults | undefined> {
    const stored = await this.getRecord(defaultsKey(teamId, scope));
    return stored && typeof stored === "object" ? (stored as TaskDefaults) : undefined;
  }

  async putDefaults(teamId: string, scope: DefaultsScope, defaults: TaskDefaults): Promise<void> {
    const key = defaultsKey(teamId, scope);
    const set = Object.fromEntries(Object.entries(defaults).filter(([, v]) => v !== undefined));
    if (Object.keys(set).length === 0) await guard(() => this.#keyv.delete(key));
    else await this.#write(key, set, undefined);
  }

  async putRecord(key: string, value: unknown, life: RecordLife = {}): Promise<void> {
    await this.#write(key, value, life.retained === true ? this.#retentionMs : undefined);
  }

  updateRecord(
    key: string,
    change: (current: unknown) => unknown,
    life: RecordLife = {},
  ): Promise<unknown> {
    return this.#withLock(`lock:${key}`, async () => {
      const current = await this.getRecord(key);
      const next = change(current);
      if (next === undefined) return current;
      await this.putRecord(key, next, life);
      return next;
    });
  }

  async deleteRecord(key: string): Promise<void> {
    await guard(() => this.#keyv.delete(key));
  }

  async forgetTeam(teamId: string): Promise<void> {
    await guard(async () => {
      await this.#forgetRuns(teamId, {});
      await this.#p.deletePrefix(this.#claim(teamId, ""));
      await this.#p.deletePrefix(this.#rate(teamId, ""));
      // Locks of its threads and recent tasks (held for a moment; nobody waits on them now).
      await this.#p.deletePrefix(this.#lease(`lock:t:${teamId}:`));
      await this.#p.deleteRecords(`t:${teamId}:`);
    });
  }

  /**
   * A workspace's runs in `scope`, found through the index (keyed by run id), with their Stop
   * requests; then their leases, so a relay finds its lease gone only once its record is gone.
   */
  async #forgetRuns(
    teamId: string,
    scope: { readonly channelId?: string; readonly threadTs?: string },
  ): Promise<void> {
    const runIds: string[] = [];
    for (const [key, raw] of await this.#p.entries(this.#run(""))) {
      const entry = decodeRunEntry(raw);
      if (entry?.record.key.teamId !== teamId || !placeIn(entry.record.key, scope)) continue;
      runIds.push(entry.record.runId);
      await this.#p.deleteEntry(key);
      await this.#p.deleteEntry(this.#stop(entry.record.runId));
    }
    await this.#p.deleteKeys(runIds.map((id) => this.#lease(runLease(id))));
  }

  async forgetThread(key: SlackThreadKey): Promise<ThreadRecord | undefined> {
    const record = await this.getThread(key);
    await guard(() => this.#forgetRuns(key.teamId, key));
    // Deleted even when it does not read (another format's): erased is erased.
    await this.#deleteThread(key);
    if (!record) return undefined;
    await this.#changeRecent(key.teamId, record.ownerUserId, (list) => {
      const kept = list.filter((t) => !sameThread(t, key));
      return kept.length === list.length ? undefined : kept;
    });
    return record;
  }

  /** Under its lock, so that no update under way writes it back. */
  async #deleteThread(key: SlackThreadKey): Promise<void> {
    const k = threadKey(key);
    await this.#withLock(`lock:${k}`, () => guard(() => this.#keyv.delete(k)));
  }

  async forgetChannel(teamId: string, channelId: string): Promise<string[]> {
    await guard(async () => {
      await this.#forgetRuns(teamId, { channelId });
      await this.#p.deleteRecords(threadsOf(teamId, channelId));
      await this.#p.deletePrefix(this.#lease(`lock:${threadsOf(teamId, channelId)}`));
      await this.#keyv.delete(defaultsKey(teamId, { kind: "channel", channelId }));
    });
    // Every person's recent tasks are one record each: the tasks of the channel go from each.
    const changed: string[] = [];
    for (const key of await this.recordKeys(recentsOf(teamId))) {
      const userId = key.slice(recentsOf(teamId).length);
      const dropped = await this.#changeRecent(teamId, userId, (list) => {
        const kept = list.filter((t) => t.channelId !== channelId);
        return kept.length === list.length ? undefined : kept;
      });
      if (dropped) changed.push(userId);
    }
    return changed;
  }

  async forgetPerson(teamId: string, userId: string): Promise<PersonForgotten> {
    let threads = 0;
    let queuedReplies = 0;
    for (const key of await this.recordKeys(threadsOf(teamId))) {
      const thread = threadOfKey(teamId, key);
      const record = thread && (await this.getThread(thread));
      if (!thread || !record) continue;
      if (record.ownerUserId === userId) {
        await this.#deleteThread(thread);
        threads += 1;
        continue;
      }
      await this.updateThread(thread, (current) => {
        const queue = current.queue.filter((reply) => reply.userId !== userId);
        if (queue.length === current.queue.length) return undefined;
        queuedReplies += current.queue.length - queue.length;
        return { ...current, queue };
      });
    }
    const recentTasks = (await this.recentTasks(teamId, userId, RECENT_TASKS_KEPT)).length;
    const personal = defaultsKey(teamId, { kind: "user", userId });
    const defaults = (await this.getRecord(personal)) !== undefined;
    await guard(async () => {
      await this.#keyv.delete(recentKey(teamId, userId));
      await this.#keyv.delete(personal);
    });
    return { threads, queuedReplies, recentTasks, defaults };
  }

  async forgetPeople(teamId: string): Promise<void> {
    await guard(async () => {
      await this.#forgetRuns(teamId, {});
      await this.#p.deleteRecords(threadsOf(teamId));
      await this.#p.deleteRecords(recentsOf(teamId));
      await this.#p.deleteRecords(`t:${teamId}:defaults:user:`);
      await this.#p.deletePrefix(this.#lease(`lock:${threadsOf(teamId)}`));
      await this.#p.deletePrefix(this.#lease(`lock:${recentsOf(teamId)}`));
    });
  }

  recordKeys(prefix: string): Promise<string[]> {
    return guard(() => this.#p.recordKeys(prefix));
  }

  ping(): Promise<boolean> {
    return this.#p.ping().catch(() => false);
  }

  close(): Promise<void> {
    return this.#p.close();
  }
}
