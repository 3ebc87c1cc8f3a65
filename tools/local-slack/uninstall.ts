// Uninstalling the app from a workspace (or, org-wide, an organisation), as Slack does it: the
// bot tokens stop working (`token_revoked`), and the app is sent `app_uninstalled` and
// `tokens_revoked`, over HTTP (signed) or Socket Mode, wherever the test says its events go.
import type { LocalSocketMode } from "./local-socket-mode.ts";
import { type EventInput, eventEnvelope, sendEvent } from "./slack-requests.ts";
import type { Tenancy } from "./tenancy.ts";

/** Where the app's events go: its HTTP receiver (signed requests) or its Socket Mode connection. */
export type EventDestination =
  { readonly url: string; readonly signingSecret: string } | { readonly socket: LocalSocketMode };

let seq = 0;

/**
 * Revokes the bot tokens of `id` (a workspace, or an organisation's org-wide install) and
 * returns the two events Slack sends the app then. `people` are users whose tokens go too.
 */
export function uninstallEvents(
  tenancy: Tenancy,
  appId: string,
  id: string,
  people: readonly string[] = [],
): EventInput[] {
  const team = tenancy.teams.get(id);
  const enterprise = team ? undefined : tenancy.enterprises.get(id);
  if (!team && !enterprise) throw new Error(`local-slack: no workspace or organisation ${id}`);
  tenancy.revoke(id);
  const bot = (team ?? enterprise)?.bot.userId ?? "";
  const orgWide = enterprise !== undefined;
  const enterpriseId = team ? team.enterpriseId : enterprise?.id;
  const base = {
    // An org-wide install's events name the organisation where a workspace would be.
    team_id: id,
    api_app_id: appId,
    ...(enterpriseId ? { enterprise_id: enterpriseId } : {}),
    ...(orgWide ? { is_enterprise_install: true } : {}),
    authorizations: [],
  };
  const stamp = `${Date.now().toString(36)}x${++seq}`;
  return [
    { ...base, event_id: `EvUninstall${stamp}`, event: { type: "app_uninstalled" } },
    {
      ...base,
      event_id: `EvRevoked${stamp}`,
      event: { type: "tokens_revoked", tokens: { oauth: [...people], bot: [bot] } },
    },
  ];
}

/** Sends events to the app as Slack does; throws when the app does not acknowledge one. */
export async function deliverEvents(
  events: readonly EventInput[],
  to: EventDestination,
): Promise<void> {
  for (const input of events) {
    if ("socket" in to) {
      await to.socket.send("events_api", eventEnvelope(input));
      continue;
    }
    const res = await sendEvent(to.url, to.signingSecret, input);
    if (res.status !== 200) {
      throw new Error(`the app answered ${input.event.type as string} with HTTP ${res.status}`);
    }
  }
}
