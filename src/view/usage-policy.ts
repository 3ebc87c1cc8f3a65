/** A workspace's usage policy in Block Kit: the admins' form section and reading it back, and App
 * Home's admin part with the service's last refusal of the account (402, 429). */
import type { AuditEvent } from "../store/audit.ts";
import { QUOTA_MAX, type ServiceAlert, type UsagePolicy } from "../store/usage-policy.ts";
import { workspaceSettingsButton } from "./workspace-settings.ts";
import { type Block, context, input, option, plain, section, slackDate } from "./blocks.ts";

export const USAGE_FIELD = {
  who: "usage_who",
  groups: "usage_groups",
  where: "usage_where",
  channels: "usage_channels",
  quota: "usage_quota",
  join: "usage_join",
} as const;

export interface UserGroupOption {
  readonly id: string;
  readonly handle: string;
  readonly name: string;
}

const OPTIONS_MAX = 100; // Slack shows a select's limit: 100 options

const choice = (blockId: string, label: string, options: Block[], second: boolean, more?: Block) =>
  input(
    blockId,
    label,
    { type: "radio_buttons", options, initial_option: options[second ? 1 : 0] },
    more,
  );

/** The user groups to pick from: Block Kit has no user-group select, so a static multi-select
 * filled from `usergroups.list` (no options-load URL, which a Socket Mode app may not have). */
function groupsBlock(policy: UsagePolicy, groups: readonly UserGroupOption[]): Block {
  const chosen = policy.who.kind === "groups" ? policy.who.groupIds : [];
  // A chosen group missing from the list (deleted, or the list failed) stays visible by id.
  const known = new Map(groups.map((g) => [g.id, g]));
  const offered = [
    ...chosen.filter((id) => !known.has(id)).map((id) => ({ id, handle: id, name: "" })),
    ...groups,
  ].slice(0, OPTIONS_MAX);
  if (offered.length === 0) {
    const none =
      "This workspace has no user groups I can see. Create one in Slack (People › User groups) to let only its members start tasks.";
    return context(none);
  }
  const groupOption = (g: UserGroupOption) =>
    option(g.id, g.name && g.name !== g.handle ? `@${g.handle} (${g.name})` : `@${g.handle}`);
  const initial = offered.filter((g) => chosen.includes(g.id)).map(groupOption);
  return input(
    USAGE_FIELD.groups,
    "User groups",
    {
      type: "multi_static_select",
      placeholder: plain("Pick user groups"),
      options: offered.map(groupOption),
      ...(initial.length > 0 ? { initial_options: initial } : {}),
    },
    { optional: true, hint: plain("Used when only members of user groups may start tasks.") },
  );
}

export function usagePolicyBlocks(
  policy: UsagePolicy,
  groups: readonly UserGroupOption[],
): Block[] {
  const channels = policy.where.kind === "channels" ? policy.where.channelIds : [];
  const who = [
    option("everyone", "Everyone in the workspace"),
    option("groups", "Members of these user groups"),
  ];
  const where = [
    option("all", "Every channel, and direct messages with me"),
    option("channels", "Only these channels"),
  ];
  const join = [
    option("invite", "Only where I'm invited (/invite @Task Agent)"),
    option("join", "I join a public channel when a task is started there"),
  ];
  return [
    { type: "header", text: plain("Usage policy") },
    section(
      "Who may start and continue tasks in this workspace, where, and how many each person may start per hour, to protect the workspace's credits. People refused are told why, privately.",
      "usage_intro",
    ),
    choice(USAGE_FIELD.who, "Who may start tasks", who, policy.who.kind === "groups"),
    groupsBlock(policy, groups),
    choice(USAGE_FIELD.where, "Where tasks may start", where, policy.where.kind === "channels"),
    input(
      USAGE_FIELD.channels,
      "Channels",
      {
        type: "multi_conversations_select",
        placeholder: plain("Pick channels"),
        filter: { include: ["public", "private"], exclude_bot_users: true },
        ...(channels.length > 0 ? { initial_conversations: channels } : {}),
      },
      {
        optional: true,
        hint: plain("Used when tasks may start only in some channels. Invite me to each of them."),
      },
    ),
    input(
      USAGE_FIELD.quota,
      "Tasks per person per hour",
      {
        type: "number_input",
        is_decimal_allowed: false,
        min_value: "0",
        max_value: String(QUOTA_MAX),
        initial_value: String(policy.perUserPerHour),
      },
      { hint: plain("Follow-ups count too. 0: no quota.") },
    ),
    choice(USAGE_FIELD.join, "Public channels I'm not in", join, policy.joinPublicChannels, {
      hint: plain(
        "In a channel, I read the thread I'm asked about to answer it. Joining by myself lets anyone bring me into any public channel; private channels always need an invitation.",
      ),
    }),
  ];
}

/** One input's state as Slack submits it (the fields the section's elements use). */
interface InputState {
  readonly value?: string | null | undefined;
  readonly selected_option?: { readonly value: string } | null | undefined;
  readonly selected_options?: readonly { readonly value: string }[] | null | undefined;
  readonly selected_conversations?: readonly string[] | null | undefined;
}

/** `view.state.values`: block id → action id → state. */
export type ViewStateValues = Readonly<Record<string, Readonly<Record<string, InputState>>>>;

export function readUsagePolicy(
  values: ViewStateValues,
): { readonly policy: UsagePolicy } | { readonly errors: Record<string, string> } {
  const field = (id: string) => values[id]?.value;
  const errors: Record<string, string> = {};
  const groupIds = (field(USAGE_FIELD.groups)?.selected_options ?? []).map((o) => o.value);
  const channelIds = [...(field(USAGE_FIELD.channels)?.selected_conversations ?? [])];
  const onlyGroups = field(USAGE_FIELD.who)?.selected_option?.value === "groups";
  const onlyChannels = field(USAGE_FIELD.where)?.selected_option?.value === "channels";
  const joins = field(USAGE_FIELD.join)?.selected_option?.value === "join";
  if (onlyGroups && groupIds.length === 0) {
    const at = values[USAGE_FIELD.groups] ? USAGE_FIELD.groups : USAGE_FIELD.who;
    errors[at] = "Pick at least one user group, or let everyone start tasks.";
  } else if (groupIds.some((id) => !/^S[A-Z0-9]+$/.test(id))) {
    errors[USAGE_FIELD.groups] = "That is not a user group of this workspace.";
  }
  if (onlyChannels && channelIds.length === 0) {
    errors[USAGE_FIELD.channels] = "Pick at least one channel, or allow every channel.";
  } else if (channelIds.some((id) => !/^[CG][A-Z0-9]+$/.test(id))) {
    errors[USAGE_FIELD.channels] = "Pick channels only (not direct messages).";
  }
  const quotaText = (field(USAGE_FIELD.quota)?.value ?? "0").trim() || "0";
  const quota = Number(quotaText);
  if (!/^\d+$/.test(quotaText) || quota > QUOTA_MAX) {
    errors[USAGE_FIELD.quota] = `A whole number from 0 (no quota) to ${QUOTA_MAX}.`;
  }
  if (Object.keys(errors).length > 0) return { errors };
  return {
    policy: {
      who: onlyGroups ? { kind: "groups", groupIds: [...new Set(groupIds)] } : { kind: "everyone" },
      where: onlyChannels
        ? { kind: "channels", channelIds: [...new Set(channelIds)] }
        : { kind: "all" },
      perUserPerHour: quota,
      joinPublicChannels: joins,
    },
  };
}

export function serviceAlertText(alert: ServiceAlert): string {
  if (alert.status === 402) {
    return `:warning: The Task service said the workspace is out of credits (402) at ${slackDate(alert.at)}. Tasks fail until credits are added to the workspace's service account.`;
  }
  const reset = alert.resetAt === undefined ? "" : `: resets at ${slackDate(alert.resetAt)}`;
  return `:hourglass_flowing_sand: The Task service said the workspace is rate-limited (429) at ${slackDate(alert.at)}${reset}.`;
}

/** App Home's part for the workspace's admins and owners: the service's last refusal of the
 * account, when still worth showing, and the audit trail, newest first. */
export interface AdminHome {
  readonly alert?: ServiceAlert | undefined;
  readonly audit?: readonly AuditEvent[] | undefined;
}

export const adminHomeBlocks = (admin: AdminHome): Block[] => [
  { type: "divider" },
  { type: "header", text: plain("Workspace (admins)") },
  ...(admin.alert ? [section(serviceAlertText(admin.alert), "service_alert")] : []),
  { type: "actions", block_id: "home_admin", elements: [workspaceSettingsButton()] },
];
