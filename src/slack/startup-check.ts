/** The one-workspace start-up check; a failure says why in words an operator can act on. */
import { type FetchFunction, LogLevel, WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import type { Config } from "../config/config.ts";
import { StartupError } from "../util/startup-error.ts";
import { baseClientOptions } from "./app.ts";
import { boltLogger } from "./bolt-logger.ts";
import { inCauses } from "./oauth/install-flow.ts";

/** `auth.test` with a quiet client (two quick retries): the token's workspace, or StartupError. */
export async function verifySlack(
  config: Config,
  token: string,
  logger: Logger,
  fetch: FetchFunction | undefined,
) {
  const client = new WebClient(token, {
    ...baseClientOptions(config, fetch),
    retryConfig: { retries: 2, minTimeout: 300, maxTimeout: 1000 },
    timeout: 10_000,
    logger: boltLogger(logger.child({ component: "slack-check" }, { level: "error" })),
    logLevel: LogLevel.ERROR,
  });
  const auth = await client.auth.test().catch((err: unknown) => {
    throw new StartupError(slackStartupProblem(err, config.slack.apiUrl));
  });
  // The team gate serves this workspace alone.
  if (!auth.team_id)
    throw new StartupError("Slack's auth.test named no workspace for the bot token.");
  return auth;
}

function slackStartupProblem(err: unknown, apiUrl: string | undefined): string {
  const where = apiUrl ?? "https://slack.com/api/";
  const e = err as { data?: { error?: unknown } };
  const platform = typeof e.data?.error === "string" ? e.data.error : undefined;
  if (platform === "invalid_auth" || platform === "not_authed" || platform === "account_inactive")
    return `Slack refused the bot token (${platform}): check SLACK_BOT_TOKEN (Bot User OAuth Token, xoxb-…, from the app's OAuth & Permissions page; reinstall the app if it was revoked).`;
  if (platform === "token_revoked" || platform === "token_expired")
    return `Slack says the bot token is no longer valid (${platform}): reinstall the app and set the new SLACK_BOT_TOKEN.`;
  if (platform !== undefined) return `Slack refused auth.test at start-up (${platform}).`;
  const proxyStatus = inCauses(err, (c) => {
    const status =
      typeof c.message === "string" ? /Proxy response \((\d{3})\)/.exec(c.message) : null;
    return status ? Number(status[1]) : undefined;
  });
  if (proxyStatus !== undefined)
    return proxyStatus === 407
      ? `Cannot reach Slack at ${where}: the proxy asks for credentials (407): check the user and password in HTTPS_PROXY (or HTTP_PROXY).`
      : `Cannot reach Slack at ${where}: the proxy refused to connect to it (${proxyStatus}): check HTTPS_PROXY, HTTP_PROXY and NO_PROXY.`;
  // A system error code (ENOTFOUND, ECONNREFUSED…).
  const code = inCauses(err, (c) =>
    typeof c.code === "string" && /^E[A-Z_]+$/.test(c.code) ? c.code : undefined,
  );
  if (code !== undefined)
    return `Cannot reach Slack at ${where} (${code}): check DNS, the network, HTTPS_PROXY, or SLACK_API_URL.`;
  return `Cannot reach Slack at ${where}: ${err instanceof Error ? err.message : String(err)}.`;
}
