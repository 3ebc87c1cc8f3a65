/**
 * The ports of runs (and of the threads above them): what showing a run needs from the outside
 * (Slack, the task service, the store, time), declared here so that those sides depend on these
 * needs and not the other way round. Implementations satisfy these structurally: the WebClient
 * writer in src/slack/, the service client in src/service/, the stores in src/store/. What only
 * threads need (attachments, App Home, thread history) is in src/threads/ports.ts.
 */
import type { TaskService, ThreadRef } from "../service/client.ts";
import type {
  PersonStop,
  PreferenceStore,
  RunOpening,
  RunState,
  RunStore,
  RelayedRun,
  SlackFileRef,
  SlackThreadKey,
  ThreadStore,
  WorkflowStep,
} from "../store/types.ts";
import type { MessagePayload } from "../view/render.ts";

export type { TaskService, ThreadRef };
export type { PreferenceStore, RunStore, SlackFileRef, ThreadStore, WorkflowStep };

export type { Clock } from "../util/clock.ts";
export { systemClock } from "../util/clock.ts";

/**
 * Each workspace's own way out: its Slack writer (its bot token, its share of Slack's rate
 * budget) and the task service as its account (its API key). With one workspace both answer
 * the same for every team; with many (OAuth) each team gets its installation's token and its
 * own key, so nothing done for one workspace ever runs with another's credentials.
 */
export interface Workspaces {
  writer(teamId: string): SlackWriter;
  service(teamId: string): TaskService;
}

/**
 * The threads above, told that a run runs: a start (runs/start.ts) reports it, and the thread
 * layer writes its own record (threads/running.ts). runs/ never writes a thread's record.
 */
export interface RunningThreads {
  /**
   * The service's run `record` (as runs/record.ts makes it) now runs in its thread, opened as
   * `plan` says. Resolves to the Stop pressed while it was starting, if one was.
   */
  running(record: RelayedRun, plan: RunOpening): Promise<PersonStop | undefined>;
}

/** A file to upload into a thread. */
export interface UploadItem {
  readonly filename: string;
  readonly bytes: Buffer;
  readonly title?: string;
}

/** One file of a run as a generated web page may load it: its path in the run's workspace. */
export interface SiteFile {
  /** e.g. `/workspace/output/index.html` (the file's name when the service gave no path). */
  readonly path: string;
  /** Its bytes, read when first asked for (empty when they cannot be had within the budget). */
  read(): Promise<Buffer>;
  /** Its media type as the service said, if it did. */
  readonly type?: string | undefined;
}

/**
 * Pictures of the web pages a run generated (a headless browser), to upload beside them. The
 * pages may load only the run's own files; anything else they ask for is refused.
 */
export interface PagePreviews {
  /** Images of the HTML files among `files` (at most a few per run); [] when none. Never rejects. */
  render(files: readonly SiteFile[]): Promise<UploadItem[]>;
}

/** Where a post goes in the queue of posts waiting for Slack's budget. */
export interface PostOrder {
  /** When the request it answers arrived (ms since the epoch): earlier goes first. */
  readonly since: number;
}

export interface SlackWriter {
  /**
   * Posts a message (into a thread when `threadTs` is set) and returns its ts. `order.since`
   * places it in the posting queue as if it had waited since then (a task's messages keep the
   * place of the command that asked for them: first come, first served).
   */
  post(
    channelId: string,
    payload: MessagePayload,
    threadTs?: string,
    order?: PostOrder,
  ): Promise<string>;
  /**
   * Edits a message; `final` marks the last edit of a run (served first). The writer, not the
   * caller, decides when an edit goes out: the relay calls this as often as its text changes,
   * and the writer keeps only the latest edit of each message while one waits for Slack's
   * budget (the waiting one resolves unsent), at most one interim edit per message per
   * interval. A function payload is rendered when the edit is sent, so it shows the latest
   * text; it returns undefined when there is nothing new to show (no call is made). A writer
   * without a scheduler must coalesce the same way or it floods Slack with edits.
   */
  update(
    channelId: string,
    ts: string,
    payload: MessagePayload | (() => MessagePayload | undefined),
    options?: { final?: boolean },
  ): Promise<void>;
  /** Deletes a message; its edits still waiting for the budget are dropped unsent. */
  remove(channelId: string, ts: string): Promise<void>;
  ephemeral(channelId: string, userId: string, text: string, threadTs?: string): Promise<void>;
  react(channelId: string, ts: string, name: string): Promise<void>;
  unreact(channelId: string, ts: string, name: string): Promise<void>;
  /** Uploads files into a thread, several per call. */
  upload(channelId: string, threadTs: string, files: readonly UploadItem[]): Promise<void>;
  /**
   * Starts a native Slack stream in a thread (`chat.startStream`); returns the message ts.
   * `display` is how Slack shows the steps appended to it (`task_display_mode`).
   */
  startStream(
    channelId: string,
    threadTs: string,
    recipient: { userId: string; teamId: string },
    markdown: string,
    display?: TaskDisplay,
  ): Promise<string>;
  /**
   * Appends Markdown to a native stream (`chat.appendStream`), and the agent's steps as Slack
   * task updates (shown as a collapsible plan above the answer) when given.
   */
  appendStream(
    channelId: string,
    ts: string,
    markdown: string,
    steps?: readonly StreamStep[],
  ): Promise<void>;
  /**
   * Ends a native stream (`chat.stopStream`); the message can then be edited like any other.
   * `end` adds blocks below what was streamed (a run's status and buttons) and metadata.
   */
  stopStream(channelId: string, ts: string, end?: StreamEnd): Promise<void>;
  /**
   * The workspace's budget of native streams, where the writer spends Slack's budgets (its
   * scheduler): auto streaming starts a stream only when it allows. Absent: auto edits.
   */
  readonly streams?: StreamBudget;
  /**
   * Names of the files shared in a thread at or after `sinceTs` (a run's first message),
   * so a resumed run uploads nothing twice.
   */
  sharedFileNames(channelId: string, threadTs: string, sinceTs?: string): Promise<Set<string>>;
  /**
   * The status line under a thread of Slack's agent view ("is working on it…", with rotating
   * loading messages); "" clears it. Slack clears it too when the app posts in the thread.
   */
  setStatus(
    channelId: string,
    threadTs: string,
    status: string,
    loadingMessages?: readonly string[],
  ): Promise<void>;
  /** The title of a DM thread in Slack's agent view (its history lists threads by title). */
  setTitle(channelId: string, threadTs: string, title: string): Promise<void>;
  /**
   * The agent session of a thread (Slack's agent sessions API): `processing` while a run
   * works (Slack then shows its own Stop, which sends `agent_session_stopped`), `active`
   * between runs. A no-op where the workspace does not have the API.
   */
  setSessionStatus(
    channelId: string,
    threadTs: string,
    status: "processing" | "active",
    title?: string,
  ): Promise<void>;
  /** Joins a public channel so the bot can post there and hear replies; false if it cannot. */
  join(channelId: string): Promise<boolean>;
  /** Whether a user is a workspace admin or owner. */
  isAdmin(userId: string): Promise<boolean>;
  /** Who a person is, for the app's policy (undefined when Slack cannot say). */
  person(userId: string): Promise<Person | undefined>;
}

/**
 * Slack's budget of native streams in a workspace: `chat.startStream` and `chat.stopStream` are
 * Tier 2 (about 20 a minute each), while `chat.appendStream` is Tier 4 and `chat.update` Tier 3.
 */
export interface StreamBudget {
  /**
   * A run's first lines are ready (auto streaming): starts a native stream (as `startStream`)
   * if streaming shows the run fresher than edits would (the edit budget is shared, the stream
   * budgets less so), a start can go at once (nobody waiting before it) and the stops waiting
   * go soon. Otherwise nothing is spent and it resolves undefined: the run edits.
   */
  tryStart: StartStream;
  /**
   * A streaming run's next stream message (its rotation): started if a start can go at once
   * and the stops waiting go soon; otherwise nothing is spent and it resolves undefined.
   */
  tryNext: StartStream;
}

type StartStream = (
  channelId: string,
  threadTs: string,
  recipient: { userId: string; teamId: string },
  markdown: string,
  display?: TaskDisplay,
) => Promise<string | undefined>;

/**
 * How the agent's steps show above its answer (Slack's `task_display_mode` of a stream): one
 * plan block listing them (`plan`), or each step a card of its own in order (`timeline`).
 */
export type TaskDisplay = "plan" | "timeline";

/** What a stream's stop adds to its message: blocks at its end, and metadata. */
export type StreamEnd = Pick<MessagePayload, "blocks" | "metadata">;

/** One step of the agent's work, as a Slack `task_update` stream chunk shows it. */
export interface StreamStep {
  readonly id: string;
  readonly title: string;
  readonly status: "in_progress" | "complete";
}

/** What the app's policy needs to know of a person (from `users.info`). */
export interface Person {
  /** Their home workspace: another one for a Slack Connect (external) person. */
  readonly teamId: string | undefined;
  /** A guest account (`is_restricted` or `is_ultra_restricted`). */
  readonly guest: boolean;
  readonly deleted: boolean;
}

/**
 * How a task a Workflow Builder step asked for ended, for the step: its state, its answer, why
 * it did not complete (as its thread says), its files, and its thread (absent when nothing was
 * posted, e.g. a refusal).
 */
export interface StepResult {
  readonly state: RunState;
  readonly answer: string;
  readonly reason?: string | undefined;
  /** Who pressed Stop, for a stopped run. */
  readonly stoppedBy?: string | undefined;
  /** The names of the files the run generated. */
  readonly files: readonly string[];
  readonly thread?: SlackThreadKey | undefined;
}

/**
 * Ends Workflow Builder steps (Slack's `functions.completeSuccess` / `functions.completeError`),
 * each once whatever instance asks and however often. Never rejects.
 */
export interface WorkflowSteps {
  end(teamId: string, step: WorkflowStep, result: StepResult): Promise<void>;
}
