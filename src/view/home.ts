/**
 * The App Home tab (Block Kit, `views.publish`): a person's recent tasks with a link to each
 * thread, the New task and Edit defaults buttons, and their defaults. Pure.
 */
import type { RecentTask, RunState, TaskDefaults } from "../store/types.ts";
import { summarizeDefaults } from "./defaults.ts";
import { mrkdwnLabel } from "./mrkdwn.ts";
import { type AdminHome, adminHomeBlocks } from "./usage-policy.ts";

/** Action ids of the Home tab's buttons. */
export const HOME_NEW_TASK = "home_new_task";
export const HOME_EDIT_DEFAULTS = "home_edit_defaults";

export interface HomeView {
  readonly tasks: readonly RecentTask[];
  readonly defaults: TaskDefaults;
  /** The workspace's URL (`https://acme.slack.com/`, from auth.test): thread links use it. */
  readonly teamUrl?: string | undefined;
  /** The workspace's admin part, shown to its admins and owners only. */
  readonly admin?: AdminHome | undefined;
}

const STATUS: Readonly<Record<RunState, string>> = {
  running: ":hourglass_flowing_sand: Running",
  completed: ":white_check_mark: Completed",
  failed: ":x: Failed",
  stopped: ":black_square_for_stop: Stopped",
  error: ":warning: Not started",
};

const plain = (text: string) => ({ type: "plain_text", text, emoji: true });
const mrkdwn = (text: string) => ({ type: "mrkdwn", text });

/** A link to a task's thread: the message's permalink, or Slack's redirect to the channel. */
export function threadLink(teamUrl: string | undefined, channelId: string, ts: string): string {
  if (teamUrl && /^https:\/\//.test(teamUrl)) {
    return `${teamUrl.replace(/\/?$/, "/")}archives/${channelId}/p${ts.replace(".", "")}`;
  }
  return `https://slack.com/app_redirect?channel=${encodeURIComponent(channelId)}`;
}

/** Slack renders the date in each reader's own time zone; the fallback is UTC. */
const when = (ms: number) =>
  `<!date^${Math.floor(ms / 1000)}^{date_short_pretty} {time}|${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC>`;

function taskBlock(task: RecentTask, teamUrl: string | undefined) {
  const link = threadLink(teamUrl, task.channelId, task.threadTs);
  // A label shows no formatting: the prompt's Markdown without its markers, on one line.
  const title = mrkdwnLabel(task.prompt, 200) || "(files only)";
  const where = task.surface === "dm" ? "Direct message" : `<#${task.channelId}>`;
  return {
    type: "section",
    text: mrkdwn(
      `*<${link}|${title}>*\n${where} · ${STATUS[task.status]} · ${when(task.startedAt)}`,
    ),
  };
}

/** The Home tab's view, for `views.publish`. */
export function renderHome(home: HomeView): Record<string, unknown> {
  const summary = summarizeDefaults(home.defaults);
  const tasks =
    home.tasks.length === 0
      ? [
          {
            type: "section",
            text: mrkdwn(
              "You have no tasks yet. Press *New task*, type `/task` in a channel, or send me a message to start one.",
            ),
          },
        ]
      : home.tasks.map((t) => taskBlock(t, home.teamUrl));
  return {
    type: "home",
    blocks: [
      { type: "header", text: plain("Task Agent") },
      {
        type: "actions",
        block_id: "home_actions",
        elements: [
          { type: "button", action_id: HOME_NEW_TASK, text: plain("New task"), style: "primary" },
          { type: "button", action_id: HOME_EDIT_DEFAULTS, text: plain("Edit defaults") },
        ],
      },
      {
        type: "section",
        text: mrkdwn(
          summary
            ? `*Your defaults:* ${summary}`
            : "*Your defaults:* none (the channel's defaults, or the service's own, apply).",
        ),
      },
      ...(home.admin ? adminHomeBlocks(home.admin) : []),
      { type: "divider" },
      { type: "header", text: plain("Recent tasks") },
      ...tasks,
    ],
  };
}
