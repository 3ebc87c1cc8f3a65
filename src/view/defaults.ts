/** Default task options: the modal editing them, their summary, and blaming one the service refused. */
import { TaskServiceError } from "../service/errors.ts";
import type { TaskDefaults } from "../store/types.ts";
import type { ModalChoices } from "./modal.ts";
import { truncate } from "./sanitize.ts";
import { type Block, form, input, option, options, plain, section } from "./blocks.ts";

export const PERSONAL_DEFAULTS_VIEW = "task_defaults";
export const CHANNEL_SETTINGS_VIEW = "channel_settings";
export const DEFAULTS_FIELD = {
  model: "model",
  agent: "agent",
  effort: "effort",
  thinking: "thinking",
} as const;
/** The menu value that means "no default: the service's own". */
export const NO_DEFAULT = "__service_default__";

const code = (v: string | boolean) =>
  typeof v === "boolean" ? (v ? "on" : "off") : `\`${truncate(v.replace(/`/g, "'"), 100)}\``;

/** "model `x` · effort `high`", or undefined when nothing is set. */
export function summarizeDefaults(defaults: TaskDefaults): string | undefined {
  const parts = (["model", "agent", "effort", "thinking"] as const).flatMap((key) => {
    const value = defaults[key];
    return value === undefined ? [] : [`${key} ${code(value)}`];
  });
  return parts.length === 0 ? undefined : parts.join(" · ");
}

/** The modal editing a person's own defaults (App Home) or a channel's (`/task settings`), for
 * `views.open`; the channel's id rides in `private_metadata`. */
export function renderDefaultsModal(seed: {
  readonly scope:
    { readonly kind: "user" } | { readonly kind: "channel"; readonly channelId: string };
  readonly current: TaskDefaults;
  readonly choices: ModalChoices;
}): Block {
  const channel = seed.scope.kind === "channel" ? seed.scope.channelId : undefined;
  const intro = channel
    ? `Defaults for tasks started in <#${channel}>. A person's own defaults and the options they type win over these.`
    : "Your defaults for every task you start. Options you type (or pick in the New task form) win over these; these win over a channel's.";
  const { current, choices } = seed;
  const thinking = current.thinking === undefined ? undefined : current.thinking ? "on" : "off";
  const blocks = [
    section(intro),
    nameInput(DEFAULTS_FIELD.model, "Model", choices.models, current.model),
    nameInput(DEFAULTS_FIELD.agent, "Agent", choices.agents, current.agent),
    menuInput(DEFAULTS_FIELD.effort, "Reasoning effort", ["low", "medium", "high"], current.effort),
    menuInput(DEFAULTS_FIELD.thinking, "Extended thinking", ["on", "off"], thinking),
  ];
  return form(
    channel ? CHANNEL_SETTINGS_VIEW : PERSONAL_DEFAULTS_VIEW,
    channel ? "Channel defaults" : "Your defaults",
    "Save",
    blocks,
    { private_metadata: channel ?? "" },
  );
}

const serviceDefault = option(NO_DEFAULT, "The service's default");
const select = (offered: Block[], current: string | undefined) => ({
  type: "static_select",
  options: [serviceDefault, ...offered],
  initial_option: current === undefined ? serviceDefault : option(current),
});

/** A menu of the configured names (with "the service's default"), or free text. */
function nameInput(id: string, label: string, names: readonly string[], current?: string): Block {
  const listed = current === undefined || names.includes(current) ? names : [current, ...names];
  const element =
    names.length > 0
      ? select(options(listed.slice(0, 99)), current)
      : {
          type: "plain_text_input",
          max_length: 150,
          placeholder: plain("Empty: the service's default"),
          ...(current ? { initial_value: current.slice(0, 150) } : {}),
        };
  return input(id, label, element, { optional: true });
}

const menuInput = (id: string, label: string, values: readonly string[], current?: string) =>
  input(id, label, select(options(values), current), { optional: true });

/** A default a task used (the same shape as the relay's). */
export interface UsedDefault {
  readonly key: string;
  readonly value: string | boolean;
  readonly from: "personal" | "channel";
}

/** What each option is called in the service's create call (its refusals name these). */
const SERVICE_FIELD: Readonly<Record<string, string>> = {
  model: "model_name",
  agent: "agent_id",
  effort: "reasoning_effort",
  thinking: "enable_thinking",
  context: "enable_context_manager",
};

/** When the service refused (400/422) a task that used defaults: the sentence naming those the
 * refusal mentions (else every one used) and where to change them. */
export function blameDefaults(err: unknown, used: readonly UsedDefault[]): string | undefined {
  if (used.length === 0 || !(err instanceof TaskServiceError)) return undefined;
  if (err.kind !== "validation" && err.kind !== "bad_request") return undefined;
  const said = [err.detail ?? "", ...err.issues.map((i) => `${(i.loc ?? []).join(".")} ${i.msg}`)]
    .join(" ")
    .toLowerCase();
  const mentions = (d: UsedDefault) =>
    said.includes(SERVICE_FIELD[d.key] ?? d.key) ||
    new RegExp(`\\b${d.key}\\b`).test(said) ||
    (typeof d.value === "string" && said.includes(d.value.toLowerCase()));
  const named = used.filter(mentions);
  const blamed = named.length > 0 ? named : used;
  const names = blamed.map(
    (d) => `${d.from === "personal" ? "your" : "this channel's"} default ${d.key} ${code(d.value)}`,
  );
  const where = [
    blamed.some((d) => d.from === "personal") ? "your defaults in the app's Home tab" : undefined,
    blamed.some((d) => d.from === "channel") ? "`/task settings` in this channel" : undefined,
  ].filter((w) => w !== undefined);
  const lead = named.length > 0 ? "It was caused by" : "It may come from";
  return `${lead} ${names.join(" and ")} (change it with ${where.join(" or ")}, or override it with an inline option).`;
}
