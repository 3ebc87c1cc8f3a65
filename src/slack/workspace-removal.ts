/** Uninstalled (or its bot token revoked): a workspace's runs stop, and every record of it goes. */
import type { InstallationStore } from "@slack/bolt";
import type { Logger } from "pino";
import { z } from "zod";
import { type AuditTrail, BY_SLACK } from "../store/audit.ts";
import { type InstallationKey, InstallationNotFoundError } from "../store/installations.ts";
import type { ThreadStore } from "../store/types.ts";

export type InstallKey = InstallationKey;

export interface WorkspaceRemovalDeps {
  /** Stops a workspace's runs without a word to Slack. */
  readonly runs: { stopTeam(teamId: string): Promise<void> };
  readonly store: Pick<ThreadStore, "forgetTeam" | "getRecord" | "putRecord" | "deleteRecord">;
  /** The scheduler's rate budgets. */
  readonly budgets: { forgetTeam(teamId: string): Promise<void> };
  /** Each workspace's writer, service client, token cache. */
  readonly workspaces: { forget(teamId: string): void };
  /** None with one SLACK_BOT_TOKEN. */
  readonly installations: InstallationStore | undefined;
  readonly audit?: Pick<AuditTrail, "record"> | undefined;
  readonly logger: Logger;
}

/** The workspaces of an org-wide install the app has seen: its uninstall names only the org. */
const orgWorkspacesKey = (enterpriseId: string) => `e:${enterpriseId}:workspaces`;
const TeamIds = z.array(z.string());

export class WorkspaceRemoval {
  readonly #deps: WorkspaceRemovalDeps;
  /** `enterprise:team` already read back from their organisation's list. */
  readonly #known = new Set<string>();

  constructor(deps: WorkspaceRemovalDeps) {
    this.#deps = deps;
  }

  /** Known once read back from the list: a write another instance overwrote is made again. */
  async noteOrgWorkspace(enterpriseId: string, teamId: string): Promise<void> {
    if (this.#known.has(`${enterpriseId}:${teamId}`)) return;
    const listed = await this.#orgWorkspaces(enterpriseId);
    if (listed.includes(teamId)) this.#known.add(`${enterpriseId}:${teamId}`);
    else await this.#deps.store.putRecord(orgWorkspacesKey(enterpriseId), [...listed, teamId]);
  }

  async uninstalled(key: InstallKey): Promise<void> {
    const { installations, logger } = this.#deps;
    if (key.isEnterpriseInstall && key.enterpriseId)
      return this.#forgetOrg(key.enterpriseId, key.teamId);
    if (!key.teamId) return;
    await this.#forgetTeam(key.teamId, key.enterpriseId);
    if (!installations)
      logger.error(
        { team: key.teamId },
        "the app was uninstalled from its workspace (or its bot token revoked): SLACK_BOT_TOKEN is no longer valid; install the app again and set its new token",
      );
  }

  /** People's user tokens were revoked: they leave the installation, the bot stays. */
  async usersRevoked(key: InstallKey, userIds: readonly string[]): Promise<void> {
    const { installations, logger } = this.#deps;
    if (!installations) return;
    for (const userId of userIds) await installations.deleteInstallation?.({ ...key, userId });
    logger.info({ team: key.teamId, users: userIds.length }, "user tokens revoked: forgotten");
  }

  async #forgetTeam(teamId: string, enterpriseId: string | undefined): Promise<void> {
    const { runs, store, installations, budgets, workspaces, audit, logger } = this.#deps;
    await runs.stopTeam(teamId);
    // Its log line stays (Slack does not say who uninstalled the app).
    await audit?.record({ what: "app.uninstalled", who: BY_SLACK, workspace: teamId });
    // Bolt's store first, so that it agrees; then every record of the team (its own included).
    await installations?.deleteInstallation?.({ teamId, enterpriseId, isEnterpriseInstall: false });
    await store.forgetTeam(teamId);
    await budgets.forgetTeam(teamId);
    // Last: stopping its runs needed its service client.
    workspaces.forget(teamId);
    logger.info(
      { team: teamId },
      "the app was uninstalled: every record of the workspace forgotten",
    );
  }

  async #forgetOrg(enterpriseId: string, teamId: string | undefined): Promise<void> {
    const { store, installations, logger } = this.#deps;
    const teams = new Set(await this.#orgWorkspaces(enterpriseId));
    // The event's own id too, a workspace's or the org's: whatever was kept under `t:<that id>:`.
    if (teamId) teams.add(teamId);
    for (const team of teams) {
      if (await this.#installedElsewhere(team, enterpriseId)) {
        logger.warn(
          { team, enterprise: enterpriseId },
          "kept a workspace listed under an uninstalled organisation: its own installation names another",
        );
        continue;
      }
      await this.#forgetTeam(team, enterpriseId);
    }
    const org = { teamId: undefined, enterpriseId, isEnterpriseInstall: true };
    await installations?.deleteInstallation?.(org);
    await store.deleteRecord(`e:${enterpriseId}:installation`);
    await store.deleteRecord(orgWorkspacesKey(enterpriseId));
    for (const known of this.#known) {
      if (known.startsWith(`${enterpriseId}:`)) this.#known.delete(known);
    }
    logger.info(
      { enterprise: enterpriseId, workspaces: teams.size },
      "the app was uninstalled from an organisation: every record of it and its workspaces forgotten",
    );
  }

  /** Whether the workspace has an installation of its own. */
  async #installedElsewhere(teamId: string, enterpriseId: string): Promise<boolean> {
    const { installations } = this.#deps;
    if (!installations) return false;
    try {
      const own = { teamId, enterpriseId: undefined, isEnterpriseInstall: false };
      return (await installations.fetchInstallation(own)).enterprise?.id !== enterpriseId;
    } catch (err) {
      // None: it was the organisation's alone. One that cannot be read is kept (no guesses).
      if (err instanceof InstallationNotFoundError) return false;
      this.#deps.logger.warn({ err, team: teamId }, "could not read a workspace's installation");
      return true;
    }
  }

  async #orgWorkspaces(enterpriseId: string): Promise<string[]> {
    const listed = await this.#deps.store.getRecord(orgWorkspacesKey(enterpriseId));
    return TeamIds.safeParse(listed).data ?? [];
  }
}
