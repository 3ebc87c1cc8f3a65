/**
 * The store's records and its boundary: Slack threads and their service conversations, the
 * index of unfinished runs, the atomic primitives instances share, people's tasks and defaults.
 * The run index's records are zod schemas (an entry is checked as it is read, run-index.ts).
 */
import { z } from "zod";

/** The service's conversation a Slack thread maps to (the client's ThreadRef). */
export const ServiceThreadRef = z.object({ projectId: z.string(), threadId: z.string() });
export type ServiceThreadRef = z.infer<typeof ServiceThreadRef>;

export const SlackThreadKey = z.object({
  teamId: z.string(),
  channelId: z.string(),
  threadTs: z.string(),
});
export type SlackThreadKey = z.infer<typeof SlackThreadKey>;

/** Where a start's messages go: its channel, and its thread once the prompt (its root) is posted. */
const StartPlace = SlackThreadKey.extend({ threadTs: z.string().optional() });
export type StartPlace = z.infer<typeof StartPlace>;

/** A file a person attached in Slack, as Slack described it (kept while its message waits). */
export interface SlackFileRef {
  readonly id: string;
  readonly name: string;
  /** Bytes, when Slack said. */
  readonly size?: number | undefined;
  readonly mimetype?: string | undefined;
  /** `url_private_download`: readable with the bot token from Slack's file host only. */
  readonly url?: string | undefined;
  /** Slack's file mode (`hosted`, `snippet`, `external`, `tombstone`, `hidden_by_limit`…). */
  readonly mode?: string | undefined;
}

/** A follow-up typed while a run was in progress, waiting for its turn. */
export interface QueuedFollowUp {
  readonly userId: string;
  readonly text: string;
  /** The Slack message that carried it. */
  readonly ts: string;
  /** The files it carried, read from Slack when it is sent. */
  readonly files?: readonly SlackFileRef[];
  /** Inline options the person gave that a continuation cannot apply (named in the run's remark). */
  readonly ignoredOptions?: readonly string[];
}

/**
 * Who asked a run to stop, stored once per run for every instance (and held by its fate while
 * it is relayed, runs/fate.ts): a person who pressed Stop, the app itself (saying why, e.g. its
 * maximum run time), or nobody because its records are forgotten (it ends without a word).
 */
export const StopRequest = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("person"), userId: z.string() }),
  z.object({ kind: z.literal("app"), reason: z.string() }),
  z.object({ kind: z.literal("forgotten") }),
]);
export type StopRequest = z.infer<typeof StopRequest>;
export type PersonStop = Extract<StopRequest, { kind: "person" }>;

export const personStop = (userId: string): PersonStop => ({ kind: "person", userId });

/** What a task thread is doing (the states are spelled out: a run id is only ever a run id). */
export type ThreadActivity =
  /** Nothing runs: a reply starts a run at once. */
  | { readonly kind: "idle" }
  /**
   * A run being created, no id yet (left behind by an instance that dies now; cleared after a
   * while). `replyTs`: the reply it answers (none for a task's first run); `messageTs`: the bot
   * message that will show it, once posted.
   */
  | {
      readonly kind: "starting";
      /** When it began (ms since the epoch). */
      readonly since: number;
      readonly replyTs?: string;
      readonly messageTs?: string;
      /** A Stop pressed meanwhile (Slack's own Stop): it is stopped once it runs. */
      readonly stop?: PersonStop;
    }
  | { readonly kind: "running"; readonly runId: string; readonly messageTs: string };

export const IDLE: ThreadActivity = { kind: "idle" };

export interface ThreadRecord extends SlackThreadKey {
  /** Where the task started: a channel, or a direct message (where Slack's agent view lives). */
  readonly surface: "channel" | "dm";
  /** The service's conversation; absent until the service created the task. */
  readonly service?: ServiceThreadRef;
  /** Who started the task; only they (or an admin) may stop it. */
  readonly ownerUserId: string;
  readonly active: ThreadActivity;
  readonly lastRunId: string | undefined;
  readonly queue: readonly QueuedFollowUp[];
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * A Workflow Builder step ("Run a task") waiting for its run: Slack's execution of it, and the
 * token Slack gave for it (`bot_access_token` of `function_executed`), which completes it. The
 * token is kept sealed when the app has an encryption key (slack/workflow-steps.ts).
 */
const WorkflowStep = z.object({ executionId: z.string(), token: z.string() });
export type WorkflowStep = z.infer<typeof WorkflowStep>;

/**
 * The Slack messages that open a run, posted while the service already works on it: enough
 * for another instance to post what is missing if the one posting them dies.
 */
const RunOpening = z.object({
  /** Who asked. */
  userId: z.string(),
  /** A task started by a command: its prompt, posted as the thread's parent. */
  prompt: z.object({ text: z.string(), fileNames: z.array(z.string()) }).optional(),
  /** The remark under the answer (what of a follow-up was not sent). */
  remark: z.string().optional(),
  surface: z.enum(["channel", "dm"]),
  /** A direct-message task's title in Slack's agent view. */
  title: z.string().optional(),
  /** When the request arrived (ms since the epoch): its messages keep that place in line. */
  since: z.number(),
  /** A follow-up: the reply the run answers. */
  replyTs: z.string().optional(),
  /** A Workflow Builder step asked for it: the step ends when the run ends. */
  step: WorkflowStep.optional(),
});
export type RunOpening = z.infer<typeof RunOpening>;

declare const serviceRunBrand: unique symbol;
declare const reservationBrand: unique symbol;

/** A run on the task service: its `agent_run_id`. Never a reservation's id. */
export type ServiceRunId = string & { readonly [serviceRunBrand]: true };

/** A start being made (`reserved:<team>:<channel>:<uuid>`), before the service's run is shown. */
export type ReservationId = string & { readonly [reservationBrand]: true };

/** As the service named it (its answers are checked by zod already). */
export const serviceRunId = (id: string): ServiceRunId => id as ServiceRunId;

/** As this app made it (runs/relay.ts) or the store kept it. */
export const reservationId = (id: string): ReservationId => id as ReservationId;

/** What every unfinished run's record holds, whatever its state. */
const runRecordBase = {
  /** The bot messages showing the run, in order (long answers span several). */
  messageTs: z.array(z.string()).readonly(),
  startedAt: z.number(),
  /** The remark shown under the answer (what of the request was not sent, and why). */
  remark: z.string().optional(),
  /** Who asked (native streams are addressed to them). */
  owner: z.string().optional(),
  /**
   * Instances that began relaying the run and never let it go: each takes one when it begins
   * and gives it back when it hands the run over. What is left when an instance takes the run
   * over are the ones that died relaying it: past a few, the run is quarantined instead of
   * relayed (a run that kills its instances must not go round them all).
   */
  openRelays: z.number().int().min(0).optional(),
  /**
   * Set once its relay began to end it (the final result, its files, their pictures: the
   * heavy steps): an instance that died then most likely died of this run, so it is
   * quarantined sooner.
   */
  finishing: z.boolean().optional(),
  /** The Workflow Builder step that asked for the run: whoever ends the run ends the step. */
  step: WorkflowStep.optional(),
  /** The W3C `traceparent` of the request that started the run: a takeover continues its trace. */
  traceparent: z.string().max(64).optional(),
};

/**
 * A task (or follow-up) being started: recorded before the service answered and before its
 * messages may exist, so another instance can finish the start if this one dies (relay.ts):
 * post what is missing and follow the service's run, or, when the service never answered,
 * end the message as interrupted. `messageTs` is empty until the opening's messages exist.
 */
const ReservedRun = z.object({
  kind: z.literal("reserved"),
  runId: z.string().transform(reservationId),
  key: StartPlace,
  opening: RunOpening,
  /** The service's run, once it answered, so that it is not lost. */
  created: z
    .object({ ref: ServiceThreadRef, runId: z.string().transform(serviceRunId) })
    .optional(),
  ...runRecordBase,
});
export type ReservedRun = z.infer<typeof ReservedRun>;

/** A service run shown in Slack: everything an instance needs to finish it in the same messages. */
const RelayedRun = z.object({
  kind: z.literal("relaying"),
  runId: z.string().transform(serviceRunId),
  key: SlackThreadKey,
  ref: ServiceThreadRef,
  /** The text already shown, so a new owner neither repeats nor loses any. */
  shownText: z.string(),
  /** Files: not yet uploaded, upload under way (may have partly happened), or uploaded. */
  uploads: z.enum(["pending", "started", "done"]),
  /** A native-streaming run's "working…" message, removed once the answer is final. */
  controlTs: z.string().optional(),
  /**
   * The first `messages` of `messageTs` are sealed: stream messages a rotated native stream
   * left (stopped, never edited again), showing the answer's first `chars` characters. The
   * others show the rest; a new owner edits only those.
   */
  sealed: z
    .object({ messages: z.number().int().min(0), chars: z.number().int().min(0) })
    .optional(),
  ...runRecordBase,
});
export type RelayedRun = z.infer<typeof RelayedRun>;

/**
 * An unfinished run, by its state: being started (`reserved`), or shown (`relaying`). Made only
 * by runs/record.ts, from the run's life there; a thread's `running` activity points at one.
 */
export const RunRecord = z.discriminatedUnion("kind", [ReservedRun, RelayedRun]);
export type RunRecord = z.infer<typeof RunRecord>;

/** What a relayed run writes as it goes (the rest of its record does not change). */
export type RelayedRunProgress = Partial<
  Pick<RelayedRun, "shownText" | "uploads" | "controlTs" | "sealed" | "openRelays" | "finishing">
>;

/** The store could not be reached (Redis down, disk error): answer "temporarily unavailable". */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the store is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = "StoreUnavailableError";
  }
}

/** A run's state as people see it (run messages, App Home, the completion record). */
export type RunState = "running" | "completed" | "failed" | "stopped" | "error";

/** One task in a person's recent tasks (their App Home lists the latest). */
export interface RecentTask {
  readonly channelId: string;
  readonly threadTs: string;
  /** The start of the prompt (a short excerpt, as typed). */
  readonly prompt: string;
  readonly status: RunState;
  readonly startedAt: number;
  readonly updatedAt: number;
  readonly surface?: "channel" | "dm";
}

/** Default task options (a person's own, or a channel's); the same fields as inline options. */
export interface TaskDefaults {
  readonly model?: string;
  readonly agent?: string;
  readonly effort?: "low" | "medium" | "high";
  readonly thinking?: boolean;
}

export type DefaultsScope =
  | { readonly kind: "user"; readonly userId: string }
  | { readonly kind: "channel"; readonly channelId: string };

/** At most this many recent tasks are kept per person (the oldest are dropped). */
export const RECENT_TASKS_KEPT = 50;

/** People's recent tasks and default options, per workspace. */
export type PreferenceStore = Pick<
  ThreadStore,
  "putRecentTask" | "updateRecentTask" | "recentTasks" | "getDefaults" | "putDefaults"
>;

/** Kept until deleted (a setting), or `retained` for the store's retention (what people did). */
export interface RecordLife {
  readonly retained?: boolean;
}

/** Plain JSON records by key beside the threads (`t:<team id>:…` for a workspace's). */
export interface RecordStore {
  /** The record; `OTHER_FORMAT` (record-format.ts) when of another format. */
  getRecord(key: string): Promise<unknown>;
  putRecord(key: string, value: unknown, life?: RecordLife): Promise<void>;
  /**
   * Read-modify-write, atomic across instances (a short lock per key): `change` returns the new
   * record, or undefined to leave it. Resolves with what the record holds afterwards.
   */
  updateRecord(
    key: string,
    change: (current: unknown) => unknown,
    life?: RecordLife,
  ): Promise<unknown>;
  deleteRecord(key: string): Promise<void>;
  /** The keys of every record starting with `prefix` (e.g. `t:` for all workspaces'); a scan. */
  recordKeys(prefix: string): Promise<string[]>;
}

/** What erasing a person's records removed: their threads, replies queued in others', tasks. */
export interface PersonForgotten {
  readonly threads: number;
  readonly queuedReplies: number;
  readonly recentTasks: number;
  readonly defaults: boolean;
}

/** At most `limit` (≥ 1) times in any window, counted per `name` (`user:U1`) in each workspace. */
export interface RateLimit {
  readonly name: string;
  readonly limit: number;
}

export type RateDecision =
  | { readonly allowed: true }
  | {
      readonly allowed: false;
      /** The limit that keeps the request out longest (its name). */
      readonly refusedBy: string;
      /** How long until that limit has room again (≥ 1). */
      readonly retryAfterMs: number;
    };

/** The store boundary. */
export interface ThreadStore extends RecordStore {
  getThread(key: SlackThreadKey): Promise<ThreadRecord | undefined>;
  putThread(record: ThreadRecord): Promise<void>;
  /** Read-modify-write, atomic like `updateRecord`. */
  updateThread(
    key: SlackThreadKey,
    change: (current: ThreadRecord) => ThreadRecord | undefined,
  ): Promise<ThreadRecord | undefined>;
  /** True for the first caller only, for `ttlMs` (event and command dedupe). */
  claimOnce(teamId: string, name: string, ttlMs: number): Promise<boolean>;
  /** Forgets a claim, so the next `claimOnce` of it wins again (e.g. a Stop that failed). */
  releaseClaim(teamId: string, name: string): Promise<void>;
  /**
   * Counts one request against each of a workspace's `limits` atomically, across instances: a
   * sliding window (rate-window.ts); allowed and counted in all, or refused and counted in none.
   */
  consumeRate(
    teamId: string,
    limits: readonly RateLimit[],
    windowMs: number,
    now: number,
  ): Promise<RateDecision>;
  acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Extends one's own lease; false when it was lost (expired and maybe taken). */
  renewLease(name: string, owner: string, ttlMs: number): Promise<boolean>;
  releaseLease(name: string, owner: string): Promise<void>;
  putRun(record: RunRecord): Promise<void>;
  /**
   * Rewrites a run's record only while it is still recorded: false when it is gone (its
   * workspace was forgotten), so a run relayed elsewhere never brings it back.
   */
  updateRun(record: RunRecord): Promise<boolean>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  deleteRun(runId: string): Promise<void>;
  listRuns(): Promise<RunRecord[]>;
  /** Records who asked a run to stop, for the instance that relays it. */
  requestStop(runId: string, request: StopRequest): Promise<void>;
  /** Takes back `request` (the service refused the stop); another's stays. */
  withdrawStop(runId: string, request: StopRequest): Promise<void>;
  stopRequest(runId: string): Promise<StopRequest | undefined>;
  /** Adds a task to its owner's recent tasks (replacing the same thread's), newest first. */
  putRecentTask(teamId: string, userId: string, task: RecentTask): Promise<void>;
  /** Changes one of a person's recent tasks; nothing when it is not (or no longer) there. */
  updateRecentTask(
    teamId: string,
    userId: string,
    thread: { readonly channelId: string; readonly threadTs: string },
    change: (task: RecentTask) => RecentTask,
  ): Promise<void>;
  /** A person's latest tasks, newest first. */
  recentTasks(teamId: string, userId: string, limit: number): Promise<RecentTask[]>;
  getDefaults(teamId: string, scope: DefaultsScope): Promise<TaskDefaults | undefined>;
  /** Replaces the defaults; empty defaults are removed. */
  putDefaults(teamId: string, scope: DefaultsScope, defaults: TaskDefaults): Promise<void>;
  /**
   * Deletes every record of a workspace (the app was uninstalled there): every `t:<team>:`
   * record (threads, recent tasks, defaults, installation, keys…), its claims, rate counts and
   * locks, and its runs with their Stop requests and leases. Other workspaces keep theirs.
   */
  forgetTeam(teamId: string): Promise<void>;
  /**
   * Forgets one task thread (its root message was deleted in Slack): its record with its queued
   * replies, its runs (with their Stop requests and leases) and its entry in its owner's recent
   * tasks. The record it deleted, or undefined when there was none.
   */
  forgetThread(key: SlackThreadKey): Promise<ThreadRecord | undefined>;
  /** Forgets a deleted channel: its threads, runs, defaults and recent tasks; whose tasks changed. */
  forgetChannel(teamId: string, channelId: string): Promise<string[]>;
  /** Erases a person's threads, replies queued in others', recent tasks and defaults; runs go on. */
  forgetPerson(teamId: string, userId: string): Promise<PersonForgotten>;
  /**
   * Erases what a workspace's people left (an admin asked): every thread record, recent tasks,
   * personal defaults, and its runs with their Stop requests and leases. Kept: the workspace's
   * settings (installation, service key, usage policy, channel defaults), its audit trail and
   * other records beside them, its claims and rate counts (which lapse by themselves).
   */
  forgetPeople(teamId: string): Promise<void>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** The part of the store the relay needs for one run: its record, its lease, Stop requests. */
export type RunStore = Pick<
  ThreadStore,
  | "putRun"
  | "updateRun"
  | "getRun"
  | "deleteRun"
  | "listRuns"
  | "acquireLease"
  | "renewLease"
  | "releaseLease"
  | "requestStop"
  | "withdrawStop"
  | "stopRequest"
>;
