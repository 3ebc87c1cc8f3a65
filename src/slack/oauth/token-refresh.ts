/**
 * Slack's token rotation: a bot token expires after `expires_in` (12 h); `oauth.v2.access` with
 * `grant_type=refresh_token` answers a new pair and kills the used one (Slack's token rotation
 * guide). @slack/oauth refreshes on every call within 2 h of expiry, uncoordinated: all but one lose
 * with `invalid_refresh_token`. So the store Bolt reads refreshes first, one flight per process and
 * a lease across instances, and hands Bolt no refresh token (@slack/oauth has no refresh hook).
 */
import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type { Installation, InstallationQuery, InstallationStore } from "@slack/bolt";
import type { Logger as SlackLogger } from "@slack/logger";
import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import { z } from "zod";
import type { ThreadStore } from "../../store/types.ts";
import { slackErrorCode } from "../../view/errors.ts";
import { remembered } from "../remembered.ts";

/** A token is refreshed this long before it expires: @slack/oauth's own window (2 hours). */
const REFRESH_WINDOW_S = 7200;
/** How long a refresh may hold its lease: the call's bound (5 s, one retry) and the write. */
const LEASE_TTL_MS = 15_000;
/** How long a call waits for another instance's refresh while its token still works. */
const WAIT_MS = 2000;
/** How often a waiting call reads the installation again. */
const POLL_MS = 50;

type AnyInstallation = Installation<"v1" | "v2", boolean>;
type Query = InstallationQuery<boolean>;

const Refreshed = z.object({
  access_token: z.string().min(1),
  refresh_token: z.string().min(1),
  expires_in: z.number().positive(),
});

interface TokenRefreshOptions {
  readonly clientId: string;
  readonly clientSecret: string;
  /** Without a token, bounded (a few seconds, one retry). */
  readonly client: Pick<WebClient, "oauth">;
  readonly leases: Pick<ThreadStore, "acquireLease" | "releaseLease">;
  readonly logger: Logger;
  readonly now?: () => number;
  readonly waitMs?: number;
}

/** Who an installation is, for the log (no secret). */
export const who = (i: AnyInstallation) => ({
  team: i.team?.id,
  enterprise: i.enterprise?.id,
  orgWide: i.isEnterpriseInstall === true,
});

/** Without refresh tokens, a user token's too (Bolt refreshing it would store no bot's). */
function forBolt(i: AnyInstallation): AnyInstallation {
  return {
    ...i,
    user: { ...i.user, refreshToken: undefined },
    ...(i.bot ? { bot: { ...i.bot, refreshToken: undefined } } : {}),
  };
}

/** The installations of `inner`, a bot token due to expire refreshed first. */
export class RefreshingInstallations implements InstallationStore {
  readonly #inner: InstallationStore;
  readonly #options: TokenRefreshOptions;
  readonly #now: () => number;
  readonly #owner = randomUUID();
  /** One refresh at a time per installation in this process (none kept once settled). */
  readonly #flights = remembered<AnyInstallation>({ ttlMs: 0, max: 0, keep: () => false });

  constructor(inner: InstallationStore, options: TokenRefreshOptions) {
    this.#inner = inner;
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  storeInstallation(installation: AnyInstallation, log?: SlackLogger): Promise<void> {
    return this.#inner.storeInstallation(installation, log);
  }

  async deleteInstallation(query: Query, log?: SlackLogger): Promise<void> {
    await this.#inner.deleteInstallation?.(query, log);
  }

  async fetchInstallation(query: Query, log?: SlackLogger): Promise<AnyInstallation> {
    const found = (await this.#inner.fetchInstallation(query, log)) as AnyInstallation;
    if (!this.#due(found)) return forBolt(found);
    const name = found.isEnterpriseInstall
      ? `e:${found.enterprise?.id ?? ""}`
      : `t:${found.team?.id ?? ""}`;
    return forBolt(await this.#flights(name, () => this.#settle(query, name, found)));
  }

  /** Whether its bot token rotates and expires soon. */
  #due(i: AnyInstallation): boolean {
    const bot = i.bot;
    if (!bot?.refreshToken || bot.expiresAt === undefined || bot.expiresAt === null) return false;
    return bot.expiresAt - this.#now() / 1000 <= REFRESH_WINDOW_S;
  }

  /** Until when a call waits for a refresh: longer once its token no longer works. */
  #waitUntil(i: AnyInstallation): number {
    const expired = (i.bot?.expiresAt ?? Number.POSITIVE_INFINITY) * 1000 <= this.#now();
    return this.#now() + (expired ? LEASE_TTL_MS : (this.#options.waitMs ?? WAIT_MS));
  }

  #read(query: Query): Promise<AnyInstallation> {
    return this.#inner.fetchInstallation(query) as Promise<AnyInstallation>;
  }

  /** Once its due token is refreshed here, or by whoever holds the lease. */
  async #settle(query: Query, name: string, found: AnyInstallation): Promise<AnyInstallation> {
    const { leases, logger } = this.#options;
    const lease = `token-refresh:${name}`;
    const until = this.#waitUntil(found);
    for (let current = found; ; current = await this.#read(query)) {
      if (!this.#due(current)) return current;
      if (await leases.acquireLease(lease, this.#owner, LEASE_TTL_MS)) {
        try {
          // Another instance may have refreshed it between that read and this lease.
          const fresh = await this.#read(query);
          return this.#due(fresh) ? await this.#refresh(query, fresh) : fresh;
        } finally {
          await leases.releaseLease(lease, this.#owner).catch((err: unknown) => {
            logger.warn({ err }, "could not release a token refresh's lease; it expires anyway");
          });
        }
      }
      if (this.#now() >= until) {
        logger.warn(
          who(current),
          "another instance's refresh of the workspace's token did not finish in time: the current token is used",
        );
        return current;
      }
      await delay(POLL_MS);
    }
  }

  /** `stale` was read under the lease. */
  async #refresh(query: Query, stale: AnyInstallation): Promise<AnyInstallation> {
    const { logger } = this.#options;
    const { bot } = stale;
    if (!bot?.refreshToken) return stale;
    let answer: z.infer<typeof Refreshed>;
    try {
      const res = await this.#options.client.oauth.v2.access({
        client_id: this.#options.clientId,
        client_secret: this.#options.clientSecret,
        grant_type: "refresh_token",
        refresh_token: bot.refreshToken,
      });
      answer = Refreshed.parse(res);
    } catch (err) {
      const code = slackErrorCode(err);
      if (code === "invalid_refresh_token") return this.#refreshedElsewhere(query, stale);
      // Named by its code or kind only: the request carried the app's secret and the token.
      logger.error(
        { ...who(stale), code: code ?? (err as Error).name },
        "could not refresh the workspace's rotating token: the current one is used until it expires, and the next call tries again",
      );
      return stale;
    }
    const expiresAt = Math.floor(this.#now() / 1000) + answer.expires_in;
    const { access_token: token, refresh_token: refreshToken } = answer;
    const updated = { ...stale, bot: { ...bot, token, refreshToken, expiresAt } };
    await this.#inner.storeInstallation(updated);
    logger.info({ ...who(stale), expiresAt }, "refreshed the workspace's rotating bot token");
    return updated;
  }

  /** Slack refused the used refresh token: another instance spent it; its new pair is read. */
  async #refreshedElsewhere(query: Query, stale: AnyInstallation): Promise<AnyInstallation> {
    const { logger } = this.#options;
    const used = stale.bot?.refreshToken;
    const until = this.#waitUntil(stale);
    for (;;) {
      const current = await this.#read(query);
      if (current.bot?.refreshToken !== used) {
        logger.info(who(current), "another instance refreshed the workspace's token first");
        return current;
      }
      if (this.#now() >= until) {
        logger.error(
          who(current),
          "Slack refused the workspace's refresh token (invalid_refresh_token) and no instance stored a new one: the current token is used until it expires; install the app there again",
        );
        return current;
      }
      await delay(POLL_MS);
    }
  }
}
