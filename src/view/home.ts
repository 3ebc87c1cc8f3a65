/** The App Home tab (`views.publish`): a person's recent tasks, defaults and records (with the
 * button to erase them); for admins, the workspace's part and audit trail. The erase forms. */
import { DEFAULT_RETENTION_DAYS } from "../config/config.ts";
import type { AuditAction, AuditEvent } from "../store/audit.ts";
import type { PersonForgotten, RecentTask, RunState, TaskDefaults } from "../store/types.ts";
import { summarizeDefaults } from "./defaults.ts";
import { mrkdwnLabel } from "./mrkdwn.ts";
import { escapeText } from "./sanitize.ts";
import { type AdminHome, adminHomeBlocks } from "./usage-policy.ts";
import {
  actions,
  type Block,
  button,
  context,
  form,
  input,
  plain,
  section,
  slackDate,
} from "./blocks.ts";

export const HOME_NEW_TASK = "home_new_task";
export const HOME_EDIT_DEFAULTS = "home_edit_defaults";
export const HOME_ERASE_MINE = "home_erase_mine";
export const HOME_ERASE_WORKSPACE = "home_erase_workspace";
export const ERASE_MINE_VIEW = "erase_my_records";
export const ERASE_WORKSPACE_VIEW = "erase_workspace_records";
export const ERASE_WORKSPACE_CONFIRM = "erase_confirm";
/** How many audit events App Home shows (the log has every one). */
export const AUDIT_SHOWN = 15;

interface HomeView {
  readonly tasks: readonly RecentTask[];
  readonly defaults: TaskDefaults;
  /** The workspace's URL (`https://acme.slack.com/`, from auth.test): thread links use it. */
  readonly teamUrl?: string | undefined;
  readonly admin?: AdminHome | undefined; // shown to the workspace's admins and owners only
  readonly retentionDays?: number | undefined; // DATA_RETENTION_DAYS
}

const STATUS: Readonly<Record<RunState, string>> = {
  running: ":hourglass_flowing_sand: Running",
  completed: ":white_check_mark: Completed",
  failed: ":x: Failed",
  stopped: ":black_square_for_stop: Stopped",
  error: ":warning: Not started",
};

/** A link to a task's thread: the message's permalink, or Slack's redirect to the channel. */
export function threadLink(teamUrl: string | undefined, channelId: string, ts: string): string {
  if (teamUrl && /^https:\/\//.test(teamUrl)) {
    return `${teamUrl.replace(/\/?$/, "/")}archives/${channelId}/p${ts.replace(".", "")}`;
  }
  return `https://slack.com/app_redirect?channel=${encodeURIComponent(channelId)}`;
}

function taskBlock(task: RecentTask, teamUrl: string | undefined) {
  const link = threadLink(teamUrl, task.channelId, task.threadTs);
  // A label shows no formatting: the prompt's Markdown without its markers, on one line.
  const title = mrkdwnLabel(task.prompt, 200) || "(files only)";
  const where = task.surface === "dm" ? "Direct message" : `<#${task.channelId}>`;
  return section(
    `*<${link}|${title}>*\n${where} · ${STATUS[task.status]} · ${slackDate(task.startedAt)}`,
  );
}

export function renderHome(home: HomeView): Record<string, unknown> {
  const summary = summarizeDefaults(home.defaults);
  const kept = home.retentionDays ?? DEFAULT_RETENTION_DAYS;
  const tasks =
    home.tasks.length === 0
      ? [
          section(
            "You have no tasks yet. Press *New task*, type `/task` in a channel, or send me a message to start one.",
          ),
        ]
      : home.tasks.map((t) => taskBlock(t, home.teamUrl));
  return {
    type: "home",
    blocks: [
      { type: "header", text: plain("Task Agent") },
      actions("home_actions", [
        button(HOME_NEW_TASK, "New task", { style: "primary" }),
        button(HOME_EDIT_DEFAULTS, "Edit defaults"),
      ]),
      section(
        summary
          ? `*Your defaults:* ${summary}`
          : "*Your defaults:* none (the channel's defaults, or the service's own, apply).",
      ),
      ...(home.admin ? [...adminHomeBlocks(home.admin), ...adminRecords(home.admin, kept)] : []),
      { type: "divider" },
      { type: "header", text: plain("Recent tasks") },
      ...tasks,
      ...yourRecords(kept),
    ],
  };
}

const days = (n: number) => (n === 1 ? "1 day" : `${n} days`);

function yourRecords(retentionDays: number) {
  return [
    { type: "divider" },
    section(
      `*Your records.* I keep the threads of the tasks you start (with replies waiting in them), your recent tasks with the start of each prompt, and your votes on answers for ${days(retentionDays)} after they last changed, and your defaults until you change them.`,
    ),
    actions("home_records", [button(HOME_ERASE_MINE, "Erase my records…")]),
  ];
}

/** What an audit event did, in words after its actor's name. */
const DID: Readonly<Record<AuditAction, (e: AuditEvent) => string>> = {
  "service_key.set": () => "set the workspace's service key",
  "service_key.removed": () => "removed the workspace's service key",
  "usage_policy.changed": () => "changed the usage policy",
  "channel_defaults.changed": (e) => `changed the defaults of <#${e.channel ?? ""}>`,
  "run.stopped": (e) => `stopped a run of <@${e.whom ?? ""}> in <#${e.channel ?? ""}>`,
  "records.erased": () => "erased the workspace's records",
  "app.uninstalled": () => "uninstalled the app",
};

/** One audit event on one line: when, who, what (and its detail, escaped). */
export function auditLine(event: AuditEvent): string {
  const who = /^[UW][A-Z0-9]+$/.test(event.who) ? `<@${event.who}>` : escapeText(event.who);
  const detail = event.detail ? ` (${escapeText(mrkdwnLabel(event.detail, 200))})` : "";
  return `${slackDate(event.when)} · ${who} ${DID[event.what](event)}${detail}`;
}

function adminRecords(admin: AdminHome, retentionDays: number) {
  const events = (admin.audit ?? []).slice(0, AUDIT_SHOWN);
  return [
    section(
      `*Audit trail:* the latest admin actions of the last ${days(retentionDays)} (the app's log has each one).${events.length === 0 ? " None yet." : ""}`,
    ),
    ...events.map((e) => context(auditLine(e))),
    actions("home_admin_records", [
      button(HOME_ERASE_WORKSPACE, "Erase workspace records…", { style: "danger" }),
    ]),
  ];
}

const KEPT_ELSEWHERE =
  "*Not erased:* the messages in Slack (delete them there: the app then forgets their task too), and the task service's own copy of each task (its prompts, answers and files), which the app cannot reach: ask the service's account holder, usually your workspace admins.";

export const eraseMineModal = (): Block =>
  form(ERASE_MINE_VIEW, "Erase my records", "Erase", [
    section(
      "*Erased now:* the records of the tasks you started (replies in their threads no longer continue them), your replies waiting in other tasks' threads, your recent tasks, your defaults and your votes on answers. A task of yours still running finishes in its thread; nothing of it is kept after.",
    ),
    section(KEPT_ELSEWHERE),
  ]);

export const eraseWorkspaceModal = (): Block =>
  form(ERASE_WORKSPACE_VIEW, "Erase workspace records", "Erase", [
    section(
      "*Erased now, for everyone in this workspace:* every task's record (replies in task threads no longer continue them) with the replies waiting in them, everyone's recent tasks, personal defaults and votes on answers. Runs still going are stopped at the service and their threads say nothing more.",
    ),
    section(
      "*Kept:* the app's installation, the workspace's service key, usage policy and channel defaults, and the audit trail (this erase is written to it).",
    ),
    section(KEPT_ELSEWHERE),
    input(ERASE_WORKSPACE_CONFIRM, "Confirm", {
      type: "checkboxes",
      options: [{ text: plain("Erase every task record of this workspace"), value: "erase" }],
    }),
  ]);

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

export function erasedMineText(erased: PersonForgotten & { readonly votes: number }): string {
  const parts = [
    count(erased.threads, "task record", "task records"),
    count(erased.queuedReplies, "waiting reply", "waiting replies"),
    count(erased.recentTasks, "recent task", "recent tasks"),
    count(erased.votes, "vote", "votes"),
    erased.defaults ? "your defaults" : "no defaults",
  ];
  return `Your records are erased: ${parts.join(", ")}. The messages in Slack and the task service's own copy of your tasks are not: delete the messages in Slack, and ask your workspace admins about the service's copy.`;
}
