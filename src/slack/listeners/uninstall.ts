/**
 * What Slack says is gone. `app_uninstalled`, or `tokens_revoked` with the bot's token: everything
 * of the workspace (or organisation) is forgotten; with people's tokens only, those go (Bolt
 * delivers both unauthorized). A deleted channel is forgotten with every record of it.
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import type { InstallKey } from "../workspace-removal.ts";
import { authorisedTeam, type ListenerDeps } from "./surface.ts";

const Install = z
  .object({
    team_id: z.string().min(1).optional(),
    enterprise_id: z.string().min(1).nullish(),
    is_enterprise_install: z.boolean().optional(),
  })
  .transform((e): InstallKey => ({
    teamId: e.team_id,
    enterpriseId: e.enterprise_id ?? undefined,
    isEnterpriseInstall: e.is_enterprise_install === true,
  }));

const TokensRevoked = z.object({
  tokens: z.object({
    oauth: z.array(z.string()).nullish(),
    bot: z.array(z.string()).nullish(),
  }),
});

const ChannelDeleted = z.object({ channel: z.string().min(1) });

export function register(app: App, { removal, coordinator }: ListenerDeps): void {
  for (const deleted of ["channel_deleted", "group_deleted"] as const) {
    app.event(deleted, async ({ event, context }) => {
      const parsed = ChannelDeleted.safeParse(event);
      if (!parsed.success) return;
      await coordinator.forgetting.channelDeleted(authorisedTeam(context), parsed.data.channel);
    });
  }

  // An org-wide uninstall names only the organisation: its workspaces are noted as they speak,
  // once confirmed as its own (src/slack/gate/team.ts).
  app.event("app_uninstalled", async ({ body }) => {
    const key = Install.safeParse(body).data;
    if (key) await removal.uninstalled(key);
  });

  app.event("tokens_revoked", async ({ body, event }) => {
    const key = Install.safeParse(body).data;
    const revoked = TokensRevoked.safeParse(event);
    if (!key || !revoked.success) return;
    const { bot, oauth } = revoked.data.tokens;
    // The bot's token gone is an uninstall as far as the app can tell: it can do nothing more.
    if (bot && bot.length > 0) await removal.uninstalled(key);
    else if (oauth && oauth.length > 0) await removal.usersRevoked(key, oauth);
  });
}
