/**
 * An honest local double of the Slack Web API (entry point for test/ and bench/).
 *
 * A real `node:http` server on 127.0.0.1 (ephemeral port) that Bolt's `App` and `@slack/web-api`'s
 * `WebClient` talk to UNMODIFIED via `clientOptions: { slackApiUrl: slack.apiUrl }`. It answers the way
 * Slack answers (HTTP 200 with `{ ok, ... }` / `{ ok: false, error }`, 429 + `Retry-After` when rate
 * limited), keeps the resulting workspace state (messages, threads, ephemerals, reactions, files,
 * streams) and - the point of the double - REJECTS payloads that real Slack would reject (message and
 * Block Kit limits, markdown_text conflicts, missing stream recipients, channels the bot is not in).
 *
 * Limits, error codes and scopes follow Slack's public method pages (docs.slack.dev/reference/methods/
 * <method>, e.g. chat.postMessage: `text` up to 40,000 characters, at most 50 blocks, `markdown_text`
 * up to 12,000 characters and not combinable with `text`/`blocks`), the Block Kit reference and the
 * rate-limits page (docs.slack.dev/apis/web-api/rate-limits). Where Slack's answer is ambiguous the
 * chosen error code is noted next to the check (the two contested ones are configurable via
 * `options.errorCodes`). Lengths are counted in UTF-16 code units (`string.length`), which is never
 * fewer than Slack's character count, so a payload accepted here is not rejected for length by Slack.
 *
 * Layout: server.ts (router) → dispatch.ts (token, faults, rate tiers, scopes) → methods/* (one module
 * per method family, listed in methods/index.ts) over state.ts; inspection.ts backs the test API.
 * Several workspaces: tenancy.ts (each with its own bot and bot token; auth.test answers per token,
 * every recorded call names its token's team) and oauth.ts (the consent screen at
 * /oauth/v2/authorize and oauth.v2.access, with token rotation).
 *
 * Workflow Builder steps: `executeFunction` starts an execution of one of the app's steps (its token,
 * its `function_executed` event, sent like the other events); functions.completeSuccess and
 * functions.completeError end it once, with that token only (methods/functions.ts); `execution`
 * shows its outputs or error.
 *
 * Native streams end by themselves `streamLifetimeMs` after chat.startStream (default five minutes,
 * as on Slack), or when a test calls `expireStream` / `stopStreamByUser` (a person pressing stop).
 * Inspection: `thread` / `threadText` (a thread's messages in order, with the text they show),
 * `callCounts({ team })` (calls per method and workspace), `calls`, `waitFor`, `waitForCall`.
 *
 * Usage:
 *   const slack = await startLocalSlack({ notInChannel: new Set(["C_PRIVATE"]) });
 *   const app = new App({ token: slack.botToken, signingSecret, clientOptions: { slackApiUrl: slack.apiUrl } });
 *   ...
 *   const call = await slack.waitForCall((c) => c.method === "chat.postMessage");
 *   expect(slack.validationErrors).toEqual([]);
 *   await slack.close();
 */
export {
  streamedTextBytes,
  validateBlocks,
  validateMessageContent,
  validateStreamContent,
} from "./block-kit.ts";
export type { Problem } from "./errors.ts";
export type { LimitErrorCodes } from "./limits.ts";
export { SLACK_LIMITS } from "./limits.ts";
export { LocalSlack, startLocalSlack } from "./local-slack.ts";
export { SESSION_COOKIE, sessionCookie } from "./oauth.ts";
export type { OAuthAppOptions } from "./types.ts";
export type {
  BotIdentity,
  EnterpriseOptions,
  LocalEnterprise,
  LocalTeam,
  TeamOptions,
} from "./tenancy.ts";
export type { AgentSession, OpenedView } from "./state.ts";
export { DEFAULT_STREAM_LIFETIME_MS } from "./state.ts";
export { type CallCount, countCalls, type ThreadLine, visibleText } from "./inspection.ts";
export { deliverEvents, type EventDestination, uninstallEvents } from "./uninstall.ts";
export { VIEW_LIMITS, validateView } from "./view-kit.ts";
export type { MethodContext, MethodFamily, SlackMethod } from "./methods/registry.ts";
export type * from "./types.ts";
