// Slack's OAuth v2 install flow as the double plays it: the authorize page (Slack's consent
// screen, consenting at once for the signed-in workspace) issues a one-time code, and
// oauth.v2.access exchanges it for the workspace's bot token, or refreshes a rotating token.
// Shapes and error codes follow Slack's oauth.v2.access reference page and its token rotation
// guide (docs.slack.dev): codes live 10 minutes and work once; rotating bot tokens start with
// `xoxe.xoxb-`, refresh tokens with `xoxe-`, and expire after `expires_in` seconds (12 hours). A
// refresh answers a new token and a new refresh token, and the one it used stops working
// (`invalid_refresh_token`); tokens issued before keep working until they expire.
import { ApiFailure } from "./errors.ts";
import {
  type Caller,
  type LocalEnterprise,
  type LocalTeam,
  secret,
  type Tenancy,
} from "./tenancy.ts";
import type { OAuthAppOptions, SlackArgs } from "./types.ts";
import { str } from "./util.ts";

/** The app's OAuth settings in the double (Basic Information and OAuth & Permissions pages). */
/** The cookie of the double's "browser session": who is signed in to which workspace. */
export const SESSION_COOKIE = "local_slack_session";

/** The Cookie header value of a browser signed in to `teamId` (or an organisation) as `userId`. */
export function sessionCookie(teamId: string, userId: string): string {
  return `${SESSION_COOKIE}=${teamId}:${userId}`;
}

const CODE_TTL_MS = 10 * 60_000;

/** Where an install goes: one workspace, or (org-wide) an organisation. */
interface InstallTarget {
  readonly team?: LocalTeam;
  readonly enterprise?: LocalEnterprise;
  readonly scopes: readonly string[];
  readonly userId: string;
}

interface Grant extends InstallTarget {
  readonly redirectUri: string | undefined;
  readonly expiresAt: number;
  used: boolean;
}

/** What the authorize route answers: a redirect back to the app, or Slack's error page. */
export type AuthorizeOutcome =
  | { readonly status: 302; readonly location: string }
  | { readonly status: 400; readonly error: string };

export class LocalOAuth {
  clientId: string;
  clientSecret: string;
  /** Mutable: a test sets them once the app's port is known. */
  redirectUrls: string[];
  tokenRotation: boolean;
  tokenLifetimeS: number;
  readonly #tenancy: Tenancy;
  readonly #appId: string;
  readonly #now: () => number;
  readonly #grants = new Map<string, Grant>();
  readonly #refreshTokens = new Map<string, InstallTarget>();

  constructor(tenancy: Tenancy, appId: string, now: () => number, options: OAuthAppOptions = {}) {
    this.#tenancy = tenancy;
    this.#appId = appId;
    this.#now = now;
    this.clientId = options.clientId ?? "1111.2222";
    this.clientSecret = options.clientSecret ?? "local-slack-client-secret";
    this.redirectUrls = [...(options.redirectUrls ?? [])];
    this.tokenRotation = options.tokenRotation ?? false;
    this.tokenLifetimeS = options.tokenLifetimeS ?? 43_200;
  }

  /**
   * GET /oauth/v2/authorize: the workspace is the `team` parameter (a team, or an organisation
   * for an org-wide install), else the session cookie's, and the person its user.
   */
  authorize(url: URL, cookie: string | undefined): AuthorizeOutcome {
    const q = url.searchParams;
    if (q.get("client_id") !== this.clientId) return { status: 400, error: "invalid_client_id" };
    const asked = q.get("redirect_uri") ?? undefined;
    const redirect = asked ?? this.redirectUrls[0];
    if (redirect === undefined || !this.redirectUrls.some((u) => redirect.startsWith(u))) {
      return { status: 400, error: "bad_redirect_uri" };
    }
    const [sessionTeam, sessionUser] = sessionOf(cookie);
    const where = q.get("team") ?? sessionTeam;
    const team = where === undefined ? undefined : this.#tenancy.teams.get(where);
    const enterprise = where === undefined ? undefined : this.#tenancy.enterprises.get(where);
    if (!team && !enterprise) return { status: 400, error: "unknown_workspace" };
    const code = `${Math.floor(this.#now() / 1000)}.${secret(16)}`;
    this.#grants.set(code, {
      ...(team ? { team } : { enterprise }),
      scopes: (q.get("scope") ?? "").split(",").filter((s) => s !== ""),
      userId: sessionUser ?? "U0INSTALLER",
      redirectUri: asked,
      expiresAt: this.#now() + CODE_TTL_MS,
      used: false,
    });
    const back = new URL(redirect);
    back.searchParams.set("code", code);
    const state = q.get("state");
    if (state !== null) back.searchParams.set("state", state);
    return { status: 302, location: back.toString() };
  }

  /** oauth.v2.access: a code for an install's bot token, or a refresh token for a new one. */
  access(args: SlackArgs): Record<string, unknown> {
    if (str(args.client_id) !== this.clientId) throw new ApiFailure("invalid_client_id");
    if (str(args.client_secret) !== this.clientSecret) throw new ApiFailure("bad_client_secret");
    const grantType = str(args.grant_type) ?? "authorization_code";
    if (grantType === "refresh_token") return this.#refresh(str(args.refresh_token));
    if (grantType !== "authorization_code") throw new ApiFailure("invalid_grant_type");
    const code = str(args.code) ?? "";
    const grant = this.#grants.get(code);
    if (!grant || grant.used || grant.expiresAt <= this.#now()) {
      throw new ApiFailure("invalid_code");
    }
    if (grant.redirectUri !== undefined && str(args.redirect_uri) !== grant.redirectUri) {
      throw new ApiFailure("bad_redirect_uri");
    }
    grant.used = true;
    return { ...this.#issue(grant), authed_user: { id: grant.userId } };
  }

  /** A refresh token works once: it is spent here, and the answer carries the next one. */
  #refresh(refreshToken: string | undefined): Record<string, unknown> {
    const target = refreshToken === undefined ? undefined : this.#refreshTokens.get(refreshToken);
    if (!target || refreshToken === undefined) throw new ApiFailure("invalid_refresh_token");
    this.#refreshTokens.delete(refreshToken);
    return this.#issue(target, true);
  }

  /** The install's bot token: its stable one, or a new rotating one with a new refresh token. */
  #issue(target: InstallTarget, refreshing = false): Record<string, unknown> {
    const { team, enterprise } = target;
    const scopes = new Set(target.scopes);
    let caller: Caller;
    let rotation: Record<string, unknown> = {};
    if (this.tokenRotation || refreshing) {
      const lifetimeS = this.tokenLifetimeS;
      caller = this.#tenancy.grant(`xoxe.xoxb-1-${secret(24)}`, {
        ...target,
        scopes,
        expiresAt: this.#now() + lifetimeS * 1000,
      });
      const refresh = `xoxe-1-${secret(24)}`;
      this.#refreshTokens.set(refresh, target);
      rotation = { refresh_token: refresh, expires_in: lifetimeS };
    } else {
      const token = team?.botToken ?? enterprise?.botToken ?? "";
      caller = this.#tenancy.grant(token, { ...target, scopes, expiresAt: undefined });
    }
    const enterpriseId = team ? team.enterpriseId : enterprise?.id;
    const grid =
      enterpriseId === undefined ? undefined : this.#tenancy.enterprises.get(enterpriseId);
    return {
      access_token: caller.token,
      token_type: "bot",
      scope: [...scopes].join(","),
      bot_user_id: caller.bot.userId,
      app_id: this.#appId,
      team: team ? { id: team.id, name: team.name } : null,
      enterprise:
        enterpriseId === undefined ? null : { id: enterpriseId, name: grid?.name ?? enterpriseId },
      is_enterprise_install: team === undefined,
      ...rotation,
    };
  }
}

function sessionOf(cookie: string | undefined): [string | undefined, string | undefined] {
  const pair = (cookie ?? "")
    .split(";")
    .map((c) => c.trim())
    .find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  if (!pair) return [undefined, undefined];
  const [team, user] = pair.slice(SESSION_COOKIE.length + 1).split(":");
  return [team || undefined, user || undefined];
}
