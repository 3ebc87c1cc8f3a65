/**
 * An honest local double of the Slack Web API.
 *
 * A real `node:http` server on 127.0.0.1 (ephemeral port) that Bolt's `App` and `@slack/web-api`'s
 * `WebClient` talk to UNMODIFIED via `clientOptions: { slackApiUrl: slack.apiUrl }`. It answers the way
 * Slack answers (HTTP 200 with `{ ok, ... }` / `{ ok: false, error }`, 429 + `Retry-After` when rate
 * limited), keeps the resulting workspace state (messages, threads, ephemerals, reactions, files,
 * streams) and - the point of the double - REJECTS payloads that real Slack would reject (message and
 * Block Kit limits, markdown_text conflicts, missing stream recipients, channels the bot is not in).
 *
 * Limits follow /work/shared/notes/slack-platform-facts.md. Where Slack's answer is ambiguous the chosen
 * error code is noted next to the check (and the two contested ones are configurable via
 * `options.errorCodes`). Lengths are counted in UTF-16 code units (`string.length`), which is never
 * fewer than Slack's character count, so a payload accepted here is not rejected for length by Slack.
 *
 * Usage:
 *   const slack = await startLocalSlack({ notInChannel: new Set(["C_PRIVATE"]) });
 *   const app = new App({ token: slack.botToken, signingSecret, clientOptions: { slackApiUrl: slack.apiUrl } });
 *   ...
 *   const call = await slack.waitForCall((c) => c.method === "chat.postMessage");
 *   expect(slack.validationErrors).toEqual([]);
 *   await slack.close();
 */
import { EventEmitter } from "node:events";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

// ---------------------------------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------------------------------

/** Slack's documented limits enforced by the double (see slack-platform-facts.md). */
export const SLACK_LIMITS = {
  /** `text` argument. Slack docs say "truncated" above 40k; chat.update documents msg_too_long. We reject. */
  textMax: 40_000,
  blocksMax: 50,
  blockIdMax: 255,
  sectionTextMax: 3_000,
  sectionFieldsMax: 10,
  sectionFieldTextMax: 2_000,
  headerTextMax: 150,
  contextElementsMax: 10,
  actionsElementsMax: 25,
  buttonTextMax: 75,
  buttonValueMax: 2_000,
  buttonUrlMax: 3_000,
  actionIdMax: 255,
  /** Total characters across all `markdown` blocks of one payload. */
  markdownBlocksTotalMax: 12_000,
  /** `markdown_text` argument (postMessage, postEphemeral, update, start/append/stopStream). */
  markdownTextMax: 12_000,
  loadingMessagesMax: 10,
} as const;

/** Error codes for the limits where Slack's observed answer differs from (or is not in) its docs. */
export interface LimitErrorCodes {
  /**
   * More than 50 blocks. Default `invalid_blocks` (what Slack answers in practice, with the response_metadata
   * message "must be less than 50 items"); the facts sheet also names `msg_blocks_too_many`.
   */
  tooManyBlocks: string;
  /**
   * More than 12,000 characters across the `markdown` blocks of one payload. Default `msg_blocks_too_long`
   * (the code Slack returns for oversized markdown-block payloads, bolt-js#2509); some callers see `invalid_blocks`.
   */
  markdownBlocksTooLong: string;
}

const DEFAULT_ERROR_CODES: LimitErrorCodes = {
  tooManyBlocks: "invalid_blocks",
  markdownBlocksTooLong: "msg_blocks_too_long",
};

/** Block types Slack accepts in messages (the KnownBlock union of @slack/types). */
const KNOWN_BLOCK_TYPES = new Set([
  "actions",
  "alert",
  "card",
  "carousel",
  "container",
  "context",
  "context_actions",
  "data_table",
  "divider",
  "file",
  "header",
  "image",
  "input",
  "markdown",
  "plan",
  "rich_text",
  "section",
  "table",
  "task_card",
  "video",
]);

/** Form fields WebClient sends as JSON strings; decoded into `RecordedCall.args`. */
const JSON_FIELDS = new Set([
  "attachments",
  "blocks",
  "chunks",
  "file_ids",
  "files",
  "loading_messages",
  "metadata",
  "prompts",
  "unfurls",
  "user_auth_blocks",
  "view",
]);

// ---------------------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------------------

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
  /**
   * Granted bot scopes. When set, methods whose scope is missing answer `missing_scope` (with
   * `needed`/`provided`) - e.g. feed it the scopes of manifest.yml. Undefined = no scope checks.
   */
  scopes?: Iterable<string>;
  /** Per-method, per-team sliding one-minute windows. Exceeding answers 429 + Retry-After + "ratelimited". */
  tiers?: Record<string, RateTier>;
  errorCodes?: Partial<LimitErrorCodes>;
  /** Clock for rate tiers. Default Date.now. */
  now?: () => number;
  /** First message ts, as microseconds since the epoch. Default 1700000000.000100. */
  firstTsMicros?: number;
  /** Default timeout of waitFor/waitForCall. Default 5000 ms. */
  defaultWaitTimeoutMs?: number;
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

// ---------------------------------------------------------------------------------------------------
// Internals
// ---------------------------------------------------------------------------------------------------

/** A payload problem: the Slack error code plus Slack-style detail. */
export interface Problem {
  error: string;
  message: string;
  pointer?: string;
}

/** Thrown by method handlers; turned into `{ ok: false, error }`. */
class ApiFailure extends Error {
  readonly code: string;
  readonly extra: Record<string, unknown>;
  readonly validation: Problem | undefined;
  constructor(code: string, extra: Record<string, unknown> = {}, validation?: Problem) {
    super(code);
    this.code = code;
    this.extra = extra;
    this.validation = validation;
  }
}

function invalid(problem: Problem): ApiFailure {
  const pointer = problem.pointer === undefined ? "" : ` [json-pointer:${problem.pointer}]`;
  return new ApiFailure(
    problem.error,
    { response_metadata: { messages: [`[ERROR] ${problem.message}${pointer}`] } },
    problem,
  );
}

interface StoredMessage extends SlackMessage {
  deleted?: boolean;
  streamEndError?: string;
}

interface StoredFile extends SlackFile {
  created: number;
}

interface UserFile {
  id: string;
  name: string;
  bytes: Buffer;
  mimetype: string;
}

type Handler = (args: SlackArgs, team: string) => Record<string, unknown>;

interface Fault extends FaultSpec {
  remaining: number;
}

type FaultPredicate = (call: { method: string; args: SlackArgs }) => FaultSpec | undefined;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string argument (numbers are stringified as Slack would receive them in a form body). */
function str(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

function nonEmpty(value: unknown): string | undefined {
  const s = str(value);
  return s === undefined || s === "" ? undefined : s;
}

function textField(obj: unknown): string | undefined {
  return isRecord(obj) && typeof obj.text === "string" ? obj.text : undefined;
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

function summarizeCall(c: RecordedCall): string {
  const parts: string[] = [];
  for (const key of ["channel", "channel_id", "ts", "thread_ts", "user", "name", "filename"]) {
    const v = str(c.args[key]);
    if (v !== undefined) parts.push(`${key}=${v}`);
  }
  const text = str(c.args.text) ?? str(c.args.markdown_text);
  if (text !== undefined) parts.push(`text=${JSON.stringify(truncate(text, 60))}`);
  if (Array.isArray(c.args.blocks)) parts.push(`blocks=${c.args.blocks.length}`);
  const outcome = c.response.ok
    ? "ok"
    : `${c.response.error ?? "error"}${c.fault ? ` (${c.fault})` : ""}`;
  return `#${c.seq} ${c.method} ${parts.join(" ")} -> ${c.status} ${outcome}`;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  }
  return Buffer.concat(chunks);
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(payload),
    ...headers,
  });
  res.end(payload);
}

function channelKind(channel: string): "channels" | "groups" | "im" {
  if (channel.startsWith("D")) return "im";
  if (channel.startsWith("G")) return "groups";
  return "channels";
}

/** Scopes that satisfy a method (any of). Undefined = no scope needed. */
function neededScopes(method: string, args: SlackArgs): string[] | undefined {
  const channel = str(args.channel) ?? str(args.channel_id) ?? "C";
  switch (method) {
    case "chat.postMessage":
    case "chat.update":
    case "chat.delete":
    case "chat.postEphemeral":
    case "chat.startStream":
    case "chat.appendStream":
    case "chat.stopStream":
      return ["chat:write"];
    case "assistant.threads.setStatus":
      // Since 2026-03 either scope is accepted (docs.slack.dev changelog "set status scope update").
      return ["chat:write", "assistant:write"];
    case "reactions.add":
    case "reactions.remove":
      return ["reactions:write"];
    case "users.info":
      return ["users:read"];
    case "files.getUploadURLExternal":
    case "files.completeUploadExternal":
      return ["files:write"];
    case "conversations.info":
      return [`${channelKind(channel)}:read`];
    case "conversations.join":
      return ["channels:join"];
    case "conversations.replies":
    case "conversations.history":
      return [`${channelKind(channel)}:history`];
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------------
// Block Kit validation
// ---------------------------------------------------------------------------------------------------

function checkLength(
  value: string | undefined,
  min: number,
  max: number,
  pointer: string,
  what: string,
): Problem | undefined {
  if (value === undefined) {
    return { error: "invalid_blocks", message: `missing required field: ${what}`, pointer };
  }
  if (value.length < min) {
    return {
      error: "invalid_blocks",
      message: `must be at least ${min} characters`,
      pointer,
    };
  }
  if (value.length > max) {
    return {
      error: "invalid_blocks",
      message: `must be less than ${max + 1} characters`,
      pointer,
    };
  }
  return undefined;
}

function validateElement(element: unknown, pointer: string): Problem | undefined {
  if (!isRecord(element) || typeof element.type !== "string") {
    return { error: "invalid_blocks", message: "missing required field: type", pointer };
  }
  const actionId = str(element.action_id);
  if (actionId !== undefined && actionId.length > SLACK_LIMITS.actionIdMax) {
    return {
      error: "invalid_blocks",
      message: `must be less than ${SLACK_LIMITS.actionIdMax + 1} characters`,
      pointer: `${pointer}/action_id`,
    };
  }
  if (element.type === "button") {
    const textProblem = checkLength(
      textField(element.text),
      1,
      SLACK_LIMITS.buttonTextMax,
      `${pointer}/text/text`,
      "text",
    );
    if (textProblem) return textProblem;
    const value = str(element.value);
    if (value !== undefined && value.length > SLACK_LIMITS.buttonValueMax) {
      return {
        error: "invalid_blocks",
        message: `must be less than ${SLACK_LIMITS.buttonValueMax + 1} characters`,
        pointer: `${pointer}/value`,
      };
    }
    const url = str(element.url);
    if (url !== undefined && url.length > SLACK_LIMITS.buttonUrlMax) {
      return {
        error: "invalid_blocks",
        message: `must be less than ${SLACK_LIMITS.buttonUrlMax + 1} characters`,
        pointer: `${pointer}/url`,
      };
    }
  }
  return undefined;
}

/**
 * Validates a blocks array the way Slack does for messages. Returns the first problem or undefined.
 * Exported so tests of src/ renderers can assert "Slack would accept this" without a server.
 */
export function validateBlocks(
  blocks: unknown,
  pointer = "/blocks",
  codes: LimitErrorCodes = DEFAULT_ERROR_CODES,
): Problem | undefined {
  if (!Array.isArray(blocks)) {
    return { error: "invalid_blocks_format", message: "must be an array", pointer };
  }
  if (blocks.length > SLACK_LIMITS.blocksMax) {
    return {
      error: codes.tooManyBlocks,
      message: `must be less than ${SLACK_LIMITS.blocksMax} items (got ${blocks.length}; at most ${SLACK_LIMITS.blocksMax} allowed)`,
      pointer,
    };
  }
  let markdownTotal = 0;
  for (const [i, block] of blocks.entries()) {
    const at = `${pointer}/${i}`;
    if (!isRecord(block) || typeof block.type !== "string") {
      return { error: "invalid_blocks", message: "missing required field: type", pointer: at };
    }
    const blockId = str(block.block_id);
    if (blockId !== undefined && blockId.length > SLACK_LIMITS.blockIdMax) {
      return {
        error: "invalid_blocks",
        message: `must be less than ${SLACK_LIMITS.blockIdMax + 1} characters`,
        pointer: `${at}/block_id`,
      };
    }
    if (!KNOWN_BLOCK_TYPES.has(block.type)) {
      return {
        error: "invalid_blocks",
        message: `unsupported type: ${block.type}`,
        pointer: `${at}/type`,
      };
    }
    let problem: Problem | undefined;
    switch (block.type) {
      case "section": {
        const fields = block.fields;
        if (block.text === undefined && fields === undefined) {
          problem = {
            error: "invalid_blocks",
            message: "must provide either text or fields",
            pointer: at,
          };
          break;
        }
        if (block.text !== undefined) {
          problem = checkLength(
            textField(block.text),
            1,
            SLACK_LIMITS.sectionTextMax,
            `${at}/text/text`,
            "text",
          );
          if (problem) break;
        }
        if (fields !== undefined) {
          if (!Array.isArray(fields) || fields.length > SLACK_LIMITS.sectionFieldsMax) {
            problem = {
              error: "invalid_blocks",
              message: `must be an array of at most ${SLACK_LIMITS.sectionFieldsMax} items`,
              pointer: `${at}/fields`,
            };
            break;
          }
          for (const [j, field] of fields.entries()) {
            problem = checkLength(
              textField(field),
              1,
              SLACK_LIMITS.sectionFieldTextMax,
              `${at}/fields/${j}/text`,
              "text",
            );
            if (problem) break;
          }
          if (problem) break;
        }
        if (block.accessory !== undefined) {
          problem = validateElement(block.accessory, `${at}/accessory`);
        }
        break;
      }
      case "header":
        problem = checkLength(
          textField(block.text),
          1,
          SLACK_LIMITS.headerTextMax,
          `${at}/text/text`,
          "text",
        );
        break;
      case "context": {
        const elements = block.elements;
        if (!Array.isArray(elements) || elements.length === 0) {
          problem = {
            error: "invalid_blocks",
            message: "missing required field: elements",
            pointer: `${at}/elements`,
          };
        } else if (elements.length > SLACK_LIMITS.contextElementsMax) {
          problem = {
            error: "invalid_blocks",
            message: `must be less than ${SLACK_LIMITS.contextElementsMax + 1} items`,
            pointer: `${at}/elements`,
          };
        }
        break;
      }
      case "actions": {
        const elements = block.elements;
        if (!Array.isArray(elements) || elements.length === 0) {
          problem = {
            error: "invalid_blocks",
            message: "missing required field: elements",
            pointer: `${at}/elements`,
          };
          break;
        }
        if (elements.length > SLACK_LIMITS.actionsElementsMax) {
          problem = {
            error: "invalid_blocks",
            message: `must be less than ${SLACK_LIMITS.actionsElementsMax + 1} items`,
            pointer: `${at}/elements`,
          };
          break;
        }
        for (const [j, element] of elements.entries()) {
          problem = validateElement(element, `${at}/elements/${j}`);
          if (problem) break;
        }
        break;
      }
      case "markdown": {
        const text = str(block.text);
        if (text === undefined) {
          problem = {
            error: "invalid_blocks",
            message: "missing required field: text",
            pointer: `${at}/text`,
          };
          break;
        }
        markdownTotal += text.length;
        break;
      }
      default:
        break;
    }
    if (problem) return problem;
  }
  if (markdownTotal > SLACK_LIMITS.markdownBlocksTotalMax) {
    return {
      error: codes.markdownBlocksTooLong,
      message: `markdown blocks total ${markdownTotal} characters; at most ${SLACK_LIMITS.markdownBlocksTotalMax} allowed`,
      pointer,
    };
  }
  return undefined;
}

/**
 * Validates the content arguments of chat.postMessage / chat.postEphemeral / chat.update.
 * Exported for unit tests of renderers. Returns the first problem or undefined.
 */
export function validateMessageContent(
  args: SlackArgs,
  codes: LimitErrorCodes = DEFAULT_ERROR_CODES,
): Problem | undefined {
  const text = str(args.text);
  const markdownText = str(args.markdown_text);
  const blocks = args.blocks;
  const hasBlocks = Array.isArray(blocks) ? blocks.length > 0 : blocks !== undefined;
  if (markdownText !== undefined && ((text !== undefined && text !== "") || hasBlocks)) {
    return {
      error: "markdown_text_conflict",
      message: "markdown_text cannot be combined with text or blocks",
    };
  }
  if (markdownText !== undefined && markdownText.length > SLACK_LIMITS.markdownTextMax) {
    return {
      error: "msg_too_long",
      message: `markdown_text is ${markdownText.length} characters; at most ${SLACK_LIMITS.markdownTextMax} allowed`,
    };
  }
  if (text !== undefined && text.length > SLACK_LIMITS.textMax) {
    return {
      error: "msg_too_long",
      message: `text is ${text.length} characters; at most ${SLACK_LIMITS.textMax} allowed`,
    };
  }
  if (blocks !== undefined) {
    const problem = validateBlocks(blocks, "/blocks", codes);
    if (problem) return problem;
  }
  const hasAttachments = Array.isArray(args.attachments) && args.attachments.length > 0;
  if ((text === undefined || text === "") && !hasBlocks && !markdownText && !hasAttachments) {
    return { error: "no_text", message: "no text, blocks, markdown_text or attachments" };
  }
  return undefined;
}

function validateChunks(chunks: unknown, codes: LimitErrorCodes): Problem | undefined {
  if (chunks === undefined) return undefined;
  if (!Array.isArray(chunks)) {
    return { error: "invalid_chunks", message: "must be an array", pointer: "/chunks" };
  }
  for (const [i, chunk] of chunks.entries()) {
    if (!isRecord(chunk) || typeof chunk.type !== "string") {
      return {
        error: "invalid_chunks",
        message: "missing required field: type",
        pointer: `/chunks/${i}`,
      };
    }
    if (chunk.type === "markdown_text") {
      const text = str(chunk.text);
      if (text === undefined) {
        return {
          error: "invalid_chunks",
          message: "missing required field: text",
          pointer: `/chunks/${i}/text`,
        };
      }
      if (text.length > SLACK_LIMITS.markdownTextMax) {
        return {
          error: "msg_too_long",
          message: `markdown_text chunk is ${text.length} characters; at most ${SLACK_LIMITS.markdownTextMax} allowed`,
          pointer: `/chunks/${i}/text`,
        };
      }
    } else if (chunk.type === "blocks") {
      const problem = validateBlocks(chunk.blocks, `/chunks/${i}/blocks`, codes);
      if (problem) return problem;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// The double
// ---------------------------------------------------------------------------------------------------

export class LocalSlack extends EventEmitter<LocalSlackEvents> {
  readonly botToken: string;
  /** The app-level token (`xapp-…`) that may open Socket Mode connections. */
  readonly appToken = "xapp-1-A0001-test-app-token";
  /** Where `apps.connections.open` sends a Socket Mode client (set by the test). */
  socketModeUrl: string | undefined;
  readonly teamId: string;
  readonly teamName: string;
  readonly appId: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly botName: string;
  /** Channels the bot is not in (mutable; conversations.join removes). */
  readonly notInChannel: Set<string>;
  /** Channels that answer channel_not_found (mutable). */
  readonly unknownChannels: Set<string>;
  /** Granted scopes (mutable) or undefined for no scope checks. */
  readonly scopes: Set<string> | undefined;
  readonly calls: RecordedCall[] = [];
  readonly validationErrors: ValidationFailure[] = [];
  readonly responseUrlPosts: ResponseUrlPost[] = [];
  readonly assistantStatuses: AssistantStatus[] = [];
  /** Number of calls answered 429 by tier enforcement. */
  rateLimited = 0;

  #server: Server;
  #port = 0;
  #codes: LimitErrorCodes;
  #now: () => number;
  #tsCounter: number;
  #fileCounter = 0;
  #tiers = new Map<string, RateTier>();
  #windows = new Map<string, number[]>();
  #faults = new Map<string, Fault[]>();
  #faultPredicates: FaultPredicate[] = [];
  #users = new Map<string, SlackUser>();
  #channelNames = new Map<string, string>();
  #messages = new Map<string, Map<string, StoredMessage>>();
  #ephemerals: SlackEphemeral[] = [];
  #reactions = new Map<string, Map<string, Set<string>>>();
  #files = new Map<string, StoredFile>();
  #userFiles = new Map<string, UserFile>();
  #currentStatus = new Map<string, string>();
  #handlers: Map<string, Handler>;
  #defaultTimeout: number;
  #closed = false;
  #closeListeners = new Set<(error: Error) => void>();

  constructor(options: LocalSlackOptions = {}) {
    super();
    this.setMaxListeners(0);
    this.botToken = options.botToken ?? "xoxb-test-token";
    this.teamId = options.teamId ?? "T0001";
    this.teamName = options.teamName ?? "Local Slack";
    this.appId = options.appId ?? "A0001";
    this.botUserId = options.botUserId ?? "UBOT";
    this.botId = options.botId ?? "BBOT";
    this.botName = options.botName ?? "taskbot";
    this.notInChannel = new Set(options.notInChannel ?? []);
    this.unknownChannels = new Set(options.unknownChannels ?? []);
    this.scopes = options.scopes === undefined ? undefined : new Set(options.scopes);
    this.#codes = { ...DEFAULT_ERROR_CODES, ...options.errorCodes };
    this.#now = options.now ?? Date.now;
    this.#tsCounter = (options.firstTsMicros ?? 1_700_000_000_000_100) - 100;
    this.#defaultTimeout = options.defaultWaitTimeoutMs ?? 5_000;
    for (const [method, tier] of Object.entries(options.tiers ?? {})) this.#tiers.set(method, tier);
    for (const [id, name] of Object.entries(options.channelNames ?? {}))
      this.#channelNames.set(id, name);
    this.addUser({
      id: this.botUserId,
      name: this.botName,
      real_name: "Task Agent",
      is_bot: true,
      team_id: this.teamId,
    });
    for (const user of options.users ?? []) this.addUser(user);
    this.#handlers = this.#buildHandlers();
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) {
          sendJson(res, 500, { ok: false, error: "internal_error", detail: String(error) });
        } else {
          res.destroy();
        }
      });
    });
  }

  /** Starts listening on 127.0.0.1:<ephemeral>. Use startLocalSlack() instead. */
  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(0, "127.0.0.1", () => {
        this.#server.off("error", reject);
        resolve();
      });
    });
    this.#port = (this.#server.address() as AddressInfo).port;
  }

  get port(): number {
    return this.#port;
  }

  /** Base URL of the server, with trailing slash: `http://127.0.0.1:PORT/`. */
  get url(): string {
    return `http://127.0.0.1:${this.#port}/`;
  }

  /** What to pass as `slackApiUrl`: `http://127.0.0.1:PORT/api/`. */
  get apiUrl(): string {
    return `${this.url}api/`;
  }

  /** The workspace URL auth.test reports; permalinks are built from it. */
  get teamUrl(): string {
    return "https://local-slack.slack.com/";
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const error = new Error("LocalSlack was closed");
    for (const listener of [...this.#closeListeners]) listener(error);
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  // -------------------------------------------------------------------------------------------------
  // Test API: configuration and fault injection
  // -------------------------------------------------------------------------------------------------

  addUser(user: SlackUser): void {
    this.#users.set(user.id, { team_id: this.teamId, ...user });
  }

  /** Make the next `times` calls of `method` fail with `spec` (before any side effect). */
  failNext(method: string, options: FailNextOptions): void {
    const { times = 1, ...spec } = options;
    const queue = this.#faults.get(method) ?? [];
    queue.push({ ...spec, remaining: times });
    this.#faults.set(method, queue);
  }

  /** Fail every call for which `predicate` returns a fault. Returns a function that removes it. */
  failWhen(predicate: FaultPredicate): () => void {
    this.#faultPredicates.push(predicate);
    return () => {
      this.#faultPredicates = this.#faultPredicates.filter((p) => p !== predicate);
    };
  }

  /** Sets (or with undefined removes) a rate tier for a method. */
  setTier(method: string, tier: RateTier | undefined): void {
    if (tier === undefined) this.#tiers.delete(method);
    else this.#tiers.set(method, tier);
    this.#windows.clear();
  }

  /**
   * Ends a native stream as Slack does after some minutes (or when a person presses stop): the next
   * chat.appendStream / chat.stopStream fails with `error` (default `message_not_in_streaming_state`;
   * use "stopped_by_user" for the stop control). chat.update on the same ts keeps working.
   */
  expireStream(
    channel: string,
    ts: string,
    error: "message_not_in_streaming_state" | "stopped_by_user" = "message_not_in_streaming_state",
  ): void {
    const message = this.#messages.get(channel)?.get(ts);
    if (!message || message.streaming_state === undefined) {
      throw new Error(`expireStream: no streamed message ${channel}/${ts}`);
    }
    message.streaming_state = "ended";
    message.streamEndError = error;
    this.emit("change");
  }

  /** Seeds a message written by a person (e.g. the message that opened a thread). Returns its ts. */
  addMessage(message: {
    channel: string;
    user: string;
    text: string;
    thread_ts?: string;
    ts?: string;
  }): string {
    const ts = message.ts ?? this.#nextTs();
    this.#store({
      channel: message.channel,
      ts,
      user: message.user,
      text: message.text,
      ...(message.thread_ts === undefined ? {} : { thread_ts: message.thread_ts }),
    });
    this.emit("change");
    return ts;
  }

  /**
   * Registers a file uploaded by a person, served at `url_private_download` like files.slack.com:
   * with `Authorization: Bearer <bot token>` it returns the bytes, without (or with a wrong token) it
   * returns Slack's HTML sign-in page with status 200 - the classic "downloaded the login page" bug.
   */
  addUserFile(file: { name: string; bytes: Buffer | string; mimetype?: string }): {
    id: string;
    name: string;
    mimetype: string;
    size: number;
    url_private: string;
    url_private_download: string;
  } {
    const id = this.#nextFileId();
    const bytes = Buffer.isBuffer(file.bytes) ? file.bytes : Buffer.from(file.bytes);
    const mimetype = file.mimetype ?? "application/octet-stream";
    this.#userFiles.set(id, { id, name: file.name, bytes, mimetype });
    const url = `${this.url}files-pri/${this.teamId}-${id}/${encodeURIComponent(file.name)}`;
    return {
      id,
      name: file.name,
      mimetype,
      size: bytes.length,
      url_private: url,
      url_private_download: `${url}?download=1`,
    };
  }

  /** A response_url served by this server; POSTs to it are recorded in `responseUrlPosts`. */
  responseUrl(id: string): string {
    return `${this.url}response-url/${encodeURIComponent(id)}`;
  }

  // -------------------------------------------------------------------------------------------------
  // Test API: state
  // -------------------------------------------------------------------------------------------------

  /**
   * Messages of a channel in ts order. By default like conversations.history: top-level messages and
   * broadcast replies only; `{ includeReplies: true }` adds every thread reply.
   */
  messages(channel: string, options: { includeReplies?: boolean } = {}): SlackMessage[] {
    return this.#live(channel)
      .filter(
        (m) =>
          options.includeReplies === true ||
          m.thread_ts === undefined ||
          m.thread_ts === m.ts ||
          m.reply_broadcast === true,
      )
      .map((m) => this.#snapshot(m));
  }

  /** The thread's parent (if known) followed by its replies, in order, with their current content. */
  thread(channel: string, threadTs: string): SlackMessage[] {
    return this.#live(channel)
      .filter((m) => m.ts === threadTs || m.thread_ts === threadTs)
      .map((m) => this.#snapshot(m));
  }

  /** One message's current content, or undefined (also when deleted). */
  message(channel: string, ts: string): SlackMessage | undefined {
    const m = this.#messages.get(channel)?.get(ts);
    return m && !m.deleted ? this.#snapshot(m) : undefined;
  }

  ephemerals(channel?: string, user?: string): SlackEphemeral[] {
    return this.#ephemerals
      .filter(
        (e) =>
          (channel === undefined || e.channel === channel) &&
          (user === undefined || e.user === user),
      )
      .map((e) => clone(e));
  }

  /** Files created through files.getUploadURLExternal, in creation order. */
  files(): SlackFile[] {
    return [...this.#files.values()].map((f) => ({
      ...f,
      bytes: Buffer.from(f.bytes),
      shares: f.shares.map((s) => ({ ...s })),
    }));
  }

  reactions(channel: string, ts: string): SlackReaction[] {
    const byName = this.#reactions.get(`${channel}/${ts}`);
    if (!byName) return [];
    return [...byName.entries()]
      .filter(([, users]) => users.size > 0)
      .map(([name, users]) => ({ name, users: [...users], count: users.size }));
  }

  /** The current assistant status of a thread ("" or undefined when cleared). */
  assistantStatus(channel: string, threadTs: string): string | undefined {
    return this.#currentStatus.get(`${channel}/${threadTs}`);
  }

  // -------------------------------------------------------------------------------------------------
  // Test API: waiting
  // -------------------------------------------------------------------------------------------------

  /**
   * Resolves with the first value `check` returns that is not undefined/null/false, re-evaluating after
   * every recorded call, response_url POST and test-API change. Never polls, never sleeps.
   */
  waitFor<T>(check: () => T | undefined | null | false, options: WaitOptions = {}): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.#defaultTimeout;
    return new Promise<T>((resolve, reject) => {
      const evaluate = (): boolean => {
        let value: T | undefined | null | false;
        try {
          value = check();
        } catch (error) {
          cleanup();
          reject(error);
          return true;
        }
        if (value !== undefined && value !== null && value !== false) {
          cleanup();
          resolve(value);
          return true;
        }
        return false;
      };
      const onEvent = (): void => {
        evaluate();
      };
      const onClose = (error: Error): void => {
        cleanup();
        reject(new Error(`${this.#describeWait(options, check)} aborted: ${error.message}`));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new Error(
            `${this.#describeWait(options, check)} timed out after ${timeoutMs} ms.\n${this.describeRecentCalls()}`,
          ),
        );
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.off("call", onEvent);
        this.off("response_url", onEvent);
        this.off("change", onEvent);
        this.#closeListeners.delete(onClose);
      };
      this.on("call", onEvent);
      this.on("response_url", onEvent);
      this.on("change", onEvent);
      this.#closeListeners.add(onClose);
      if (!evaluate() && this.#closed) onClose(new Error("LocalSlack is closed"));
    });
  }

  /** Resolves with the first recorded call (already recorded or future) matching `predicate`. */
  waitForCall(
    predicate: (call: RecordedCall) => boolean,
    options: WaitOptions = {},
  ): Promise<RecordedCall> {
    const from = options.fromIndex ?? 0;
    return this.waitFor(() => this.calls.slice(from).find(predicate), {
      ...options,
      description: options.description ?? `waitForCall(${truncate(predicate.toString(), 200)})`,
    });
  }

  /** A readable list of the last `n` calls, for assertion messages. */
  describeRecentCalls(n = 20): string {
    if (this.calls.length === 0) return "No Slack API calls were recorded.";
    const recent = this.calls.slice(-n);
    return `Last ${recent.length} of ${this.calls.length} Slack API calls:\n${recent.map((c) => `  ${summarizeCall(c)}`).join("\n")}`;
  }

  #describeWait(options: WaitOptions, check: () => unknown): string {
    return options.description ?? `waitFor(${truncate(check.toString(), 200)})`;
  }

  // -------------------------------------------------------------------------------------------------
  // HTTP
  // -------------------------------------------------------------------------------------------------

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = Date.now();
    const url = new URL(req.url ?? "/", this.url);
    const body = await readBody(req);
    const path = url.pathname;
    if (path.startsWith("/api/")) {
      this.#handleApi(decodeURIComponent(path.slice("/api/".length)), req, body, url, at, res);
      return;
    }
    if (path.startsWith("/upload/v1/") && req.method === "POST") {
      await this.#handleUpload(
        decodeURIComponent(path.slice("/upload/v1/".length)),
        req,
        body,
        at,
        res,
      );
      return;
    }
    if (path.startsWith("/response-url/") && req.method === "POST") {
      this.#handleResponseUrl(
        decodeURIComponent(path.slice("/response-url/".length)),
        req,
        body,
        at,
        res,
      );
      return;
    }
    if (path.startsWith("/files-pri/") && req.method === "GET") {
      this.#handleUserFileDownload(path, req, res);
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end(`local-slack: no route for ${req.method ?? "?"} ${path}`);
  }

  #parseArgs(
    req: IncomingMessage,
    body: Buffer,
    url: URL,
  ): { args: SlackArgs; token: string | undefined; problem?: Problem } {
    const contentType = (req.headers["content-type"] ?? "").toLowerCase();
    const args: SlackArgs = {};
    let problem: Problem | undefined;
    for (const [k, v] of url.searchParams) args[k] = v;
    const text = body.toString("utf8");
    if (contentType.startsWith("application/json")) {
      if (text.trim() !== "") {
        try {
          const parsed: unknown = JSON.parse(text);
          if (isRecord(parsed)) Object.assign(args, parsed);
          else problem = { error: "invalid_json", message: "body is not a JSON object" };
        } catch {
          problem = { error: "invalid_json", message: "body is not valid JSON" };
        }
      }
    } else if (text !== "") {
      for (const [k, v] of new URLSearchParams(text)) {
        if (JSON_FIELDS.has(k)) {
          try {
            args[k] = JSON.parse(v);
          } catch {
            args[k] = v;
            problem ??= {
              error: k === "blocks" ? "invalid_blocks_format" : "invalid_arguments",
              message: `${k} is not valid JSON`,
              pointer: `/${k}`,
            };
          }
        } else {
          args[k] = v;
        }
      }
    }
    const auth = req.headers.authorization;
    let token = auth?.startsWith("Bearer ") ? auth.slice("Bearer ".length) : undefined;
    if (token === undefined && typeof args.token === "string") token = args.token;
    delete args.token;
    return problem ? { args, token, problem } : { args, token };
  }

  #handleApi(
    method: string,
    req: IncomingMessage,
    body: Buffer,
    url: URL,
    at: number,
    res: ServerResponse,
  ): void {
    const { args, token, problem } = this.#parseArgs(req, body, url);
    const team = str(args.team_id) ?? this.teamId;
    let status = 200;
    let response: SlackResponseBody;
    let retryAfter: number | undefined;
    let fault: RecordedCall["fault"];
    let validation: Problem | undefined;
    const handler = this.#handlers.get(method);
    const needed = this.scopes ? neededScopes(method, args) : undefined;
    const injected =
      handler !== undefined && token === this.botToken ? this.#takeFault(method, args) : undefined;
    // Tier windows only count calls that got past authentication and injected faults.
    const rateRetry =
      handler !== undefined && token === this.botToken && !injected
        ? this.#rateCheck(method, team)
        : undefined;
    if (method === "apps.connections.open") {
      // Socket Mode: the app-level token asks where to connect (see local-socket-mode.ts).
      response =
        token !== this.appToken
          ? { ok: false, error: "invalid_auth" }
          : this.socketModeUrl === undefined
            ? { ok: false, error: "internal_error" }
            : { ok: true, url: this.socketModeUrl };
    } else if (handler === undefined) {
      response = {
        ok: false,
        error: "unknown_method",
        req_method: method,
        response_metadata: {
          messages: [`[ERROR] the local Slack double does not implement ${method}`],
        },
      };
    } else if (token === undefined) {
      response = { ok: false, error: "not_authed" };
    } else if (token !== this.botToken) {
      response = { ok: false, error: "invalid_auth" };
    } else if (injected) {
      fault = "injected";
      status =
        injected.status ??
        (injected.retryAfter !== undefined || injected.error === "ratelimited" ? 429 : 200);
      if (status === 429) retryAfter = injected.retryAfter ?? 1;
      response = { ok: false, error: injected.error, ...injected.extra };
    } else if (rateRetry !== undefined) {
      retryAfter = rateRetry;
      fault = "ratelimited";
      status = 429;
      this.rateLimited += 1;
      response = { ok: false, error: "ratelimited" };
    } else if (this.scopes && needed && !needed.some((s) => this.scopes?.has(s))) {
      response = {
        ok: false,
        error: "missing_scope",
        needed: needed.join(","),
        provided: [...this.scopes].join(","),
      };
    } else if (problem) {
      validation = problem;
      response = { ok: false, error: problem.error, ...invalid(problem).extra };
    } else {
      try {
        response = { ok: true, ...handler(args, team) };
      } catch (error) {
        if (!(error instanceof ApiFailure)) throw error;
        validation = error.validation;
        response = { ok: false, error: error.code, ...error.extra };
      }
    }
    const call: RecordedCall = { seq: this.calls.length, method, args, at, status, response };
    if (retryAfter !== undefined) call.retryAfter = retryAfter;
    if (fault !== undefined) call.fault = fault;
    if (validation !== undefined) {
      call.validationError = validation.error;
      const failure: ValidationFailure = {
        seq: call.seq,
        method,
        error: validation.error,
        message: validation.message,
        args,
        at,
      };
      if (validation.pointer !== undefined) failure.pointer = validation.pointer;
      this.validationErrors.push(failure);
    }
    this.calls.push(call);
    sendJson(
      res,
      status,
      response,
      retryAfter === undefined ? {} : { "retry-after": String(retryAfter) },
    );
    this.emit("call", call);
  }

  #takeFault(method: string, args: SlackArgs): FaultSpec | undefined {
    const queue = this.#faults.get(method);
    const head = queue?.[0];
    if (queue && head) {
      head.remaining -= 1;
      if (head.remaining <= 0) queue.shift();
      const { remaining: _remaining, ...spec } = head;
      return spec;
    }
    for (const predicate of this.#faultPredicates) {
      const spec = predicate({ method, args });
      if (spec) return spec;
    }
    return undefined;
  }

  /** Returns Retry-After seconds when the call exceeds its tier, else records it and returns undefined. */
  #rateCheck(method: string, team: string): number | undefined {
    const tier = this.#tiers.get(method);
    if (!tier) return undefined;
    const now = this.#now();
    const key = `${team}/${method}`;
    const window = (this.#windows.get(key) ?? []).filter((t) => t > now - 60_000);
    this.#windows.set(key, window);
    if (window.length >= tier.perMinute) {
      const oldest = window[0] ?? now;
      return Math.max(1, Math.ceil((oldest + 60_000 - now) / 1000));
    }
    window.push(now);
    return undefined;
  }

  async #handleUpload(
    fileId: string,
    req: IncomingMessage,
    body: Buffer,
    at: number,
    res: ServerResponse,
  ): Promise<void> {
    const file = this.#files.get(fileId);
    const contentType = req.headers["content-type"] ?? "application/octet-stream";
    let status = 200;
    let text: string;
    if (!file) {
      status = 404;
      text = "file_not_found";
    } else {
      let bytes = body;
      if (contentType.toLowerCase().startsWith("multipart/form-data")) {
        // WebClient.filesUploadV2 posts `{ body: <Buffer> }` through its generic serializer, which turns a
        // Buffer into multipart/form-data with one part named "body" (filename "Untitled").
        const form = await new Response(new Uint8Array(body), {
          headers: { "content-type": contentType },
        }).formData();
        let part: string | File | undefined;
        for (const value of form.values()) {
          if (typeof value !== "string") {
            part = value;
            break;
          }
          part ??= value;
        }
        bytes =
          part === undefined
            ? Buffer.alloc(0)
            : typeof part === "string"
              ? Buffer.from(part)
              : Buffer.from(await part.arrayBuffer());
      }
      file.bytes = bytes;
      file.uploaded = true;
      file.uploadContentType = contentType;
      text = `OK - ${bytes.length}`;
    }
    const call: RecordedCall = {
      seq: this.calls.length,
      method: "upload_url",
      args: {
        file_id: fileId,
        content_type: contentType,
        bytes: file?.bytes.length ?? body.length,
      },
      at,
      status,
      response: status === 200 ? { ok: true } : { ok: false, error: text },
    };
    this.calls.push(call);
    res.writeHead(status, { "content-type": "text/plain" });
    res.end(text);
    this.emit("call", call);
  }

  #handleResponseUrl(
    id: string,
    req: IncomingMessage,
    body: Buffer,
    at: number,
    res: ServerResponse,
  ): void {
    const contentType = req.headers["content-type"] ?? "";
    const rawBody = body.toString("utf8");
    let parsed: unknown = rawBody;
    if (contentType.startsWith("application/json")) {
      try {
        parsed = JSON.parse(rawBody);
      } catch {
        parsed = rawBody;
      }
    } else if (contentType.startsWith("application/x-www-form-urlencoded")) {
      parsed = Object.fromEntries(new URLSearchParams(rawBody));
    }
    // Slack accepts up to 5 uses of a response_url.
    const uses = this.responseUrlPosts.filter((p) => p.id === id && p.status === 200).length;
    const status = uses >= 5 ? 404 : 200;
    const post: ResponseUrlPost = { id, body: parsed, rawBody, contentType, at, status };
    this.responseUrlPosts.push(post);
    if (status === 200) sendJson(res, 200, { ok: true });
    else sendJson(res, 404, { ok: false, error: "used_url" });
    this.emit("response_url", post);
  }

  #handleUserFileDownload(path: string, req: IncomingMessage, res: ServerResponse): void {
    const match = /^\/files-pri\/[^/-]+-([^/]+)\//.exec(path);
    const file = match?.[1] ? this.#userFiles.get(match[1]) : undefined;
    if (!file) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("file_not_found");
      return;
    }
    if (req.headers.authorization !== `Bearer ${this.botToken}`) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(
        "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to Slack</body></html>",
      );
      return;
    }
    res.writeHead(200, { "content-type": file.mimetype, "content-length": file.bytes.length });
    res.end(file.bytes);
  }

  // -------------------------------------------------------------------------------------------------
  // State helpers
  // -------------------------------------------------------------------------------------------------

  #nextTs(): string {
    this.#tsCounter += 100;
    const seconds = Math.floor(this.#tsCounter / 1_000_000);
    const micros = this.#tsCounter % 1_000_000;
    return `${seconds}.${String(micros).padStart(6, "0")}`;
  }

  #nextFileId(): string {
    this.#fileCounter += 1;
    return `F${String(this.#fileCounter).padStart(10, "0")}`;
  }

  #store(message: StoredMessage): StoredMessage {
    let channelMessages = this.#messages.get(message.channel);
    if (!channelMessages) {
      channelMessages = new Map();
      this.#messages.set(message.channel, channelMessages);
    }
    channelMessages.set(message.ts, message);
    return message;
  }

  #live(channel: string): StoredMessage[] {
    return [...(this.#messages.get(channel)?.values() ?? [])]
      .filter((m) => !m.deleted)
      .sort(
        (a, b) => Number.parseFloat(a.ts) - Number.parseFloat(b.ts) || a.ts.localeCompare(b.ts),
      );
  }

  #snapshot(m: StoredMessage): SlackMessage {
    const { deleted: _deleted, streamEndError: _end, ...rest } = m;
    return clone(rest);
  }

  /** The message as Slack returns it in API responses. */
  #wire(m: StoredMessage): Record<string, unknown> {
    const out: Record<string, unknown> = {
      type: "message",
      text: m.text,
      user: m.user,
      ts: m.ts,
      team: this.teamId,
    };
    if (m.bot_id !== undefined) out.bot_id = m.bot_id;
    if (m.app_id !== undefined) out.app_id = m.app_id;
    if (m.thread_ts !== undefined) out.thread_ts = m.thread_ts;
    if (m.blocks !== undefined) out.blocks = clone(m.blocks);
    if (m.metadata !== undefined) out.metadata = clone(m.metadata);
    if (m.edited !== undefined) out.edited = { ...m.edited };
    if (m.streaming_state !== undefined) out.streaming_state = m.streaming_state;
    if (m.files !== undefined) {
      // Like Slack, a shared file comes with its name and title.
      out.files = m.files.map((id) => {
        const f = this.#files.get(id);
        return f ? { id, name: f.name, title: f.title ?? f.name } : { id };
      });
    }
    return out;
  }

  /** Resolves the `channel` argument: must exist; a user id means the DM with that user. */
  #channel(value: unknown): string {
    const channel = nonEmpty(value);
    if (channel === undefined || this.unknownChannels.has(channel)) {
      throw new ApiFailure("channel_not_found");
    }
    if (/^[UW]/.test(channel)) return `D${channel.slice(1)}`;
    return channel;
  }

  #requireMember(channel: string): void {
    if (this.notInChannel.has(channel)) throw new ApiFailure("not_in_channel");
  }

  #validate(problem: Problem | undefined): void {
    if (problem) throw invalid(problem);
  }

  #ownMessage(channel: string, ts: unknown, notOwn: string): StoredMessage {
    const key = str(ts);
    const message = key === undefined ? undefined : this.#messages.get(channel)?.get(key);
    if (!message || message.deleted) throw new ApiFailure("message_not_found");
    if (message.user !== this.botUserId) throw new ApiFailure(notOwn);
    return message;
  }

  #channelObject(id: string): Record<string, unknown> {
    const kind = channelKind(id);
    return {
      id,
      name: this.#channelNames.get(id) ?? id.toLowerCase(),
      is_channel: kind === "channels",
      is_group: kind === "groups",
      is_im: kind === "im",
      is_mpim: false,
      is_private: kind !== "channels",
      is_archived: false,
      is_member: !this.notInChannel.has(id),
      context_team_id: this.teamId,
    };
  }

  #clearStatus(channel: string, threadTs: string | undefined): void {
    if (threadTs !== undefined) this.#currentStatus.delete(`${channel}/${threadTs}`);
  }

  #applyChunks(message: StoredMessage, markdownText: string | undefined, chunks: unknown): void {
    message.chunks ??= [];
    if (markdownText !== undefined) {
      message.text += markdownText;
      message.chunks.push({ type: "markdown_text", text: markdownText });
    }
    if (Array.isArray(chunks)) {
      for (const chunk of chunks) {
        message.chunks.push(clone(chunk));
        if (isRecord(chunk) && chunk.type === "markdown_text" && typeof chunk.text === "string") {
          message.text += chunk.text;
        }
      }
    }
    message.markdown_text = message.text;
  }

  // -------------------------------------------------------------------------------------------------
  // Methods
  // -------------------------------------------------------------------------------------------------

  #buildHandlers(): Map<string, Handler> {
    const h = new Map<string, Handler>();

    h.set("api.test", (args) => ({ args }));

    h.set("auth.test", () => ({
      url: this.teamUrl,
      team: this.teamName,
      user: this.botName,
      team_id: this.teamId,
      user_id: this.botUserId,
      bot_id: this.botId,
      app_id: this.appId,
      is_enterprise_install: false,
    }));

    h.set("chat.postMessage", (args) => {
      const channel = this.#channel(args.channel);
      this.#requireMember(channel);
      this.#validate(validateMessageContent(args, this.#codes));
      const threadTs = nonEmpty(args.thread_ts);
      const markdownText = str(args.markdown_text);
      const message = this.#store({
        channel,
        ts: this.#nextTs(),
        user: this.botUserId,
        bot_id: this.botId,
        app_id: this.appId,
        text: str(args.text) ?? markdownText ?? "",
      });
      if (threadTs !== undefined) message.thread_ts = threadTs;
      if (markdownText !== undefined) message.markdown_text = markdownText;
      if (Array.isArray(args.blocks)) message.blocks = clone(args.blocks);
      if (args.metadata !== undefined) message.metadata = clone(args.metadata);
      if (str(args.reply_broadcast) === "true") message.reply_broadcast = true;
      this.#clearStatus(channel, threadTs);
      return { channel, ts: message.ts, message: this.#wire(message) };
    });

    h.set("chat.update", (args) => {
      const channel = this.#channel(args.channel);
      const message = this.#ownMessage(channel, args.ts, "cant_update_message");
      this.#validate(validateMessageContent(args, this.#codes));
      const markdownText = str(args.markdown_text);
      if (markdownText !== undefined) {
        message.text = markdownText;
        message.markdown_text = markdownText;
        delete message.blocks;
      } else {
        const text = str(args.text);
        if (text !== undefined) message.text = text;
        delete message.markdown_text;
        // Slack keeps the previous blocks when `blocks` is omitted; an empty array removes them.
        if (Array.isArray(args.blocks)) {
          if (args.blocks.length === 0) delete message.blocks;
          else message.blocks = clone(args.blocks);
        }
      }
      if (args.metadata !== undefined) message.metadata = clone(args.metadata);
      message.edited = { user: this.botUserId, ts: this.#nextTs() };
      return { channel, ts: message.ts, text: message.text, message: this.#wire(message) };
    });

    h.set("chat.delete", (args) => {
      const channel = this.#channel(args.channel);
      const message = this.#ownMessage(channel, args.ts, "cant_delete_message");
      message.deleted = true;
      return { channel, ts: message.ts };
    });

    h.set("chat.postEphemeral", (args) => {
      const channel = this.#channel(args.channel);
      const user = nonEmpty(args.user);
      if (user === undefined) throw new ApiFailure("user_not_found");
      this.#requireMember(channel);
      this.#validate(validateMessageContent(args, this.#codes));
      const markdownText = str(args.markdown_text);
      const ephemeral: SlackEphemeral = {
        channel,
        user,
        message_ts: this.#nextTs(),
        text: str(args.text) ?? markdownText ?? "",
      };
      const threadTs = nonEmpty(args.thread_ts);
      if (threadTs !== undefined) ephemeral.thread_ts = threadTs;
      if (markdownText !== undefined) ephemeral.markdown_text = markdownText;
      if (Array.isArray(args.blocks)) ephemeral.blocks = clone(args.blocks);
      this.#ephemerals.push(ephemeral);
      return { message_ts: ephemeral.message_ts };
    });

    h.set("chat.getPermalink", (args) => {
      const channel = this.#channel(args.channel);
      const ts = nonEmpty(args.message_ts);
      if (ts === undefined) throw new ApiFailure("message_not_found");
      const message = this.#messages.get(channel)?.get(ts);
      if (message?.deleted) throw new ApiFailure("message_not_found");
      const p = `p${ts.replace(".", "")}`;
      const thread =
        message?.thread_ts !== undefined && message.thread_ts !== ts
          ? `?thread_ts=${message.thread_ts}&cid=${channel}`
          : "";
      return { channel, permalink: `${this.teamUrl}archives/${channel}/${p}${thread}` };
    });

    h.set("chat.startStream", (args) => {
      const channel = this.#channel(args.channel);
      this.#requireMember(channel);
      const threadTs = nonEmpty(args.thread_ts);
      if (threadTs === undefined) {
        throw invalid({
          error: "invalid_arguments",
          message: "missing required field: thread_ts",
          pointer: "/thread_ts",
        });
      }
      if (!channel.startsWith("D")) {
        if (nonEmpty(args.recipient_user_id) === undefined) {
          throw new ApiFailure("missing_recipient_user_id");
        }
        if (nonEmpty(args.recipient_team_id) === undefined) {
          throw new ApiFailure("missing_recipient_team_id");
        }
      }
      const markdownText = str(args.markdown_text);
      this.#validateStreamText(markdownText, args.chunks);
      const message = this.#store({
        channel,
        ts: this.#nextTs(),
        thread_ts: threadTs,
        user: this.botUserId,
        bot_id: this.botId,
        app_id: this.appId,
        text: "",
        streaming_state: "in_progress",
      });
      this.#applyChunks(message, markdownText, args.chunks);
      this.#clearStatus(channel, threadTs);
      return { channel, ts: message.ts };
    });

    h.set("chat.appendStream", (args) => {
      const channel = this.#channel(args.channel);
      const message = this.#streaming(channel, args.ts);
      const markdownText = str(args.markdown_text);
      if (markdownText === undefined && !Array.isArray(args.chunks)) {
        throw invalid({ error: "no_text", message: "markdown_text or chunks is required" });
      }
      this.#validateStreamText(markdownText, args.chunks);
      this.#applyChunks(message, markdownText, args.chunks);
      return { channel, ts: message.ts };
    });

    h.set("chat.stopStream", (args) => {
      const channel = this.#channel(args.channel);
      const message = this.#streaming(channel, args.ts);
      const markdownText = str(args.markdown_text);
      this.#validateStreamText(markdownText, args.chunks);
      if (args.blocks !== undefined)
        this.#validate(validateBlocks(args.blocks, "/blocks", this.#codes));
      this.#applyChunks(message, markdownText, args.chunks);
      if (Array.isArray(args.blocks)) message.blocks = clone(args.blocks);
      if (args.metadata !== undefined) message.metadata = clone(args.metadata);
      message.streaming_state = "completed";
      return { channel, ts: message.ts, message: this.#wire(message) };
    });

    h.set("assistant.threads.setStatus", (args) => {
      const channel = this.#channel(args.channel_id);
      const threadTs = nonEmpty(args.thread_ts);
      if (threadTs === undefined) throw new ApiFailure("invalid_thread_ts");
      const status = str(args.status);
      if (status === undefined) {
        throw invalid({
          error: "invalid_arguments",
          message: "missing required field: status",
          pointer: "/status",
        });
      }
      const loading = args.loading_messages;
      if (loading !== undefined) {
        if (!Array.isArray(loading) || loading.length > SLACK_LIMITS.loadingMessagesMax) {
          throw invalid({
            error: "invalid_arguments",
            message: `loading_messages must be an array of at most ${SLACK_LIMITS.loadingMessagesMax} items`,
            pointer: "/loading_messages",
          });
        }
      }
      const record: AssistantStatus = { channel, thread_ts: threadTs, status, at: this.#now() };
      if (Array.isArray(loading)) record.loading_messages = clone(loading);
      this.assistantStatuses.push(record);
      if (status === "") this.#currentStatus.delete(`${channel}/${threadTs}`);
      else this.#currentStatus.set(`${channel}/${threadTs}`, status);
      return {};
    });

    h.set("reactions.add", (args) => {
      const { key, name } = this.#reactionTarget(args);
      let byName = this.#reactions.get(key);
      if (!byName) {
        byName = new Map();
        this.#reactions.set(key, byName);
      }
      const users = byName.get(name) ?? new Set<string>();
      if (users.has(this.botUserId)) throw new ApiFailure("already_reacted");
      users.add(this.botUserId);
      byName.set(name, users);
      return {};
    });

    h.set("reactions.remove", (args) => {
      const { key, name } = this.#reactionTarget(args);
      const users = this.#reactions.get(key)?.get(name);
      if (!users?.has(this.botUserId)) throw new ApiFailure("no_reaction");
      users.delete(this.botUserId);
      return {};
    });

    h.set("users.info", (args) => {
      const id = nonEmpty(args.user);
      const user = id === undefined ? undefined : this.#users.get(id);
      if (!user) throw new ApiFailure("user_not_found");
      const realName = user.real_name ?? user.name;
      return {
        user: {
          id: user.id,
          team_id: user.team_id ?? this.teamId,
          name: user.name,
          real_name: realName,
          deleted: user.deleted ?? false,
          is_admin: user.is_admin ?? false,
          is_owner: user.is_owner ?? false,
          is_primary_owner: false,
          is_restricted: false,
          is_ultra_restricted: false,
          is_bot: user.is_bot ?? false,
          is_app_user: false,
          tz: user.tz ?? "Europe/London",
          profile: { display_name: user.name, real_name: realName },
        },
      };
    });

    h.set("conversations.info", (args) => {
      const channel = this.#channel(args.channel);
      return { channel: this.#channelObject(channel) };
    });

    h.set("conversations.join", (args) => {
      const channel = this.#channel(args.channel);
      if (channelKind(channel) !== "channels") {
        throw new ApiFailure("method_not_supported_for_channel_type");
      }
      const alreadyIn = !this.notInChannel.has(channel);
      this.notInChannel.delete(channel);
      return alreadyIn
        ? { channel: this.#channelObject(channel), already_in_channel: true }
        : { channel: this.#channelObject(channel) };
    });

    h.set("conversations.replies", (args) => {
      const channel = this.#channel(args.channel);
      this.#requireMember(channel);
      const ts = nonEmpty(args.ts);
      const messages = ts === undefined ? [] : this.thread(channel, ts);
      if (messages.length === 0) throw new ApiFailure("thread_not_found");
      return {
        messages: messages.map((m) => this.#wire(m)),
        has_more: false,
        response_metadata: { next_cursor: "" },
      };
    });

    h.set("conversations.history", (args) => {
      const channel = this.#channel(args.channel);
      this.#requireMember(channel);
      return {
        messages: this.messages(channel)
          .reverse()
          .map((m) => this.#wire(m)),
        has_more: false,
        response_metadata: { next_cursor: "" },
      };
    });

    h.set("files.getUploadURLExternal", (args) => {
      const filename = nonEmpty(args.filename);
      const length = Number(str(args.length));
      if (filename === undefined || !Number.isInteger(length) || length < 0) {
        throw invalid({
          error: "invalid_arguments",
          message: "filename and an integer length are required",
        });
      }
      const id = this.#nextFileId();
      const file: StoredFile = {
        id,
        name: filename,
        declaredLength: length,
        bytes: Buffer.alloc(0),
        uploaded: false,
        completed: false,
        shares: [],
        created: Math.floor(this.#now() / 1000),
      };
      const altText = str(args.alt_text);
      if (altText !== undefined) file.alt_text = altText;
      this.#files.set(id, file);
      return { upload_url: `${this.url}upload/v1/${id}`, file_id: id };
    });

    h.set("files.completeUploadExternal", (args) => {
      const entries = args.files;
      if (!Array.isArray(entries) || entries.length === 0) {
        throw invalid({
          error: "invalid_arguments",
          message: "files must be a non-empty JSON array of {id, title}",
          pointer: "/files",
        });
      }
      const channelArg = args.channel_id ?? args.channels;
      const channel = channelArg === undefined ? undefined : this.#channel(channelArg);
      if (channel !== undefined) this.#requireMember(channel);
      const threadTs = nonEmpty(args.thread_ts);
      if (args.blocks !== undefined)
        this.#validate(validateBlocks(args.blocks, "/blocks", this.#codes));
      const files: StoredFile[] = [];
      for (const [i, entry] of entries.entries()) {
        const id = isRecord(entry) ? str(entry.id) : undefined;
        const file = id === undefined ? undefined : this.#files.get(id);
        if (!file?.uploaded) {
          throw new ApiFailure("file_not_found", {
            response_metadata: {
              messages: [
                file
                  ? `[ERROR] no bytes were uploaded to the upload_url of ${file.id} [json-pointer:/files/${i}]`
                  : `[ERROR] unknown file id ${String(id)} [json-pointer:/files/${i}]`,
              ],
            },
          });
        }
        const title = isRecord(entry) ? str(entry.title) : undefined;
        if (title !== undefined) file.title = title;
        files.push(file);
      }
      const initialComment = str(args.initial_comment);
      let messageTs: string | undefined;
      if (channel !== undefined) {
        const message = this.#store({
          channel,
          ts: this.#nextTs(),
          user: this.botUserId,
          bot_id: this.botId,
          app_id: this.appId,
          text: initialComment ?? "",
          files: files.map((f) => f.id),
        });
        if (threadTs !== undefined) message.thread_ts = threadTs;
        if (Array.isArray(args.blocks)) message.blocks = clone(args.blocks);
        messageTs = message.ts;
      }
      for (const file of files) {
        file.completed = true;
        if (channel !== undefined && messageTs !== undefined) {
          const share: FileShare = { channel, message_ts: messageTs };
          if (threadTs !== undefined) share.thread_ts = threadTs;
          if (initialComment !== undefined) share.initial_comment = initialComment;
          file.shares.push(share);
          if (file.channel === undefined) {
            file.channel = channel;
            if (threadTs !== undefined) file.thread_ts = threadTs;
          }
        }
      }
      return {
        files: files.map((f) => ({
          id: f.id,
          created: f.created,
          name: f.name,
          title: f.title ?? f.name,
          size: f.bytes.length,
          user: this.botUserId,
          channels: channel === undefined ? [] : [channel],
          url_private: `${this.url}files-pri/${this.teamId}-${f.id}/${encodeURIComponent(f.name)}`,
          permalink: `${this.teamUrl}files/${this.botUserId}/${f.id}/${encodeURIComponent(f.name)}`,
        })),
      };
    });

    return h;
  }

  #validateStreamText(markdownText: string | undefined, chunks: unknown): void {
    if (markdownText !== undefined && markdownText.length > SLACK_LIMITS.markdownTextMax) {
      throw invalid({
        error: "msg_too_long",
        message: `markdown_text is ${markdownText.length} characters; at most ${SLACK_LIMITS.markdownTextMax} allowed`,
      });
    }
    this.#validate(validateChunks(chunks, this.#codes));
  }

  #streaming(channel: string, ts: unknown): StoredMessage {
    const message = this.#ownMessage(channel, ts, "cant_update_message");
    if (message.streaming_state !== "in_progress") {
      throw new ApiFailure(message.streamEndError ?? "message_not_in_streaming_state");
    }
    return message;
  }

  #reactionTarget(args: SlackArgs): { key: string; name: string } {
    const channel = this.#channel(args.channel);
    const ts = nonEmpty(args.timestamp);
    const name = nonEmpty(args.name);
    if (name === undefined) throw new ApiFailure("invalid_name");
    if (ts === undefined) throw new ApiFailure("message_not_found");
    // Lenient on purpose: messages written by people are often unknown to the double, so reacting to
    // an unknown ts succeeds; a deleted message does not.
    if (this.#messages.get(channel)?.get(ts)?.deleted) throw new ApiFailure("message_not_found");
    return { key: `${channel}/${ts}`, name: name.replace(/^:|:$/g, "") };
  }
}

/** Starts a LocalSlack on 127.0.0.1:<ephemeral port>. Remember `await slack.close()`. */
export async function startLocalSlack(options: LocalSlackOptions = {}): Promise<LocalSlack> {
  const slack = new LocalSlack(options);
  await slack.listen();
  return slack;
}
