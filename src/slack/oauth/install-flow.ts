/** Bolt's OAuth install flow, its `state` single-use; events of workspaces without an install. */
import { createHash } from "node:crypto";
import {
  type CallbackOptions,
  ClearStateStore,
  defaultCallbackFailure,
  defaultCallbackSuccess,
  InvalidStateError,
  type StateStore,
} from "@slack/oauth";
import { WebClient, type WebClientOptions } from "@slack/web-api";
import type { Logger } from "pino";
import {
  OAUTH_INSTALL_PATH,
  OAUTH_REDIRECT_PATH,
  type SlackOAuthConfig,
} from "../../config/workspaces.ts";
import {
  createInstallationStore,
  type InstallationKey,
  InstallationNotFoundError,
  InstallationUnreadableError,
} from "../../store/installations.ts";
import type { ThreadStore } from "../../store/types.ts";
import type { SealingKey } from "../../util/secret-box.ts";
import { boltLogger } from "../bolt-logger.ts";
import { teamPolicy } from "../gate/team.ts";
import { RefreshingInstallations, who } from "./token-refresh.ts";

/** The bot scopes an install asks for: manifest.yml's `oauth_config.scopes.bot` (a test keeps them equal). */
export const BOT_SCOPES: readonly string[] = [
  "app_mentions:read",
  "assistant:write",
  "chat:write",
  "commands",
  "channels:history",
  "channels:join",
  "channels:read",
  "groups:read",
  "groups:history",
  "im:history",
  "mpim:history",
  "files:read",
  "files:write",
  "im:write",
  "reactions:write",
  "users:read",
  "usergroups:read",
];

/** How long an install may take between the install page and Slack's redirect back. */
const STATE_TTL_S = 600;

/** Used `state` values are claimed under this pseudo-team (a team id starts with T). */
const STATE_CLAIMS = "_oauth";

/**
 * Bolt's signed `state` (a JWT with SLACK_STATE_SECRET, valid 10 minutes, checked against the
 * browser's cookie), made single-use: a state already redeemed is refused, on any instance.
 */
export function singleUseStateStore(
  secret: string,
  claims: Pick<ThreadStore, "claimOnce">,
): StateStore {
  const signed = new ClearStateStore(secret, STATE_TTL_S);
  return {
    generateStateParam: (options, now) => signed.generateStateParam(options, now),
    async verifyStateParam(now, state) {
      // Forged, altered or expired states fail here, before the store is asked anything.
      const options = await signed.verifyStateParam(now, state);
      const digest = createHash("sha256").update(state).digest("base64url");
      if (!(await claims.claimOnce(STATE_CLAIMS, `state:${digest}`, STATE_TTL_S * 1000))) {
        throw new InvalidStateError("The state parameter was already used.");
      }
      return options;
    },
  };
}

export type OAuthReceiverOptions = ReturnType<typeof oauthReceiverOptions>;

export function oauthReceiverOptions(
  oauth: SlackOAuthConfig,
  deps: {
    readonly store: ThreadStore;
    /** Seal the installations' tokens at rest (ENCRYPTION_KEY(S), required with OAuth). */
    readonly keys: readonly SealingKey[];
    readonly logger: Logger;
    readonly clientOptions: Omit<WebClientOptions, "logger" | "logLevel">;
  },
) {
  const { logger } = deps;
  const policy = teamPolicy(oauth);
  return {
    clientId: oauth.clientId,
    clientSecret: oauth.clientSecret,
    stateSecret: oauth.stateSecret,
    scopes: [...BOT_SCOPES],
    installationStore: new RefreshingInstallations(createInstallationStore(deps.store, deps.keys), {
      clientId: oauth.clientId,
      clientSecret: oauth.clientSecret,
      // Bounded: a refresh holds its lease (15 s) while it waits for Slack.
      client: new WebClient(undefined, {
        ...deps.clientOptions,
        timeout: 5000,
        retryConfig: { retries: 1 },
        logger: boltLogger(logger),
      }),
      leases: deps.store,
      logger,
    }),
    ...(oauth.redirectUri ? { redirectUri: oauth.redirectUri } : {}),
    installerOptions: {
      stateStore: singleUseStateStore(oauth.stateSecret, deps.store),
      installPath: OAUTH_INSTALL_PATH,
      redirectUriPath: OAUTH_REDIRECT_PATH,
      authorizationUrl: oauth.authorizeUrl,
      clientOptions: deps.clientOptions,
      callbackOptions: {
        // The operator's allow-list (TASK_ALLOWED_TEAMS): nothing of another workspace is kept.
        async afterInstallation(installation, _options, _req, res) {
          const team = installation.team?.id;
          const enterprise = installation.enterprise?.id;
          if (policy.allows(installation.isEnterpriseInstall ? undefined : team, enterprise))
            return true;
          logger.warn({ team, enterprise }, "refused an install: not in TASK_ALLOWED_TEAMS");
          res.writeHead(403, { "content-type": "text/html; charset=utf-8" });
          res.end(refusedInstallPage(team ?? enterprise));
          // Nothing is kept, and the token Slack just issued is given back.
          const token = installation.bot?.token;
          if (token) {
            await new WebClient(undefined, deps.clientOptions).auth
              .revoke({ token })
              .catch((err: unknown) => logger.warn({ err }, "could not revoke a refused install"));
          }
          return false;
        },
        success(installation, options, req, res) {
          logger.info(
            { ...who(installation), by: installation.user.id },
            "installed in a workspace",
          );
          defaultCallbackSuccess(installation, options, req, res);
        },
        failure(error, options, req, res) {
          // Bolt's page says only the error's code; the log says why (never a token or code).
          logger.warn({ reason: error.code, detail: error.message }, "an install failed");
          defaultCallbackFailure(error, options, req, res);
        },
      } satisfies CallbackOptions,
    },
  };
}

function refusedInstallPage(id: string | undefined): string {
  const which = id && /^[A-Z0-9]+$/.test(id) ? ` (${id})` : "";
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Not enabled</title></head><body><p>Task Agent is not enabled for this workspace${which}. Ask the people who run Task Agent to add it to TASK_ALLOWED_TEAMS, then install it again.</p></body></html>`;
}

/**
 * What `pick` finds first in an error or what it wraps (`original`: the WebClient's and Bolt's;
 * `cause`), 5 deep: undici wraps a proxy's refusal, Bolt a store's error twice.
 */
export function inCauses<T>(
  err: unknown,
  pick: (e: { message?: unknown; code?: unknown }) => T | undefined,
): T | undefined {
  for (let e = err, depth = 0; e && depth < 5; depth++) {
    const found = pick(e as { message?: unknown; code?: unknown });
    if (found !== undefined) return found;
    const { original, cause } = e as { original?: unknown; cause?: unknown };
    e = original ?? cause;
  }
  return undefined;
}

/** The store's error behind a failed authorization (Bolt wraps it twice), when one of `kind`. */
const storeError = <T extends Error>(err: unknown, kind: abstract new (...args: never[]) => T) =>
  inCauses(err, (e) => (e instanceof kind ? e : undefined));

const REPORT_AGAIN_MS = 3600_000;
const REMEMBERED = 1000;

/** Events of a workspace without a usable installation are ignored, each logged hourly at most. */
export function uninstalledWorkspaces(logger: Logger, now: () => number = Date.now) {
  const reported = new Map<string, number>();
  /** Whether `name` was not reported within the hour (it is now). */
  const due = (name: string): boolean => {
    const last = reported.get(name);
    if (last !== undefined && now() - last < REPORT_AGAIN_MS) return false;
    reported.delete(name);
    reported.set(name, now());
    // Oldest first in a Map: forget the longest-reported beyond the cap.
    if (reported.size > REMEMBERED) reported.delete(reported.keys().next().value ?? "");
    return true;
  };
  return {
    /** Whether Bolt's `error` is an authorization that found no usable installation (logged). */
    handled(error: unknown): boolean {
      const missing = storeError(error, InstallationNotFoundError);
      const unreadable = storeError(error, InstallationUnreadableError);
      const key = missing?.key ?? unreadable?.key;
      if (!key) return false;
      if (!due(`${missing ? "missing" : "unreadable"}:${nameOf(key)}`)) return true;
      if (missing) {
        logger.warn(
          whose(key),
          `ignored an event from a workspace where the app is not installed (install it from ${OAUTH_INSTALL_PATH})`,
        );
      } else {
        // The message says why and what to do, and names no secret: an error for the operator.
        logger.error(whose(key), `ignored an event: ${unreadable?.message}`);
      }
      return true;
    },
  };
}

const whose = (key: InstallationKey) => ({
  team: key.teamId,
  enterprise: key.enterpriseId,
  orgWide: key.isEnterpriseInstall,
});

const nameOf = (key: InstallationKey): string =>
  `${key.enterpriseId ?? "-"}:${key.isEnterpriseInstall ? "*" : (key.teamId ?? "-")}`;
