/**
 * The defaults form (a person's, from App Home, or a channel's), and channel defaults: `/task
 * settings` in a channel opens their form for the channel's managers (its creator, workspace
 * admins, or anyone when TASK_SETTINGS_ANYONE is set); saving checks again who submits, tells
 * the channel's defaults privately, and writes a change to the audit trail.
 */
import type { AllMiddlewareArgs, App } from "@slack/bolt";
import { z } from "zod";
import type { TaskDefaults } from "../../store/types.ts";
import type { TellUser } from "../../threads/coordinator.ts";
import type { TaskOptions } from "../../threads/options.ts";
import { asDefaults } from "../../threads/preferences.ts";
import {
  CHANNEL_SETTINGS_VIEW,
  DEFAULTS_FIELD,
  NO_DEFAULT,
  renderDefaultsModal,
  summarizeDefaults,
} from "../../view/defaults.ts";
import { authorisedTeam, FormValues, type ListenerDeps } from "./surface.ts";

/** A defaults modal's submission (its inputs, and the channel in `private_metadata`). */
export const DefaultsSubmission = z.object({
  user: z.object({ id: z.string().min(1) }),
  view: z.object({
    private_metadata: z.string().optional(),
    state: z.object({ values: FormValues }),
  }),
});

/** Opens the defaults modal; false when Slack refused it (logged). */
export async function openDefaultsModal(
  client: AllMiddlewareArgs["client"],
  deps: ListenerDeps,
  trigger: string,
  scope: { kind: "user" } | { kind: "channel"; channelId: string },
  current: TaskDefaults,
): Promise<boolean> {
  try {
    const view = renderDefaultsModal({ scope, current, choices: deps.choices });
    await client.views.open({ trigger_id: trigger, view: view as never });
    return true;
  } catch (err) {
    deps.logger.warn({ err }, "could not open the defaults modal");
    return false;
  }
}

/** The defaults a submission sets, or what to fix by block id. */
export function readDefaults(
  values: FormValues,
): { readonly defaults: TaskOptions } | { readonly errors: Record<string, string> } {
  const picked = (id: string): string | undefined => {
    const v = values[id]?.value;
    const raw = (v?.selected_option?.value ?? v?.value ?? "").trim();
    return raw === "" || raw === NO_DEFAULT ? undefined : raw;
  };
  const errors: Record<string, string> = {};
  for (const id of [DEFAULTS_FIELD.model, DEFAULTS_FIELD.agent]) {
    const name = picked(id);
    if (name !== undefined && (name.length > 150 || /[\s<>`]/.test(name))) {
      errors[id] = "A name of at most 150 characters, without spaces, <, > or backticks.";
    }
  }
  if (Object.keys(errors).length > 0) return { errors };
  const effort = picked(DEFAULTS_FIELD.effort);
  const thinking = picked(DEFAULTS_FIELD.thinking);
  const model = picked(DEFAULTS_FIELD.model);
  const agent = picked(DEFAULTS_FIELD.agent);
  return {
    defaults: {
      ...(model !== undefined ? { model } : {}),
      ...(agent !== undefined ? { agent } : {}),
      ...(effort === "low" || effort === "medium" || effort === "high" ? { effort } : {}),
      ...(thinking === "on" || thinking === "off" ? { thinking: thinking === "on" } : {}),
    },
  };
}

const NOT_IN_DM =
  "Channel defaults are set in a channel: type `/task settings` there. Your own defaults are in my Home tab.";
const NOT_ALLOWED =
  "Only this channel's manager or a workspace admin can change its defaults. Your own defaults are in my Home tab.";

/** `/task settings`: the channel's defaults form, or why not (told privately). */
export async function openChannelSettings(
  client: AllMiddlewareArgs["client"],
  deps: ListenerDeps,
  cmd: { teamId: string; channelId: string; userId: string; trigger: string },
  tell: TellUser,
): Promise<void> {
  const { preferences } = deps.coordinator;
  if (!/^[CG]/.test(cmd.channelId)) {
    await tell(NOT_IN_DM);
    return;
  }
  try {
    if (!(await preferences.mayChangeChannel(cmd.teamId, cmd.channelId, cmd.userId))) {
      await tell(NOT_ALLOWED);
      return;
    }
    const scope = { kind: "channel" as const, channelId: cmd.channelId };
    const current = await preferences.defaults(cmd.teamId, scope);
    if (!(await openDefaultsModal(client, deps, cmd.trigger, scope, current))) {
      await tell("The settings form could not be opened; please try again.");
    }
  } catch (err) {
    deps.logger.warn({ err }, "could not open the channel settings");
    await tell("The channel's settings are unavailable right now; please try again in a minute.");
  }
}

export function register(app: App, deps: ListenerDeps): void {
  app.view(CHANNEL_SETTINGS_VIEW, async ({ ack, body, client, context }) => {
    const parsed = DefaultsSubmission.safeParse(body);
    const channelId = parsed.success ? (parsed.data.view.private_metadata ?? "") : "";
    if (!parsed.success || !/^[CG][A-Z0-9]+$/.test(channelId)) {
      await ack({ response_action: "errors", errors: { model: "That form looked malformed." } });
      return;
    }
    const read = readDefaults(parsed.data.view.state.values);
    if ("errors" in read) {
      await ack({ response_action: "errors", errors: read.errors });
      return;
    }
    const { preferences } = deps.coordinator;
    const userId = parsed.data.user.id;
    const teamId = authorisedTeam(context);
    const scope = { kind: "channel" as const, channelId };
    const before = await preferences.defaults(teamId, scope).catch(() => undefined);
    // The form names the channel; whoever submits it must still be allowed to change it.
    const problem = await preferences
      .mayChangeChannel(teamId, channelId, userId)
      .then((ok) => (ok ? undefined : NOT_ALLOWED.replace(/ Your own.*$/, "")))
      .catch(() => "Could not check who may change this channel's defaults; please try again.");
    const saved =
      problem ??
      (await preferences
        .saveDefaults(teamId, scope, read.defaults)
        .then(() => undefined)
        .catch((err: unknown) => {
          deps.logger.warn({ err }, "could not save the channel defaults");
          return "The defaults could not be saved right now; please try again.";
        }));
    if (saved !== undefined) {
      await ack({ response_action: "errors", errors: { model: saved } });
      return;
    }
    await ack();
    const summary = summarizeDefaults(read.defaults);
    if (!before || !sameDefaults(before, asDefaults(read.defaults))) {
      const by = { who: userId, workspace: teamId, channel: channelId };
      await deps.audit?.record({
        what: "channel_defaults.changed",
        ...by,
        detail: summary ?? "none",
      });
    }
    const text = summary
      ? `Tasks started in <#${channelId}> now default to ${summary}.`
      : `<#${channelId}> has no defaults now: the service's own apply.`;
    await client.chat
      .postEphemeral({ channel: channelId, user: userId, text })
      .catch((err: unknown) => deps.logger.debug({ err }, "could not confirm the settings"));
  });
}

/** Whether two defaults set the same options to the same values. */
function sameDefaults(a: TaskDefaults, b: TaskDefaults): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]) as Set<keyof TaskDefaults>;
  return [...keys].every((key) => a[key] === b[key]);
}
