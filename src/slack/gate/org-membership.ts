/**
 * Whether a workspace belongs to an org-wide install's organisation (Enterprise Grid): its token's
 * `auth.teams.list` ("the workspaces your org-wide app has been approved for", Slack's method page).
 */
import type { WebClient } from "@slack/web-api";

/** How long a listed workspace is taken as a member without asking again. */
const MEMBER_TTL_MS = 10 * 60_000;
/** A workspace not listed is asked about again (newly approved) at most this often. */
const RECHECK_MS = 30_000;
/** Slack's largest page, and a bound on the pages read (1,000 × 100 workspaces). */
const PAGE = 1000;
const MAX_PAGES = 100;

export class OrgMembership {
  readonly #client: Pick<WebClient, "auth">;
  readonly #now: () => number;
  readonly #listed = new Map<string, { teams: ReadonlySet<string>; at: number }>();
  readonly #lookups = new Map<string, Promise<ReadonlySet<string>>>();

  constructor(client: Pick<WebClient, "auth">, now: () => number = Date.now) {
    this.#client = client;
    this.#now = now;
  }

  /** Whether `teamId` is a workspace of `enterpriseId`; `token` is the organisation's. */
  async isMember(enterpriseId: string, teamId: string, token: string): Promise<boolean> {
    const known = this.#listed.get(enterpriseId);
    const age = known ? this.#now() - known.at : Number.POSITIVE_INFINITY;
    if (known?.teams.has(teamId) && age < MEMBER_TTL_MS) return true;
    if (known && !known.teams.has(teamId) && age < RECHECK_MS) return false;
    return (await this.#list(enterpriseId, token)).has(teamId);
  }

  #list(enterpriseId: string, token: string): Promise<ReadonlySet<string>> {
    let lookup = this.#lookups.get(enterpriseId);
    if (!lookup) {
      lookup = this.#fetch(token)
        .then((teams) => {
          this.#listed.set(enterpriseId, { teams, at: this.#now() });
          return teams;
        })
        .finally(() => this.#lookups.delete(enterpriseId));
      this.#lookups.set(enterpriseId, lookup);
    }
    return lookup;
  }

  async #fetch(token: string): Promise<ReadonlySet<string>> {
    const teams = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const res = await this.#client.auth.teams.list({ token, limit: PAGE, cursor });
      for (const team of res.teams ?? []) if (team.id) teams.add(team.id);
      cursor = res.response_metadata?.next_cursor || undefined;
      if (!cursor) break;
    }
    return teams;
  }
}
