/** Why start-up failed, in one line an operator can act on (printed as it is, no stack trace). */

/** Start-up failed for a reason one line can tell (printed as it is, with no stack trace). */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StartupError";
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
