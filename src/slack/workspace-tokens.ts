/** Each workspace's bot token outside a Slack request: the configured one or its installation's. */
import type { InstallProvider } from "@slack/oauth";
import type { WebClient } from "@slack/web-api";
import type { RecordStore } from "../store/types.ts";
import { remembered } from "./remembered.ts";

export interface BotTokens {
  /** Throws `WorkspaceNotInstalledError` when it has none. */
  botToken(teamId: string): Promise<string>;
  /** A workspace of an org-wide install (Enterprise Grid), learnt from events: its token is the org's. */
  rememberOrganisation(teamId: string, enterpriseId: string): Promise<void>;
  forget(teamId: string): void;
}

export class WorkspaceNotInstalledError extends Error {
  constructor(teamId: string) {
    super(`the app is not installed in workspace ${teamId}`);
    this.name = "WorkspaceNotInstalledError";
  }
}

export function singleWorkspaceToken(token: string): BotTokens {
  return {
    botToken: () => Promise.resolve(token),
    rememberOrganisation: () => Promise.resolve(),
    forget: () => undefined,
  };
}

/** How long a token is used without asking the store again. */
const CACHE_MS = 60_000;
/** A rotating token is refreshed this long before it expires (Bolt refreshes within 2 hours). */
const EXPIRY_MARGIN_MS = 5 * 60_000;

const organisationRecord = (teamId: string): string => `t:${teamId}:organisation`;

export async function rememberedOrganisation(
  records: Pick<RecordStore, "getRecord">,
  teamId: string,
): Promise<string | undefined> {
  const stored = await records.getRecord(organisationRecord(teamId));
  return typeof stored === "string" ? stored : undefined;
}

/** Many workspaces: each one's installation, through Bolt's installer (which refreshes tokens). */
export function installedTokens(
  installer: Pick<InstallProvider, "authorize">,
  records: RecordStore,
  now: () => number = Date.now,
): BotTokens {
  const cache = new Map<string, { token: string; until: number }>();
  const organisations = new Map<string, string>();
  return {
    async botToken(teamId) {
      const cached = cache.get(teamId);
      if (cached && cached.until > now()) return cached.token;
      const enterpriseId =
        organisations.get(teamId) ?? (await rememberedOrganisation(records, teamId));
      const own = { teamId, enterpriseId: undefined, isEnterpriseInstall: false };
      // A workspace's own installation wins over an organisation it was once noted under.
      const auth =
        (await installer.authorize(own).catch(() => undefined)) ??
        (enterpriseId === undefined
          ? undefined
          : await installer
              .authorize({ teamId, enterpriseId, isEnterpriseInstall: true })
              .catch(() => undefined));
      const token = auth?.botToken;
      if (!token) {
        cache.delete(teamId);
        throw new WorkspaceNotInstalledError(teamId);
      }
      const expires = auth.botTokenExpiresAt ?? Infinity;
      const until = Math.min(now() + CACHE_MS, expires * 1000 - EXPIRY_MARGIN_MS);
      if (until > now()) cache.set(teamId, { token, until });
      return token;
    },
    async rememberOrganisation(teamId, enterpriseId) {
      if (organisations.get(teamId) === enterpriseId) return;
      organisations.set(teamId, enterpriseId);
      await records.putRecord(organisationRecord(teamId), enterpriseId);
    },
    forget(teamId) {
      cache.delete(teamId);
      organisations.delete(teamId);
    },
  };
}

/** Each workspace's URL (`https://<name>.slack.com/`), asked once (again after a failure). */
export function workspaceUrls(
  client: Pick<WebClient, "auth">,
  tokens: Pick<BotTokens, "botToken">,
): (teamId: string) => Promise<string | undefined> {
  const urls = remembered<string | undefined>({ ttlMs: Number.POSITIVE_INFINITY, max: 10_000 });
  return (teamId) =>
    urls(
      teamId,
      async () => (await client.auth.test({ token: await tokens.botToken(teamId) })).url,
    ).catch(() => undefined);
}
