/**
 * Which Slack workspaces the app serves: one (SLACK_BOT_TOKEN) or many, installed through OAuth;
 * and the keys that seal each workspace's service key at rest (ENCRYPTION_KEY(S)).
 */
import type { z } from "zod";
import { commaList, optionalString } from "./values.ts";
import { sealingKeys, SecretBoxError } from "../util/secret-box.ts";

/** Where Bolt serves the install page and Slack's redirect back (Bolt's default paths). */
export const OAUTH_INSTALL_PATH = "/slack/install";
export const OAUTH_REDIRECT_PATH = "/slack/oauth_redirect";

/** Slack's authorize page (the consent screen), unless SLACK_API_URL points elsewhere. */
const SLACK_AUTHORIZE_URL = "https://slack.com/oauth/v2/authorize";

/** A workspace (T…) or organisation (E…) id as Slack writes them. */
const TEAM_ID = /^[TE][A-Z0-9]{2,}$/;

/** A comma-separated list of workspace and organisation ids (and `*`), or undefined when unset. */
const teamIds = optionalString
  .transform((v) => (v === undefined ? undefined : commaList(v)))
  .refine(
    (ids) =>
      ids === undefined || (ids.length > 0 && ids.every((id) => id === "*" || TEAM_ID.test(id))),
    {
      message:
        "must list workspace ids (T…) and organisation ids (E…), comma-separated, e.g. T012AB3C4,E0123ABCD",
    },
  );

export const workspacesShape = {
  SLACK_BOT_TOKEN: optionalString.refine((v) => v === undefined || v.startsWith("xoxb-"), {
    message: "must be a bot token (starts with xoxb-)",
  }),
  SLACK_CLIENT_ID: optionalString,
  SLACK_CLIENT_SECRET: optionalString,
  SLACK_STATE_SECRET: optionalString.refine((v) => v === undefined || v.length >= 16, {
    message: "must be at least 16 characters (a random secret of your own)",
  }),
  SLACK_REDIRECT_URI: optionalString.refine(
    (v) =>
      v === undefined ||
      (/^https?:\/\//i.test(v) && URL.canParse(v) && new URL(v).pathname === OAUTH_REDIRECT_PATH),
    { message: `must be the app's public URL ending in ${OAUTH_REDIRECT_PATH}` },
  ),
  /** 32 random bytes, base64: seals each workspace's service key (AES-256-GCM). */
  ENCRYPTION_KEY: optionalString,
  /** For rotation, several such keys, comma-separated: the first seals, every one opens. */
  ENCRYPTION_KEYS: optionalString,
  /** Many workspaces: the workspaces (T…) and organisations (E…) that may use the app. */
  TASK_ALLOWED_TEAMS: teamIds.refine((ids) => !ids?.includes("*"), {
    message: "lists ids, not *: unset it to allow every workspace",
  }),
  /** Many workspaces: those whose tasks may use TASK_API_KEY when they have no key ("*": all). */
  TASK_API_KEY_FOR: teamIds,
};

type WorkspacesValues = Readonly<Partial<z.infer<z.ZodObject<typeof workspacesShape>>>>;

/** Many workspaces: what Bolt's OAuth support needs. */
export type SlackOAuthConfig = Readonly<
  NonNullable<NonNullable<ReturnType<typeof workspacesFrom>["workspaces"]>["oauth"]>
>;

const OAUTH_VARIABLES = ["SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "SLACK_STATE_SECRET"] as const;

/**
 * The mode the variables choose (one workspace's bot token, or OAuth for many), or the problems
 * (never a value) when they choose none or both.
 */
export function workspacesFrom(v: WorkspacesValues, apiUrl: string | undefined, appKey = false) {
  const set = OAUTH_VARIABLES.filter((name) => v[name] !== undefined);
  const teams = teamsFrom(v, set.length > 0, appKey);
  const missing = OAUTH_VARIABLES.filter((name) => v[name] === undefined);
  if (set.length === 0) {
    if (v.SLACK_BOT_TOKEN === undefined) {
      return {
        problems: [
          `SLACK_BOT_TOKEN is required but not set (or, to install the app in many workspaces, set ${OAUTH_VARIABLES.join(", ")})`,
        ],
      };
    }
    if (teams.problems.length > 0) return { problems: teams.problems };
    return { workspaces: { botToken: v.SLACK_BOT_TOKEN, oauth: undefined }, problems: [] };
  }
  const problems: string[] = [...teams.problems];
  if (missing.length > 0) {
    problems.push(
      `${missing.join(" and ")} ${missing.length === 1 ? "is" : "are"} not set: many workspaces (OAuth) need ${OAUTH_VARIABLES.join(", ")} together (or none of them, and SLACK_BOT_TOKEN for one workspace)`,
    );
  }
  if (v.SLACK_BOT_TOKEN !== undefined) {
    problems.push(
      `SLACK_BOT_TOKEN cannot be set with ${set.join(", ")}: with OAuth each workspace's token comes from its installation (unset one or the other)`,
    );
  }
  const { SLACK_CLIENT_ID: clientId, SLACK_CLIENT_SECRET: clientSecret } = v;
  const stateSecret = v.SLACK_STATE_SECRET;
  if (problems.length > 0 || !clientId || !clientSecret || !stateSecret) return { problems };
  return {
    workspaces: {
      botToken: undefined,
      oauth: {
        clientId,
        clientSecret,
        stateSecret,
        /** Slack's configured one when unset. */
        redirectUri: v.SLACK_REDIRECT_URI,
        /** Slack's consent screen: slack.com's, or the same origin as SLACK_API_URL's. */
        authorizeUrl: apiUrl ? `${new URL(apiUrl).origin}/oauth/v2/authorize` : SLACK_AUTHORIZE_URL,
        /** TASK_ALLOWED_TEAMS; undefined: every workspace that installs the app. */
        allowedTeams: teams.allowed,
        /** TASK_API_KEY_FOR: who may use the app's key without one of their own. */
        apiKeyFor: teams.apiKeyFor,
      },
    },
    problems: [],
  };
}

/** The allow-list and the workspaces that may spend the app's key: with many workspaces only. */
function teamsFrom(v: WorkspacesValues, oauth: boolean, appKey: boolean) {
  const { TASK_ALLOWED_TEAMS: allowed, TASK_API_KEY_FOR: keyFor } = v;
  const problems = (["TASK_ALLOWED_TEAMS", "TASK_API_KEY_FOR"] as const)
    .filter((name) => v[name] !== undefined && !oauth)
    .map(
      (name) => `${name} applies to many workspaces (OAuth) only: unset it with SLACK_BOT_TOKEN`,
    );
  if (keyFor !== undefined && oauth && !appKey) {
    problems.push(
      "TASK_API_KEY_FOR is set but TASK_API_KEY is not: set the key it lends, or unset TASK_API_KEY_FOR",
    );
  }
  return {
    allowed: allowed && (new Set(allowed) as ReadonlySet<string>),
    apiKeyFor: keyFor?.includes("*")
      ? ("all" as const)
      : (new Set(keyFor ?? []) as ReadonlySet<string>),
    problems,
  };
}

/** Whether the variables ask for many workspaces (any of the OAuth ones is set). */
export const wantsOAuth = (v: WorkspacesValues): boolean =>
  OAUTH_VARIABLES.some((name) => v[name] !== undefined);

const KEY_HINT = "32 random bytes, base64: `openssl rand -base64 32`";

/** The keys sealing workspaces' service keys (the first seals; required with OAuth), or the problems. */
export function encryptionFrom(v: WorkspacesValues, oauth: boolean) {
  const refused = (problem: string) => ({ keys: [], problems: [problem] });
  if (v.ENCRYPTION_KEY !== undefined && v.ENCRYPTION_KEYS !== undefined) {
    return refused(
      "ENCRYPTION_KEY and ENCRYPTION_KEYS are both set: set only ENCRYPTION_KEYS (the key that seals first, then the older ones)",
    );
  }
  const name = v.ENCRYPTION_KEYS !== undefined ? "ENCRYPTION_KEYS" : "ENCRYPTION_KEY";
  const listed = commaList(v.ENCRYPTION_KEYS ?? v.ENCRYPTION_KEY ?? "");
  if (listed.length === 0) {
    if (!oauth) return { keys: [], problems: [] };
    return refused(
      `ENCRYPTION_KEY is required with many workspaces (OAuth): each workspace's service key is stored encrypted with it (${KEY_HINT})`,
    );
  }
  const bad = listed.findIndex((key) => !isSealingKey(key));
  if (bad >= 0) {
    return refused(
      `${name === "ENCRYPTION_KEYS" ? `ENCRYPTION_KEYS (key ${bad + 1})` : name} must be ${KEY_HINT}`,
    );
  }
  return { keys: listed, problems: [] };
}

function isSealingKey(base64: string): boolean {
  try {
    sealingKeys([base64]);
    return true;
  } catch (err) {
    if (err instanceof SecretBoxError) return false;
    throw err;
  }
}
