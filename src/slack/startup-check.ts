/**
 * The one-workspace start-up check: `auth.test` with the configured bot token, and, when it
 * fails, why in words an operator can act on (never the token itself).
 */
import { type FetchFunction, LogLevel, WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import type { Config } from "../config/config.ts";
import { StartupError } from "../util/startup-error.ts";
import { boltLogger } from "./bolt-logger.ts";

/** `auth.test` with a quiet client (two quick retries): the bot token's workspace, or a StartupError. */
export async function verifySlack(
  config: Config,
  token: string,
  logger: Logger,
  fetch: FetchFunction | undefined,
) {
  const client = new WebClient(token, {
    ...(fetch ? { fetch } : {}),
    ...(config.slack.apiUrl ? { slackApiUrl: config.slack.apiUrl.replace(/\/?$/, "/") } : {}),
    retryConfig: { retries: 2, minTimeout: 300, maxTimeout: 1000 },
    timeout: 10_000,
    logger: boltLogger(logger.child({ component: "slack-check" }, { level: "error" })),
    logLevel: LogLevel.ERROR,
  });
  try {
    return await client.auth.test();
  } catch (err) {
    throw new StartupError(slackStartupProblem(err, config.slack.apiUrl));
  }
}

/** Why `auth.test` failed, in words an operator can act on; never the token itself. */
export function slackStartupProblem(err: unknown, apiUrl: string | undefined): string {
  const where = apiUrl ?? "https://slack.com/api/";
  const e = err as { data?: { error?: unknown }; original?: unknown };
  const platform = typeof e.data?.error === "string" ? e.data.error : undefined;
  if (platform === "invalid_auth" || platform === "not_authed" || platform === "account_inactive") {
    return `Slack refused the bot token (${platform}): check SLACK_BOT_TOKEN (Bot User OAuth Token, xoxb-…, from the app's OAuth & Permissions page; reinstall the app if it was revoked).`;
  }
  if (platform === "token_revoked" || platform === "token_expired") {
    return `Slack says the bot token is no longer valid (${platform}): reinstall the app and set the new SLACK_BOT_TOKEN.`;
  }
  if (platform !== undefined) return `Slack refused auth.test at start-up (${platform}).`;
  const proxyStatus = proxyRefusal(e.original ?? err);
  if (proxyStatus !== undefined) {
    return proxyStatus === 407
      ? `Cannot reach Slack at ${where}: the proxy asks for credentials (407): check the user and password in HTTPS_PROXY (or HTTP_PROXY).`
      : `Cannot reach Slack at ${where}: the proxy refused to connect to it (${proxyStatus}): check HTTPS_PROXY, HTTP_PROXY and NO_PROXY.`;
  }
  const cause = networkCode(e.original ?? err);
  if (cause !== undefined) {
    return `Cannot reach Slack at ${where} (${cause}): check DNS, the network, HTTPS_PROXY, or SLACK_API_URL.`;
  }
  return `Cannot reach Slack at ${where}: ${err instanceof Error ? err.message : String(err)}.`;
}

/** The status a proxy refused a tunnel with, from undici's error somewhere in the cause chain. */
function proxyRefusal(err: unknown): number | undefined {
  for (let e = err, depth = 0; e && depth < 5; depth++) {
    const { message, cause } = e as { message?: unknown; cause?: unknown };
    const status = typeof message === "string" ? /Proxy response \((\d{3})\)/.exec(message) : null;
    if (status) return Number(status[1]);
    e = cause;
  }
  return undefined;
}

/** The system error code (ENOTFOUND, ECONNREFUSED…) somewhere in an error's cause chain. */
function networkCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && depth < 5; depth++) {
    const { code, cause } = e as { code?: unknown; cause?: unknown };
    if (typeof code === "string" && /^E[A-Z_]+$/.test(code)) return code;
    e = cause;
  }
  return undefined;
}
