/**
 * The defaults forms: a person's (App Home) and a channel's (`/task settings`, for its creator,
 * admins or anyone with TASK_SETTINGS_ANYONE), whose save checks who submits, is told and audited.
 */
import type { App, SlackViewMiddlewareArgs } from "@slack/bolt";
import type { TaskDefaults } from "../../store/types.ts";
import type { TellUser } from "../../threads/coordinator.ts";
import type { TaskOptions } from "../../threads/options.ts";
import {
  CHANNEL_SETTINGS_VIEW,
  DEFAULTS_FIELD,
  NO_DEFAULT,
  PERSONAL_DEFAULTS_VIEW,
  renderDefaultsModal,
  summarizeDefaults,
} from "../../view/defaults.ts";
import { HOME_EDIT_DEFAULTS } from "../../view/home.ts";
import {
  authorisedTeam,
  type Client,
  formErrors,
  type ListenerDeps,
  openView,
  Submission,
  TriggerAction,
} from "./surface.ts";

function openDefaultsModal(
  client: Client,
  deps: ListenerDeps,
  trigger: string,
  scope: { kind: "user" } | { kind: "channel"; channelId: string },
  current: TaskDefaults,
): Promise<boolean> {
  const view = renderDefaultsModal({ scope, current, choices: deps.choices });
  return openView(client, deps, trigger, view, "the defaults modal");
}

/** A defaults form's submission (a channel's id as metadata); undefined once errors are acked. */
async function submittedDefaults(
  body: unknown,
  ack: SlackViewMiddlewareArgs["ack"],
  scope: "user" | "channel",
) {
  const parsed = Submission.safeParse(body);
  const metadata = parsed.data?.view.private_metadata ?? "";
  if (!parsed.success || (scope === "channel" && !/^[CG][A-Z0-9]+$/.test(metadata))) {
    await ack(formErrors({ model: "That form looked malformed." }));
    return undefined;
  }
  const values = parsed.data.view.state.values;
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
  if (Object.keys(errors).length > 0) {
    await ack(formErrors(errors));
    return undefined;
  }
  const { model, agent, effort, thinking } = DEFAULTS_FIELD;
  const [name, agentId, level, think] = [model, agent, effort, thinking].map(picked);
  const defaults: TaskOptions = {
    ...(name !== undefined ? { model: name } : {}),
    ...(agentId !== undefined ? { agent: agentId } : {}),
    ...(level === "low" || level === "medium" || level === "high" ? { effort: level } : {}),
    ...(think === "on" || think === "off" ? { thinking: think === "on" } : {}),
  };
  return { userId: parsed.data.user.id, channelId: metadata, defaults };
}

const NOT_IN_DM =
  "Channel defaults are set in a channel: type `/task settings` there. Your own defaults are in my Home tab.";
const NOT_ALLOWED =
  "Only this channel's manager or a workspace admin can change its defaults. Your own defaults are in my Home tab.";

/** `/task settings`: the channel's defaults form, or why not (told privately). */
export async function openChannelSettings(
  client: Client,
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
  const { preferences } = deps.coordinator;
  app.action(HOME_EDIT_DEFAULTS, async ({ ack, body, client, context }) => {
    await ack();
    const parsed = TriggerAction.safeParse(body);
    if (!parsed.success) return;
    const { user, trigger_id: trigger } = parsed.data;
    const current = await preferences
      .defaults(authorisedTeam(context), { kind: "user", userId: user.id })
      .catch((err: unknown) => deps.logger.warn({ err }, "could not read the personal defaults"));
    if (current) await openDefaultsModal(client, deps, trigger, { kind: "user" }, current);
  });

  app.view(PERSONAL_DEFAULTS_VIEW, async ({ ack, body, context }) => {
    const read = await submittedDefaults(body, ack, "user");
    if (!read) return;
    const teamId = authorisedTeam(context);
    const { userId } = read;
    try {
      await preferences.saveDefaults(teamId, { kind: "user", userId }, read.defaults);
    } catch (err) {
      deps.logger.warn({ err }, "could not save the personal defaults");
      const error = "Your defaults could not be saved right now; please try again.";
      await ack(formErrors({ model: error }));
      return;
    }
    await ack();
    await deps.home.publish(teamId, userId);
  });

  app.view(CHANNEL_SETTINGS_VIEW, async ({ ack, body, client, context }) => {
    const read = await submittedDefaults(body, ack, "channel");
    if (!read) return;
    const { userId, channelId } = read;
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
      await ack(formErrors({ model: saved }));
      return;
    }
    await ack();
    const summary = summarizeDefaults(read.defaults);
    const keys = ["model", "agent", "effort", "thinking"] as const;
    if (!before || keys.some((key) => before[key] !== read.defaults[key])) {
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
