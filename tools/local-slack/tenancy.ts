// Several workspaces (and Enterprise Grid organisations) in one double: each with its own bot
// identity and bot token, the tokens issued (with their scopes and expiry), and who a token is.
import { randomBytes } from "node:crypto";
import type { Workspace } from "./state.ts";

/** A bot user as one workspace (or organisation) knows the app. */
export interface BotIdentity {
  readonly userId: string;
  readonly id: string;
  readonly name: string;
}

/** A workspace: its identity, its bot, and the bot token an install without rotation gets. */
export interface LocalTeam {
  readonly id: string;
  readonly name: string;
  /** The workspace URL auth.test reports (`https://<domain>.slack.com/`). */
  readonly url: string;
  /** The Enterprise Grid organisation it belongs to, if any. */
  readonly enterpriseId: string | undefined;
  readonly bot: BotIdentity;
  readonly botToken: string;
}

/** An Enterprise Grid organisation: an org-wide install gets one bot and token for all of it. */
export interface LocalEnterprise {
  readonly id: string;
  readonly name: string;
  readonly url: string;
  readonly bot: BotIdentity;
  readonly botToken: string;
}

/** Who a bot token speaks for: one workspace, or (org-wide) a whole organisation. */
export interface Caller {
  readonly token: string;
  /** Undefined for an org-wide token. */
  readonly teamId: string | undefined;
  readonly enterpriseId: string | undefined;
  readonly isEnterpriseInstall: boolean;
  readonly bot: BotIdentity;
  /** The scopes granted at install; undefined: the double's `scopes` option applies. */
  readonly scopes: ReadonlySet<string> | undefined;
  /** When the token stops working (ms since the epoch), for rotating tokens. */
  readonly expiresAt: number | undefined;
}

/** What `addTeam` takes; ids and names default from the team id. */
export interface TeamOptions {
  id: string;
  name?: string;
  enterpriseId?: string;
  botUserId?: string;
  botId?: string;
  botName?: string;
  /** The bot token an install without rotation gets. Default `xoxb-<id>-<random>`. */
  botToken?: string;
  /** Installed already (its bot token works without going through OAuth). Default false. */
  installed?: boolean;
}

export interface EnterpriseOptions {
  id: string;
  name?: string;
  botUserId?: string;
  botId?: string;
  botToken?: string;
  /** Installed org-wide already (its bot token works without going through OAuth). */
  installed?: boolean;
}

export const secret = (bytes = 12): string => randomBytes(bytes).toString("hex");

export class Tenancy {
  readonly teams = new Map<string, LocalTeam>();
  readonly enterprises = new Map<string, LocalEnterprise>();
  readonly #tokens = new Map<string, Caller>();
  /** Tokens of workspaces the app was uninstalled from (or revoked): `token_revoked`. */
  readonly #revoked = new Set<string>();
  readonly #now: () => number;

  /** The double's own workspace (the constructor options) is installed, with its token. */
  constructor(state: Workspace, now: () => number) {
    this.#now = now;
    const team: LocalTeam = {
      id: state.teamId,
      name: state.teamName,
      url: state.teamUrl,
      enterpriseId: undefined,
      bot: { userId: state.botUserId, id: state.botId, name: state.botName },
      botToken: state.botToken,
    };
    this.teams.set(team.id, team);
    this.grant(team.botToken, { team, scopes: undefined, expiresAt: undefined });
  }

  addTeam(options: TeamOptions): LocalTeam {
    const { id } = options;
    const team: LocalTeam = {
      id,
      name: options.name ?? `Team ${id}`,
      url: `https://${id.toLowerCase()}.slack.com/`,
      enterpriseId: options.enterpriseId,
      bot: {
        userId: options.botUserId ?? `UB${id}`,
        id: options.botId ?? `BB${id}`,
        name: options.botName ?? "taskbot",
      },
      botToken: options.botToken ?? `xoxb-${id}-${secret()}`,
    };
    this.teams.set(id, team);
    if (options.installed)
      this.grant(team.botToken, { team, scopes: undefined, expiresAt: undefined });
    return team;
  }

  addEnterprise(options: EnterpriseOptions): LocalEnterprise {
    const { id } = options;
    const enterprise: LocalEnterprise = {
      id,
      name: options.name ?? `Grid ${id}`,
      url: `https://${id.toLowerCase()}.enterprise.slack.com/`,
      bot: {
        userId: options.botUserId ?? `UB${id}`,
        id: options.botId ?? `BB${id}`,
        name: "taskbot",
      },
      botToken: options.botToken ?? `xoxb-${id}-${secret()}`,
    };
    this.enterprises.set(id, enterprise);
    if (options.installed) {
      this.grant(enterprise.botToken, { enterprise, scopes: undefined, expiresAt: undefined });
    }
    return enterprise;
  }

  /** Makes `token` a bot token of the team (or, org-wide, the organisation). */
  grant(
    token: string,
    to: {
      readonly team?: LocalTeam;
      readonly enterprise?: LocalEnterprise;
      readonly scopes: ReadonlySet<string> | undefined;
      readonly expiresAt: number | undefined;
    },
  ): Caller {
    const { team, enterprise } = to;
    const bot = team?.bot ?? enterprise?.bot;
    if (!bot) throw new Error("local-slack: a token is granted to a team or an organisation");
    const caller: Caller = {
      token,
      teamId: team?.id,
      enterpriseId: team ? team.enterpriseId : enterprise?.id,
      isEnterpriseInstall: team === undefined,
      bot,
      scopes: to.scopes,
      expiresAt: to.expiresAt,
    };
    this.#tokens.set(token, caller);
    return caller;
  }

  /**
   * Who the token is: a caller, "expired", "revoked" (the app was uninstalled), or undefined
   * for a token Slack never issued.
   */
  identify(token: string): Caller | "expired" | "revoked" | undefined {
    if (this.#revoked.has(token)) return "revoked";
    const caller = this.#tokens.get(token);
    if (!caller) return undefined;
    return caller.expiresAt !== undefined && caller.expiresAt <= this.#now() ? "expired" : caller;
  }

  /**
   * The app is uninstalled from a workspace (or, org-wide, an organisation): every bot token
   * of it stops working; returns them.
   */
  revoke(teamOrEnterpriseId: string): string[] {
    const tokens = this.tokensOf(teamOrEnterpriseId);
    for (const token of tokens) {
      this.#tokens.delete(token);
      this.#revoked.add(token);
    }
    return tokens;
  }

  /** One token stops working (auth.revoke), as if its install were undone. */
  revokeToken(token: string): boolean {
    if (!this.#tokens.delete(token)) return false;
    this.#revoked.add(token);
    return true;
  }

  /** The installed bot tokens of a workspace (or organisation), newest last. */
  tokensOf(teamOrEnterpriseId: string): string[] {
    return [...this.#tokens.values()]
      .filter((c) => (c.teamId ?? c.enterpriseId) === teamOrEnterpriseId)
      .map((c) => c.token);
  }
}
