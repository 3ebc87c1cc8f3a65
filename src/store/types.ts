/** The store's records (threads, unfinished runs, people's tasks and defaults) and its boundary. */
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

/** A start's channel, and its thread once the prompt (its root) is posted. */
const StartPlace = SlackThreadKey.extend({ threadTs: z.string().optional() });
export type StartPlace = z.infer<typeof StartPlace>;

/** A file a person attached in Slack, as Slack described it (kept while its message waits). */
export interface SlackFileRef {
  readonly id: string;
  readonly name: string;
  readonly size?: number | undefined; // bytes
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
  readonly ts: string;
  readonly files?: readonly SlackFileRef[];
  /** Inline options a continuation cannot apply (named in the run's remark). */
  readonly ignoredOptions?: readonly string[];
}

/**
 * Who asked a run to stop, stored once per run for every instance: a person, the app (saying
 * why, e.g. its maximum run time), or nobody because its records are forgotten (ends silently).
 */
export const StopRequest = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("person"), userId: z.string() }),
  z.object({ kind: z.literal("app"), reason: z.string() }),
  z.object({ kind: z.literal("forgotten") }),
]);
export type StopRequest = z.infer<typeof StopRequest>;
export type PersonStop = Extract<StopRequest, { kind: "person" }>;

export const personStop = (userId: string): PersonStop => ({ kind: "person", userId });

/** What a task thread is doing. */
export type ThreadActivity =
  | { readonly kind: "idle" }
  /**
   * A run being created, no id yet (an instance that dies now leaves it; cleared after a while).
   * `replyTs`: the reply it answers (none for a first run); `messageTs`: its message, once posted.
   */
  | {
      readonly kind: "starting";
      readonly since: number; // ms since the epoch
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
  /** Absent until the service created the task. */
  readonly service?: ServiceThreadRef;
  /** Only they (or an admin) may stop its runs. */
  readonly ownerUserId: string;
  readonly active: ThreadActivity;
  readonly lastRunId: string | undefined;
  readonly queue: readonly QueuedFollowUp[];
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * A Workflow Builder step ("Run a task") waiting for its run: its execution, and the token that
 * completes it (`bot_access_token` of `function_executed`; sealed with an encryption key).
 */
const WorkflowStep = z.object({ executionId: z.string(), token: z.string() });
export type WorkflowStep = z.infer<typeof WorkflowStep>;

/** A run's opening messages, enough for another instance to post what is missing. */
const RunOpening = z.object({
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
  replyTs: z.string().optional(),
  step: WorkflowStep.optional(),
});
export type RunOpening = z.infer<typeof RunOpening>;

declare const serviceRunBrand: unique symbol;
declare const reservationBrand: unique symbol;

/** A run on the task service: its `agent_run_id`. Never a reservation's id. */
export type ServiceRunId = string & { readonly [serviceRunBrand]: true };

/** A start being made (`reserved:<team>:<channel>:<uuid>`), before the service's run is shown. */
export type ReservationId = string & { readonly [reservationBrand]: true };

export const serviceRunId = (id: string): ServiceRunId => id as ServiceRunId;
export const reservationId = (id: string): ReservationId => id as ReservationId;

/** What every unfinished run's record holds, whatever its state. */
const runRecordBase = {
  /** The bot messages showing the run, in order (long answers span several). */
  messageTs: z.array(z.string()).readonly(),
  startedAt: z.number(),
  /** What of the request was not sent, and why (shown under the answer). */
  remark: z.string().optional(),
  /** Who asked (native streams are addressed to them). */
  owner: z.string().optional(),
  /**
   * Instances that began relaying the run and never handed it over: at a takeover, those that
   * died relaying it. Past a few the run is quarantined (it must not go round killing them all).
   */
  openRelays: z.number().int().min(0).optional(),
  /** Its relay began ending it (result, files, pictures): a death now quarantines it sooner. */
  finishing: z.boolean().optional(),
  /** Whoever ends the run ends the step. */
  step: WorkflowStep.optional(),
  /** The W3C `traceparent` of the request that started the run: a takeover continues its trace. */
  traceparent: z.string().max(64).optional(),
};

/**
 * A start recorded before the service answered and its messages exist, so another instance can
 * finish it if this one dies (or end it as interrupted). `messageTs` is empty until then.
 */
const ReservedRun = z.object({
  kind: z.literal("reserved"),
  runId: z.string().transform(reservationId),
  key: StartPlace,
  opening: RunOpening,
  /** The service's run, once it answered. */
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
  /** `started`: an upload under way, maybe partly done. */
  uploads: z.enum(["pending", "started", "done"]),
  /** A native-streaming run's "working…" message, removed once the answer is final. */
  controlTs: z.string().optional(),
  /**
   * The first `messages` of `messageTs` a rotated native stream left (never edited again),
   * showing the answer's first `chars` characters; a new owner edits only the others.
   */
  sealed: z
    .object({ messages: z.number().int().min(0), chars: z.number().int().min(0) })
    .optional(),
  ...runRecordBase,
});
export type RelayedRun = z.infer<typeof RelayedRun>;

/** An unfinished run: being started, or shown. Made only by runs/record.ts. */
export const RunRecord = z.discriminatedUnion("kind", [ReservedRun, RelayedRun]);
export type RunRecord = z.infer<typeof RunRecord>;

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
  /** A short excerpt, as typed. */
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

/** Per person; the oldest are dropped. */
export const RECENT_TASKS_KEPT = 50;

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
  /** Atomic across instances (a short lock per key); `change` answers undefined to leave it. */
  updateRecord(
    key: string,
    change: (current: unknown) => unknown,
    life?: RecordLife,
  ): Promise<unknown>;
  deleteRecord(key: string): Promise<void>;
  /** The keys of every record starting with `prefix` (e.g. `t:` for all workspaces'); a scan. */
  recordKeys(prefix: string): Promise<string[]>;
}

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
      /** The limit that keeps the request out longest, and how long (≥ 1). */
      readonly refusedBy: string;
      readonly retryAfterMs: number;
    };

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
  /** One request counted in all `limits` atomically across instances, or in none. */
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
  /** Only while still recorded: false when gone (forgotten), so a relay never brings it back. */
  updateRun(record: RunRecord): Promise<boolean>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  deleteRun(runId: string): Promise<void>;
  listRuns(): Promise<RunRecord[]>;
  /** Records who asked a run to stop, for the instance that relays it. */
  requestStop(runId: string, request: StopRequest): Promise<void>;
  /** Takes back `request` (the service refused the stop); another's stays. */
  withdrawStop(runId: string, request: StopRequest): Promise<void>;
  stopRequest(runId: string): Promise<StopRequest | undefined>;
  /** Replaces the same thread's; newest first. */
  putRecentTask(teamId: string, userId: string, task: RecentTask): Promise<void>;
  /** Nothing when it is not (or no longer) there. */
  updateRecentTask(
    teamId: string,
    userId: string,
    thread: { readonly channelId: string; readonly threadTs: string },
    change: (task: RecentTask) => RecentTask,
  ): Promise<void>;
  recentTasks(teamId: string, userId: string, limit: number): Promise<RecentTask[]>;
  getDefaults(teamId: string, scope: DefaultsScope): Promise<TaskDefaults | undefined>;
  /** Empty defaults are removed. */
  putDefaults(teamId: string, scope: DefaultsScope, defaults: TaskDefaults): Promise<void>;
  /**
   * An uninstalled workspace: every `t:<team>:` record (threads, recent tasks, defaults,
   * installation, keys…), its claims, rate counts, locks, and runs with their Stops and leases.
   */
  forgetTeam(teamId: string): Promise<void>;
  /** A thread whose root was deleted: its record, runs (with Stops, leases), recent-task entry. */
  forgetThread(key: SlackThreadKey): Promise<ThreadRecord | undefined>;
  /** Forgets a deleted channel: its threads, runs, defaults and recent tasks; whose tasks changed. */
  forgetChannel(teamId: string, channelId: string): Promise<string[]>;
  /** Erases a person's threads, replies queued in others', recent tasks and defaults; runs go on. */
  forgetPerson(teamId: string, userId: string): Promise<PersonForgotten>;
  /**
   * An admin's erase of what people left: threads, recent tasks, personal defaults, runs (with
   * Stops, leases). Kept: settings, channel defaults, the audit trail, claims and rate counts.
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
