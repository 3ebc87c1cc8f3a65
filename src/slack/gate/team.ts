/**
 * Each payload is handled as the workspace Bolt authorised (`context.teamId`), never as one it
 * names; refused privately when there is none, it names another, TASK_ALLOWED_TEAMS leaves it out,
 * or an org-wide install's token does not list it (only a listed one is noted as the org's).
 */
import type { AnyMiddlewareArgs, Context, Middleware } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import { z } from "zod";
import type { SlackOAuthConfig } from "../../config/workspaces.ts";
import { remembered } from "../remembered.ts";
import { answerableOf, answerPrivately, namePayload } from "./acks.ts";

const listed = (ids: ReadonlySet<string>, teamId?: string, enterpriseId?: string): boolean =>
  (teamId !== undefined && ids.has(teamId)) ||
  (enterpriseId !== undefined && ids.has(enterpriseId));

/** Who may use the app (TASK_ALLOWED_TEAMS) and is lent TASK_API_KEY (TASK_API_KEY_FOR). */
export function teamPolicy(oauth: SlackOAuthConfig | undefined) {
  return {
    allows: (teamId: string | undefined, enterpriseId: string | undefined): boolean =>
      oauth?.allowedTeams === undefined || listed(oauth.allowedTeams, teamId, enterpriseId),
    lendsAppKey: (teamId: string, enterpriseId: string | undefined): boolean =>
      oauth === undefined ||
      oauth.apiKeyFor === "all" ||
      listed(oauth.apiKeyFor, teamId, enterpriseId),
  };
}

/** Events Bolt delivers unauthorised (the tokens are gone); the uninstall listener reads them. */
const UNAUTHORISED_EVENTS = new Set(["app_uninstalled", "tokens_revoked"]);

// Its own schema: a field the answers read that is malformed must not hide the workspace named.
const Declared = z.object({
  team_id: z.string().nullish(),
  authorizations: z.array(z.object({ team_id: z.string().nullish() }).nullish()).nullish(),
  event: z.unknown().optional(),
  command: z.string().optional(),
  team: z.object({ id: z.string().nullish() }).nullish(),
  user: z.object({ team_id: z.string().nullish() }).nullish(),
  view: z.object({ app_installed_team_id: z.string().nullish() }).nullish(),
});

/** The workspace a payload names, read where Bolt reads it to authorise (App.buildSource). */
export function declaredTeam(body: unknown): string | undefined {
  const p = Declared.safeParse(body).data;
  if (!p) return undefined;
  if (p.event !== undefined) return p.authorizations?.[0]?.team_id || p.team_id || undefined;
  if (p.command !== undefined) return p.team_id || undefined;
  return p.view?.app_installed_team_id || p.team?.id || p.user?.team_id || undefined;
}

interface TeamGateOptions {
  readonly logger: Logger;
  readonly policy: ReturnType<typeof teamPolicy>;
  readonly membership: ReturnType<typeof orgMembership> | undefined;
  /** One workspace: its token's own (auth.test). */
  readonly tokenTeam: string | undefined;
  /** A workspace confirmed as one of an org-wide install's (its token is the organisation's). */
  readonly onOrgWorkspace: (teamId: string, enterpriseId: string) => Promise<void>;
}

const UNKNOWN_TEAM =
  "Task Agent could not tell which workspace this came from, so nothing happened. Try again from a channel or a direct message of your workspace.";
const OTHER_TEAM =
  "This came from a workspace Task Agent does not answer for here, so nothing happened. Ask an admin of your workspace to install Task Agent in it.";
const NOT_MEMBER =
  "Task Agent is installed for your organisation, but not approved for this workspace, so nothing happened. Ask an admin of your organisation to add Task Agent to this workspace.";
const NOT_CONFIRMED =
  "Task Agent could not confirm that this workspace belongs to your organisation right now. Please try again in a minute.";

/** Why the payload is refused (what its person is told), or undefined to go on. */
async function refusal(
  options: TeamGateOptions,
  auth: Context,
  declared: string | undefined,
): Promise<{ text: string; reason: string } | undefined> {
  const { teamId, enterpriseId } = auth;
  if (!teamId) return { text: UNKNOWN_TEAM, reason: "no workspace" };
  if (declared !== undefined && declared !== teamId) {
    return { text: OTHER_TEAM, reason: "the payload names another workspace" };
  }
  if (!options.policy.allows(teamId, enterpriseId)) {
    const text = `Task Agent is not enabled for this workspace (${teamId}). Ask the people who run Task Agent to add it to TASK_ALLOWED_TEAMS.`;
    return { text, reason: "not in TASK_ALLOWED_TEAMS" };
  }
  if (!auth.isEnterpriseInstall || !options.membership) return undefined;
  if (!enterpriseId || !auth.botToken) return { text: NOT_MEMBER, reason: "no organisation" };
  const member = await options.membership
    .isMember(enterpriseId, teamId, auth.botToken)
    .catch((err: unknown) => {
      options.logger.warn({ err, enterprise: enterpriseId }, "could not list an org's workspaces");
      return undefined;
    });
  if (member === undefined) return { text: NOT_CONFIRMED, reason: "membership unknown" };
  return member ? undefined : { text: NOT_MEMBER, reason: "not a workspace of the organisation" };
}

export function teamGate(options: TeamGateOptions): Middleware<AnyMiddlewareArgs> {
  const { logger } = options;
  return async (args) => {
    const name = namePayload(args.body);
    if (name.kind === "event" && UNAUTHORISED_EVENTS.has(name.id ?? "")) return args.next();
    const auth = args.context;
    // Bolt takes a single token's team from the payload: the token's own is the one authorised.
    if (options.tokenTeam) auth.teamId = options.tokenTeam;
    const declared = declaredTeam(args.body);
    const refused = await refusal(options, auth, declared);
    if (refused) {
      logger.info(
        { kind: name.kind, team: auth.teamId, declared, enterprise: auth.enterpriseId },
        `refused a Slack payload: ${refused.reason}`,
      );
      return answerPrivately(answerableOf(args), refused.text, logger);
    }
    // Only a workspace the organisation's token listed (checked above) is noted as its own.
    if (options.membership && auth.isEnterpriseInstall && auth.enterpriseId && auth.teamId)
      await options
        .onOrgWorkspace(auth.teamId, auth.enterpriseId)
        .catch((err: unknown) => logger.warn({ err }, "could not note a workspace of an org"));
    await args.next();
  };
}

/** How long a listed workspace is taken as a member without asking again. */
const MEMBER_TTL_MS = 10 * 60_000;
/** A workspace not listed is asked about again (newly approved) at most this often. */
const RECHECK_MS = 30_000;
/** Slack's largest page, and a bound on the pages read (1,000 × 100 workspaces). */
const PAGE = 1000;
const MAX_PAGES = 100;

/**
 * Whether a workspace belongs to an org-wide install's organisation (Enterprise Grid): its token's
 * `auth.teams.list` ("the workspaces your org-wide app has been approved for", Slack's method page).
 */
export function orgMembership(client: Pick<WebClient, "auth">, now: () => number = Date.now) {
  const listed = new Map<string, { teams: ReadonlySet<string>; at: number }>();
  // One listing at a time per organisation (none kept here: `listed` is).
  const listing = remembered<ReadonlySet<string>>({ ttlMs: 0, max: 0, keep: () => false });
  const list = async (enterpriseId: string, token: string) => {
    const teams = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const res = await client.auth.teams.list({ token, limit: PAGE, cursor });
      for (const team of res.teams ?? []) if (team.id) teams.add(team.id);
      cursor = res.response_metadata?.next_cursor || undefined;
      if (!cursor) break;
    }
    listed.set(enterpriseId, { teams, at: now() });
    return teams;
  };
  return {
    /** Whether `teamId` is a workspace of `enterpriseId`; `token` is the organisation's. */
    async isMember(enterpriseId: string, teamId: string, token: string): Promise<boolean> {
      const known = listed.get(enterpriseId);
      const age = known ? now() - known.at : Number.POSITIVE_INFINITY;
      if (known?.teams.has(teamId) && age < MEMBER_TTL_MS) return true;
      if (known && !known.teams.has(teamId) && age < RECHECK_MS) return false;
      return (await listing(enterpriseId, () => list(enterpriseId, token))).has(teamId);
    },
  };
}
