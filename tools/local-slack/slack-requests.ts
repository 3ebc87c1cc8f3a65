/**
 * Sends requests to a Bolt HTTP receiver exactly the way Slack does: signed with the signing secret
 * (`X-Slack-Signature: v0=<hex HMAC-SHA256(secret, "v0:<ts>:<raw body>")>`,
 * `X-Slack-Request-Timestamp: <unix seconds>`), with Slack's content types and payload shapes.
 *
 * Every helper can FORGE the request (signature made with another secret) or make it STALE (timestamp
 * six minutes old); Bolt must answer both with 401.
 *
 * Note: Bolt compares the content type EXACTLY with "application/x-www-form-urlencoded" - a
 * "; charset=utf-8" suffix makes it parse the form body as JSON and answer 400 - so the helpers send
 * exactly what Slack sends.
 */
import { createHmac, randomBytes } from "node:crypto";

export const FORM_CONTENT_TYPE = "application/x-www-form-urlencoded";
export const JSON_CONTENT_TYPE = "application/json";
export const DEFAULT_EVENTS_PATH = "/slack/events";

export interface SlackHttpResponse {
  status: number;
  /** The response body as text. */
  body: string;
  /** The parsed body when it is JSON. */
  json?: unknown;
  headers: Headers;
}

export interface SignOptions {
  /** Sign with a different secret, as an attacker would. */
  forge?: boolean;
  /** Use a timestamp 6 minutes in the past (Bolt rejects more than 5). */
  stale?: boolean;
  /** Explicit request timestamp in unix seconds (overrides `stale`). */
  timestamp?: number;
  /** Explicit X-Slack-Signature header value (overrides signing). */
  signature?: string;
  /** Extra headers. */
  headers?: Record<string, string>;
  /** Abort the request after this many ms (default 10,000). */
  timeoutMs?: number;
}

/** `v0=` + hex HMAC-SHA256(signingSecret, `v0:${timestamp}:${rawBody}`). */
export function signSlackRequest(
  signingSecret: string,
  timestamp: number,
  rawBody: string,
): string {
  const hmac = createHmac("sha256", signingSecret).update(`v0:${timestamp}:${rawBody}`);
  return `v0=${hmac.digest("hex")}`;
}

/** The headers Slack sends for a body: content type, timestamp and signature. */
export function slackSignatureHeaders(
  signingSecret: string,
  rawBody: string,
  contentType: string,
  options: SignOptions = {},
): Record<string, string> {
  const now = Math.floor(Date.now() / 1000);
  const timestamp = options.timestamp ?? (options.stale ? now - 6 * 60 : now);
  const secret = options.forge ? `forged-${signingSecret}-forged` : signingSecret;
  return {
    "content-type": contentType,
    "x-slack-request-timestamp": String(timestamp),
    "x-slack-signature": options.signature ?? signSlackRequest(secret, timestamp, rawBody),
    "user-agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
    ...options.headers,
  };
}

/** `http://host:port` → `http://host:port/slack/events`; a URL that has a path is used as is. */
export function eventsUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.pathname === "/" || parsed.pathname === "") parsed.pathname = DEFAULT_EVENTS_PATH;
  return parsed.toString();
}

/** POSTs a raw body with Slack's signature headers. */
export async function sendSignedRequest(
  url: string,
  signingSecret: string,
  rawBody: string,
  contentType: string,
  options: SignOptions = {},
): Promise<SlackHttpResponse> {
  const response = await fetch(eventsUrl(url), {
    method: "POST",
    headers: slackSignatureHeaders(signingSecret, rawBody, contentType, options),
    body: rawBody,
    signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
  });
  const body = await response.text();
  const result: SlackHttpResponse = { status: response.status, body, headers: response.headers };
  if (body !== "") {
    try {
      result.json = JSON.parse(body);
    } catch {
      // not JSON
    }
  }
  return result;
}

function randomDigits(n: number): string {
  let out = "";
  for (const byte of randomBytes(n)) out += String(byte % 10);
  return out;
}

function triggerId(): string {
  return `${randomDigits(13)}.${randomDigits(13)}.${randomBytes(16).toString("hex")}`;
}

// ---------------------------------------------------------------------------------------------------
// Slash commands
// ---------------------------------------------------------------------------------------------------

export interface SlashCommandInput {
  command?: string;
  text: string;
  team_id: string;
  user_id: string;
  user_name?: string;
  channel_id: string;
  channel_name?: string;
  team_domain?: string;
  response_url?: string;
  trigger_id?: string;
  api_app_id?: string;
  /** Enterprise Grid only. */
  enterprise_id?: string;
  enterprise_name?: string;
  /** The app is installed org-wide on the Grid organisation (sent as "true"/"false"). */
  is_enterprise_install?: boolean;
}

/** The form fields Slack posts for a slash command. */
export function slashCommandFields(input: SlashCommandInput): Record<string, string> {
  const fields: Record<string, string> = {
    token: "legacy-verification-token",
    team_id: input.team_id,
    team_domain: input.team_domain ?? "local-slack",
  };
  if (input.enterprise_id !== undefined) {
    fields.enterprise_id = input.enterprise_id;
    fields.enterprise_name = input.enterprise_name ?? "Local Grid";
  }
  Object.assign(fields, {
    channel_id: input.channel_id,
    channel_name: input.channel_name ?? input.channel_id.toLowerCase(),
    user_id: input.user_id,
    user_name: input.user_name ?? input.user_id.toLowerCase(),
    command: input.command ?? "/task",
    text: input.text,
    api_app_id: input.api_app_id ?? "A0001",
    is_enterprise_install: String(input.is_enterprise_install ?? false),
    response_url:
      input.response_url ??
      `https://hooks.slack.com/commands/${input.team_id}/${randomDigits(13)}/${randomBytes(12).toString("hex")}`,
    trigger_id: input.trigger_id ?? triggerId(),
  });
  return fields;
}

/** Sends a slash command (application/x-www-form-urlencoded), as Slack does. */
export function sendSlashCommand(
  url: string,
  signingSecret: string,
  input: SlashCommandInput,
  options: SignOptions = {},
): Promise<SlackHttpResponse> {
  const body = new URLSearchParams(slashCommandFields(input)).toString();
  return sendSignedRequest(url, signingSecret, body, FORM_CONTENT_TYPE, options);
}

// ---------------------------------------------------------------------------------------------------
// Events API
// ---------------------------------------------------------------------------------------------------

export interface EventInput {
  event_id: string;
  team_id: string;
  api_app_id?: string;
  /** The inner event, e.g. `{ type: "message", channel, user, text, ts, channel_type }`. */
  event: Record<string, unknown>;
  event_time?: number;
  /** Defaults to one authorization for the bot user "UBOT" of `team_id`. */
  authorizations?: Record<string, unknown>[];
  enterprise_id?: string;
  /** An org-wide install's event (Enterprise Grid). */
  is_enterprise_install?: boolean;
}

export interface EventOptions extends SignOptions {
  /** Sets `x-slack-retry-num` (Slack's retries are 1, 2, 3). */
  retryNum?: number;
  /** Sets `x-slack-retry-reason`, e.g. "http_timeout". Defaults to "http_timeout" when retryNum is set. */
  retryReason?: string;
}

/** The event_callback envelope Slack posts. */
export function eventEnvelope(input: EventInput): Record<string, unknown> {
  const eventTime = input.event_time ?? Math.floor(Date.now() / 1000);
  const event = { event_ts: `${eventTime}.000100`, ...input.event };
  return {
    token: "legacy-verification-token",
    team_id: input.team_id,
    ...(input.enterprise_id === undefined ? {} : { enterprise_id: input.enterprise_id }),
    ...(input.is_enterprise_install === undefined
      ? {}
      : { is_enterprise_install: input.is_enterprise_install }),
    api_app_id: input.api_app_id ?? "A0001",
    event,
    type: "event_callback",
    event_id: input.event_id,
    event_time: eventTime,
    authorizations: input.authorizations ?? [
      {
        enterprise_id: input.enterprise_id ?? null,
        team_id: input.team_id,
        user_id: "UBOT",
        is_bot: true,
        is_enterprise_install: input.is_enterprise_install ?? false,
      },
    ],
    is_ext_shared_channel: false,
    event_context: `4-${Buffer.from(input.event_id).toString("base64url")}`,
  };
}

/** Sends an Events API event_callback (JSON), optionally as one of Slack's retries. */
export function sendEvent(
  url: string,
  signingSecret: string,
  input: EventInput,
  options: EventOptions = {},
): Promise<SlackHttpResponse> {
  const { retryNum, retryReason, ...sign } = options;
  const headers: Record<string, string> = { ...sign.headers };
  if (retryNum !== undefined) {
    headers["x-slack-retry-num"] = String(retryNum);
    headers["x-slack-retry-reason"] = retryReason ?? "http_timeout";
  } else if (retryReason !== undefined) {
    headers["x-slack-retry-reason"] = retryReason;
  }
  const body = JSON.stringify(eventEnvelope(input));
  return sendSignedRequest(url, signingSecret, body, JSON_CONTENT_TYPE, { ...sign, headers });
}

/** Sends the url_verification handshake; Bolt answers `{ challenge }`. */
export function sendUrlVerification(
  url: string,
  signingSecret: string,
  challenge = "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
  options: SignOptions = {},
): Promise<SlackHttpResponse> {
  const body = JSON.stringify({
    token: "legacy-verification-token",
    challenge,
    type: "url_verification",
  });
  return sendSignedRequest(url, signingSecret, body, JSON_CONTENT_TYPE, options);
}

// ---------------------------------------------------------------------------------------------------
// Interactivity
// ---------------------------------------------------------------------------------------------------

export interface BlockActionInput {
  team_id: string;
  user_id: string;
  user_name?: string;
  channel_id: string;
  /** ts of the message carrying the button. */
  message_ts: string;
  /** Thread of that message, if it is a reply. */
  thread_ts?: string;
  action_id: string;
  value: string;
  block_id?: string;
  /** Button label. */
  button_text?: string;
  /** The element's type: `button` unless given (`feedback_buttons` for Slack's feedback buttons). */
  action_type?: string;
  response_url?: string;
  trigger_id?: string;
  api_app_id?: string;
  /** The message as Slack shows it to the app (text/blocks); ts/thread_ts are filled in. */
  message?: Record<string, unknown>;
  /** The message author; defaults to the bot "UBOT". */
  message_user?: string;
}

/** The `block_actions` payload Slack posts when a button in a message is clicked. */
export function blockActionPayload(input: BlockActionInput): Record<string, unknown> {
  const now = Date.now() / 1000;
  const blockId = input.block_id ?? "actions";
  const container: Record<string, unknown> = {
    type: "message",
    message_ts: input.message_ts,
    channel_id: input.channel_id,
    is_ephemeral: false,
  };
  if (input.thread_ts !== undefined) container.thread_ts = input.thread_ts;
  const message: Record<string, unknown> = {
    type: "message",
    user: input.message_user ?? "UBOT",
    text: "",
    ...input.message,
    ts: input.message_ts,
  };
  if (input.thread_ts !== undefined) message.thread_ts = input.thread_ts;
  const userName = input.user_name ?? input.user_id.toLowerCase();
  return {
    type: "block_actions",
    user: { id: input.user_id, username: userName, name: userName, team_id: input.team_id },
    api_app_id: input.api_app_id ?? "A0001",
    token: "legacy-verification-token",
    container,
    trigger_id: input.trigger_id ?? triggerId(),
    team: { id: input.team_id, domain: "local-slack" },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: input.channel_id, name: input.channel_id.toLowerCase() },
    message,
    state: { values: {} },
    response_url:
      input.response_url ??
      `https://hooks.slack.com/actions/${input.team_id}/${randomDigits(13)}/${randomBytes(12).toString("hex")}`,
    actions: [
      {
        action_id: input.action_id,
        block_id: blockId,
        text: { type: "plain_text", text: input.button_text ?? "Button", emoji: true },
        value: input.value,
        type: input.action_type ?? "button",
        action_ts: now.toFixed(6),
      },
    ],
  };
}

/** Sends a button click (form body `payload=<json>`), as Slack does. */
export function sendBlockAction(
  url: string,
  signingSecret: string,
  input: BlockActionInput,
  options: SignOptions = {},
): Promise<SlackHttpResponse> {
  const body = new URLSearchParams({
    payload: JSON.stringify(blockActionPayload(input)),
  }).toString();
  return sendSignedRequest(url, signingSecret, body, FORM_CONTENT_TYPE, options);
}

/** Sends an interactivity payload (form body `payload=<json>`), as Slack does. */
function sendPayload(
  url: string,
  signingSecret: string,
  payload: Record<string, unknown>,
  options: SignOptions,
): Promise<SlackHttpResponse> {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  return sendSignedRequest(url, signingSecret, body, FORM_CONTENT_TYPE, options);
}

export interface ShortcutInput {
  team_id: string;
  user_id: string;
  callback_id: string;
  trigger_id?: string;
  /** A message shortcut: the message it was used on. */
  message?: { channel: string; ts: string; text: string; user: string; thread_ts?: string };
}

/** A global shortcut (`shortcut`) or, with `message`, a message shortcut (`message_action`). */
export function shortcutPayload(input: ShortcutInput): Record<string, unknown> {
  const user = { id: input.user_id, username: input.user_id.toLowerCase(), team_id: input.team_id };
  const common = {
    callback_id: input.callback_id,
    trigger_id: input.trigger_id ?? triggerId(),
    user,
    team: { id: input.team_id, domain: "local-slack" },
    api_app_id: "A0001",
    token: "legacy-verification-token",
    is_enterprise_install: false,
    action_ts: (Date.now() / 1000).toFixed(6),
  };
  const m = input.message;
  if (!m) return { type: "shortcut", ...common };
  return {
    type: "message_action",
    ...common,
    channel: { id: m.channel, name: m.channel.toLowerCase() },
    message_ts: m.ts,
    message: {
      type: "message",
      user: m.user,
      text: m.text,
      ts: m.ts,
      ...(m.thread_ts ? { thread_ts: m.thread_ts } : {}),
    },
    response_url: `https://hooks.slack.com/app/${input.team_id}/${randomDigits(13)}/${randomBytes(12).toString("hex")}`,
  };
}

export function sendShortcut(
  url: string,
  signingSecret: string,
  input: ShortcutInput,
  options: SignOptions = {},
): Promise<SlackHttpResponse> {
  return sendPayload(url, signingSecret, shortcutPayload(input), options);
}

export interface ViewSubmissionInput {
  team_id: string;
  user_id: string;
  /** The view as views.open answered it (id, callback_id, private_metadata, hash…). */
  view: Record<string, unknown>;
  /** `state.values`: block id → action id → the element's value object. */
  values: Record<string, Record<string, Record<string, unknown>>>;
}

/** The `view_submission` payload Slack posts when a modal's submit button is pressed. */
export function viewSubmissionPayload(input: ViewSubmissionInput): Record<string, unknown> {
  return {
    type: "view_submission",
    team: { id: input.team_id, domain: "local-slack" },
    user: { id: input.user_id, username: input.user_id.toLowerCase(), team_id: input.team_id },
    api_app_id: "A0001",
    token: "legacy-verification-token",
    trigger_id: triggerId(),
    view: { ...input.view, state: { values: input.values } },
    response_urls: [],
    is_enterprise_install: false,
  };
}

export function sendViewSubmission(
  url: string,
  signingSecret: string,
  input: ViewSubmissionInput,
  options: SignOptions = {},
): Promise<SlackHttpResponse> {
  return sendPayload(url, signingSecret, viewSubmissionPayload(input), options);
}

/** The `view_closed` payload Slack posts when a modal opened with `notify_on_close` is closed. */
export function viewClosedPayload(
  input: Omit<ViewSubmissionInput, "values">,
): Record<string, unknown> {
  return {
    type: "view_closed",
    team: { id: input.team_id, domain: "local-slack" },
    user: { id: input.user_id, username: input.user_id.toLowerCase(), team_id: input.team_id },
    api_app_id: "A0001",
    token: "legacy-verification-token",
    view: input.view,
    is_cleared: false,
    is_enterprise_install: false,
  };
}

export function sendViewClosed(
  url: string,
  signingSecret: string,
  input: Omit<ViewSubmissionInput, "values">,
  options: SignOptions = {},
): Promise<SlackHttpResponse> {
  return sendPayload(url, signingSecret, viewClosedPayload(input), options);
}

export interface ViewActionInput {
  team_id: string;
  user_id: string;
  /** The view as Slack keeps it (views.open / views.update answered it). */
  view: Record<string, unknown>;
  action_id: string;
  value: string;
  block_id?: string;
}

/** The `block_actions` payload of a button pressed inside a modal. */
export function viewActionPayload(input: ViewActionInput): Record<string, unknown> {
  const user = { id: input.user_id, username: input.user_id.toLowerCase(), team_id: input.team_id };
  return {
    type: "block_actions",
    user,
    api_app_id: "A0001",
    token: "legacy-verification-token",
    container: { type: "view", view_id: input.view.id },
    trigger_id: triggerId(),
    team: { id: input.team_id, domain: "local-slack" },
    is_enterprise_install: false,
    view: input.view,
    actions: [
      {
        action_id: input.action_id,
        block_id: input.block_id ?? "actions",
        value: input.value,
        type: "button",
        action_ts: (Date.now() / 1000).toFixed(6),
      },
    ],
  };
}

export function sendViewAction(
  url: string,
  signingSecret: string,
  input: ViewActionInput,
  options: SignOptions = {},
): Promise<SlackHttpResponse> {
  return sendPayload(url, signingSecret, viewActionPayload(input), options);
}

type InputElement = Record<string, unknown> & { type?: unknown; action_id?: unknown };

/** An untouched input's value object, as Slack puts it in `state.values` on submission. */
function untouched(element: InputElement): Record<string, unknown> {
  const type = element.type;
  switch (type) {
    case "radio_buttons":
    case "static_select":
      return { type, selected_option: element.initial_option ?? null };
    case "checkboxes":
    case "multi_static_select":
      return { type, selected_options: element.initial_options ?? [] };
    case "multi_conversations_select":
      return { type, selected_conversations: element.initial_conversations ?? [] };
    case "conversations_select":
      return { type, selected_conversation: element.initial_conversation ?? null };
    default:
      return { type, value: element.initial_value ?? null };
  }
}

/**
 * `state.values` of a modal submitted as it was opened: Slack sends every input block, each with
 * its initial value. Spread what the person changed over it.
 */
export function viewState(
  view: Record<string, unknown>,
): Record<string, Record<string, Record<string, unknown>>> {
  const values: Record<string, Record<string, Record<string, unknown>>> = {};
  const blocks = Array.isArray(view.blocks) ? (view.blocks as Record<string, unknown>[]) : [];
  for (const block of blocks) {
    const element = block.element as InputElement | undefined;
    if (block.type !== "input" || typeof block.block_id !== "string" || !element) continue;
    if (typeof element.action_id !== "string") continue;
    values[block.block_id] = { [element.action_id]: untouched(element) };
  }
  return values;
}
