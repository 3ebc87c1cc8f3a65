// Public types of the local Slack double: recorded calls, workspace state snapshots, options.
import type { LimitErrorCodes } from "./limits.ts";

export type SlackArgs = Record<string, unknown>;

export interface SlackResponseBody {
  ok: boolean;
  error?: string;
  [key: string]: unknown;
}

export interface RecordedCall {
  /** 0-based position in `calls`. */
  seq: number;
  method: string;
  /** Parsed arguments (token removed; JSON-string fields such as blocks/files/chunks decoded). */
  args: SlackArgs;
  /** `Date.now()` when the request arrived. */
  at: number;
  status: number;
  response: SlackResponseBody;
  retryAfter?: number;
  /** Why the call failed when the failure did not come from the method itself. */
  fault?: "injected" | "ratelimited";
  /** Set when the call failed payload validation (also listed in `validationErrors`). */
  validationError?: string;
  /** The token the call presented (Bearer header or `token` argument), if any. */
  token?: string;
  /** The workspace (and organisation) that token belongs to, once authenticated. */
  team?: string;
  enterprise?: string;
}

export interface FaultSpec {
  error: string;
  /** HTTP status. Default 429 when `retryAfter` is given or error is "ratelimited", else 200. */
  status?: number;
  /** Seconds for the `Retry-After` header (sent whenever status is 429; default 1). */
  retryAfter?: number;
  /** Extra fields merged into the error body, e.g. `{ needed: "chat:write" }`. */
  extra?: Record<string, unknown>;
}

export interface FailNextOptions extends FaultSpec {
  /** How many consecutive calls of the method fail. Default 1. */
  times?: number;
}

export interface SlackUser {
  id: string;
  name: string;
  real_name?: string;
  team_id?: string;
  is_admin?: boolean;
  is_owner?: boolean;
  /** A guest: multi-channel (`is_restricted`) or single-channel (`is_ultra_restricted`). */
  is_restricted?: boolean;
  is_ultra_restricted?: boolean;
  is_bot?: boolean;
  deleted?: boolean;
  tz?: string;
}

export type StreamingState = "in_progress" | "completed" | "ended";

export interface SlackMessage {
  channel: string;
  ts: string;
  thread_ts?: string;
  user: string;
  bot_id?: string;
  app_id?: string;
  /** Current text: `text`, or `markdown_text`, or the accumulated streamed markdown. */
  text: string;
  markdown_text?: string;
  blocks?: unknown[];
  metadata?: unknown;
  /** Ids of files shared with this message (files.completeUploadExternal). */
  files?: string[];
  reply_broadcast?: boolean;
  edited?: { user: string; ts: string };
  /** Only for messages created by chat.startStream. "ended" = expired or stopped by the user. */
  streaming_state?: StreamingState;
  /** How a stream shows its task updates (chat.startStream's `task_display_mode`), when given. */
  task_display_mode?: "timeline" | "plan";
  /** Every chunk received while streaming (markdown_text arguments are recorded as markdown_text chunks). */
  chunks?: unknown[];
}

export interface SlackEphemeral {
  channel: string;
  user: string;
  message_ts: string;
  thread_ts?: string;
  text: string;
  markdown_text?: string;
  blocks?: unknown[];
}

export interface FileShare {
  channel: string;
  thread_ts?: string;
  initial_comment?: string;
  /** ts of the message that carries the file in the channel/thread. */
  message_ts: string;
}

export interface SlackFile {
  id: string;
  /** The `filename` given to files.getUploadURLExternal. */
  name: string;
  title?: string;
  alt_text?: string;
  /** `length` declared to files.getUploadURLExternal. */
  declaredLength: number;
  /** Exactly the bytes POSTed to the upload URL (empty until uploaded). */
  bytes: Buffer;
  uploaded: boolean;
  /** Content type of the upload request (WebClient sends multipart/form-data). */
  uploadContentType?: string;
  completed: boolean;
  /** First share, for convenience. */
  channel?: string;
  thread_ts?: string;
  shares: FileShare[];
}

export interface SlackReaction {
  name: string;
  users: string[];
  count: number;
}

export interface ValidationFailure {
  seq: number;
  method: string;
  error: string;
  message: string;
  pointer?: string;
  args: SlackArgs;
  at: number;
}

export interface ResponseUrlPost {
  id: string;
  /** Parsed JSON (or form fields) of the POST body. */
  body: unknown;
  rawBody: string;
  contentType: string;
  at: number;
  status: number;
}

/** One assistant.threads.setSuggestedPrompts call. */
export interface SuggestedPrompts {
  channel: string;
  thread_ts?: string;
  title?: string;
  prompts: Array<{ title: string; message: string }>;
}

export interface AssistantStatus {
  channel: string;
  thread_ts: string;
  status: string;
  loading_messages?: unknown[];
  at: number;
}

export interface RateTier {
  perMinute: number;
}

export interface LocalSlackOptions {
  /** Token the bot must present. Default "xoxb-test-token". */
  botToken?: string;
  teamId?: string;
  teamName?: string;
  appId?: string;
  botUserId?: string;
  botId?: string;
  botName?: string;
  users?: SlackUser[];
  /** Channels the bot is not a member of: posting answers `not_in_channel`. conversations.join removes. */
  notInChannel?: Iterable<string>;
  /** Channels that do not exist (or are private and invisible): `channel_not_found`. */
  unknownChannels?: Iterable<string>;
  /** Channel names for conversations.info. */
  channelNames?: Record<string, string>;
  /** Who created each channel: conversations.info's `creator`. */
  channelCreators?: Record<string, string>;
  /**
   * Granted bot scopes. When set, methods whose scope is missing answer `missing_scope` (with
   * `needed`/`provided`) - e.g. feed it the scopes of manifest.yml. Undefined = no scope checks.
   */
  scopes?: Iterable<string>;
  /** Per-method, per-team sliding one-minute windows. Exceeding answers 429 + Retry-After + "ratelimited". */
  tiers?: Record<string, RateTier>;
  errorCodes?: Partial<LimitErrorCodes>;
  /**
   * How long a native stream stays open after chat.startStream; then chat.appendStream and
   * chat.stopStream answer `message_not_in_streaming_state` (chat.update still works), as on
   * Slack. Default 300,000 (five minutes); `Infinity` for streams that never end by themselves.
   */
  streamLifetimeMs?: number;
  /** Clock for rate tiers and stream lifetimes. Default Date.now. */
  now?: () => number;
  /** First message ts, as microseconds since the epoch. Default 1700000000.000100. */
  firstTsMicros?: number;
  /** Default timeout of waitFor/waitForCall. Default 5000 ms. */
  defaultWaitTimeoutMs?: number;
  /**
   * The host name clients reach this server by, when not 127.0.0.1 (through a proxy, or from
   * another container): the URLs it hands out (upload_url, url_private) use it. Default 127.0.0.1.
   */
  publicHost?: string;
  /** The app's OAuth settings (client id and secret, redirect URLs, token rotation). */
  oauth?: OAuthAppOptions;
  /**
   * The app's Workflow Builder steps by callback id, as its manifest's `functions` declares them:
   * `function_executed` describes them, and functions.completeSuccess checks outputs against them.
   */
  functions?: Record<string, FunctionDefinition>;
}

/** One input or output of a step, as a manifest (major version 1) declares it. */
export interface FunctionParameter {
  type: string;
  title?: string;
  description?: string;
  is_required?: boolean;
}

/** A Workflow Builder step of the app (a manifest's `functions.<callback_id>`). */
export interface FunctionDefinition {
  title: string;
  description?: string;
  input_parameters: Record<string, FunctionParameter>;
  output_parameters: Record<string, FunctionParameter>;
}

/** One run of a step, as the double keeps it: running until the app completes it, once. */
export interface FunctionExecution {
  id: string;
  workflowExecutionId: string;
  callbackId: string;
  teamId: string;
  /** The execution's own token (`bot_access_token`): the only one that completes it. */
  token: string;
  inputs: Record<string, unknown>;
  status: "running" | "completed" | "failed";
  outputs?: Record<string, unknown>;
  error?: string;
}

export interface WaitOptions {
  timeoutMs?: number;
  /** Only consider calls with `seq >= fromIndex` (e.g. `slack.calls.length` before acting). */
  fromIndex?: number;
  /** Shown in the timeout error. */
  description?: string;
}

export type LocalSlackEvents = {
  call: [RecordedCall];
  response_url: [ResponseUrlPost];
  /** Any state change made through the test API (addMessage, expireStream, ...). */
  change: [];
};

/** Decides per call whether to inject a fault (see LocalSlack.failWhen). */
export type FaultPredicate = (call: { method: string; args: SlackArgs }) => FaultSpec | undefined;

/** The app as the double's OAuth flow knows it (client credentials, redirect URLs, rotation). */
export interface OAuthAppOptions {
  clientId?: string;
  clientSecret?: string;
  /** The app's configured Redirect URLs; the first is used when a request names none. */
  redirectUrls?: string[];
  /** Token rotation: bot tokens expire and come with a refresh token. Default false. */
  tokenRotation?: boolean;
  /** How long a rotating token lives, in seconds. Default 43200 (Slack's 12 hours). */
  tokenLifetimeS?: number;
}
