/** What runs need from Slack, the service, the store and time, met structurally from outside. */
import type { TaskService, ThreadRef } from "../service/client.ts";
import type {
  PersonStop,
  PreferenceStore,
  RunOpening,
  RunStore,
  RelayedRun,
  SlackFileRef,
  SlackThreadKey,
  ThreadStore,
  WorkflowStep,
} from "../store/types.ts";
import type { StepEnding } from "../view/completion.ts";
import type { MessagePayload } from "../view/render.ts";

export type { TaskService, ThreadRef };
export type { PreferenceStore, RunStore, SlackFileRef, ThreadStore, WorkflowStep };

export type { Clock } from "../util/clock.ts";
export { systemClock } from "../util/clock.ts";

/** Each workspace's Slack writer and task service: nothing runs with another's credentials. */
export interface Workspaces {
  writer(teamId: string): SlackWriter;
  service(teamId: string): TaskService;
}

/** The threads above, told by a start that its run runs; resolves to a Stop pressed meanwhile. */
export interface RunningThreads {
  running(record: RelayedRun, plan: RunOpening): Promise<PersonStop | undefined>;
}

export interface UploadItem {
  readonly filename: string;
  readonly bytes: Buffer;
  readonly title?: string;
}

/** One file of a run as a generated web page may load it. */
export interface SiteFile {
  /** e.g. `/workspace/output/index.html` (the file's name when the service gave no path). */
  readonly path: string;
  /** Read when first asked for (empty when over the budget). */
  read(): Promise<Buffer>;
  readonly type?: string | undefined;
}

/** Pictures of the web pages a run generated, loading only the run's own files. */
export interface PagePreviews {
  /** Images of the HTML files among `files` (a few at most). Never rejects. */
  render(files: readonly SiteFile[]): Promise<UploadItem[]>;
}

export interface SlackWriter {
  /** Posts a message, returns its ts; queued when called, behind those older than `order.since`. */
  post(
    channelId: string,
    payload: MessagePayload,
    threadTs?: string,
    order?: { readonly since: number },
  ): Promise<string>;
  /**
   * Edits a message; `final` marks a run's last edit (served first). A newer edit replaces one
   * waiting for the budget; a function payload is rendered when sent (undefined: no call).
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
  upload(channelId: string, threadTs: string, files: readonly UploadItem[]): Promise<void>;
  startStream(...start: StreamStart): Promise<string>;
  /** `chat.appendStream`, the agent's steps as task updates; `last`: the answer's end (not paced). */
  appendStream(
    channelId: string,
    ts: string,
    markdown: string,
    steps?: readonly StreamStep[],
    last?: boolean,
  ): Promise<void>;
  /** `chat.stopStream` (the message is then editable), adding `end`'s blocks and metadata. */
  stopStream(channelId: string, ts: string, end?: StreamEnd): Promise<void>;
  /** The run of stream `ts` ended: an append of it still waiting goes at once (not paced). */
  hurryStream?(channelId: string, ts: string): void;
  /** The workspace's native stream budget (absent: `auto` streaming edits). */
  readonly streams?: StreamBudget;
  /** Names of the files shared in a thread since `sinceTs`. */
  sharedFileNames(channelId: string, threadTs: string, sinceTs?: string): Promise<Set<string>>;
  /** The agent view's status line under a thread ("" clears it; so does the app's next post). */
  setStatus(
    channelId: string,
    threadTs: string,
    status: string,
    loadingMessages?: readonly string[],
  ): Promise<void>;
  /** The title of a DM thread in Slack's agent view (its history lists threads by title). */
  setTitle(channelId: string, threadTs: string, title: string): Promise<void>;
  /**
   * A thread's agent session: `processing` while a run works (Slack then shows its own Stop,
   * sending `agent_session_stopped`), `active` between runs; a no-op without the API.
   */
  setSessionStatus(
    channelId: string,
    threadTs: string,
    status: "processing" | "active",
    title?: string,
  ): Promise<void>;
  /** Joins a public channel so the bot can post there and hear replies; false if it cannot. */
  join(channelId: string): Promise<boolean>;
  /** A workspace admin or owner. */
  isAdmin(userId: string): Promise<boolean>;
  /** Who a person is, for the app's policy (undefined when Slack cannot say). */
  person(userId: string): Promise<Person | undefined>;
}

/**
 * Slack's budget of native streams in a workspace: `chat.startStream` and `chat.stopStream` are
 * Tier 2 (about 20 a minute each), `chat.appendStream` Tier 4 and `chat.update` Tier 3.
 */
export interface StreamBudget {
  /**
   * Starts a stream if that shows the run fresher than edits, it can go at once and the waiting
   * stops go soon; else spends nothing (undefined). `tryNext`: a rotation's next message.
   */
  tryStart(...start: StreamStart): Promise<string | undefined>;
  tryNext(...start: StreamStart): Promise<string | undefined>;
}

/** A stream's start in a thread, addressed to `recipient` (`display`: `task_display_mode`). */
type StreamStart = [
  channelId: string,
  threadTs: string,
  recipient: { userId: string; teamId: string },
  markdown: string,
  display?: TaskDisplay,
];

/** How the agent's steps show (Slack's `task_display_mode`): one plan block, or a card each. */
export type TaskDisplay = "plan" | "timeline";

export type StreamEnd = Pick<MessagePayload, "blocks" | "metadata">;

/** One step of the agent's work, as a Slack `task_update` stream chunk shows it. */
export interface StreamStep {
  readonly id: string;
  readonly title: string;
  readonly status: "in_progress" | "complete";
}

/** What the app's policy needs to know of a person (from `users.info`). */
export interface Person {
  /** Their home workspace (another one for a Slack Connect person). */
  readonly teamId: string | undefined;
  /** `is_restricted` or `is_ultra_restricted`. */
  readonly guest: boolean;
  readonly deleted: boolean;
}

/** How a Workflow Builder step's task ended; `thread` is absent when nothing was posted. */
export type StepResult = Omit<StepEnding, "link"> & {
  readonly thread?: SlackThreadKey | undefined;
};

/** Ends Workflow Builder steps (`functions.completeSuccess`/`completeError`), each once. Never rejects. */
export interface WorkflowSteps {
  end(teamId: string, step: WorkflowStep, result: StepResult): Promise<void>;
}
