/** A run's messages: the answer in `markdown` blocks (Slack renders standard Markdown itself),
 * split so that no payload comes near Slack's limits; status and controls follow. */
import type { KnownBlock, MessageMetadata } from "@slack/types";
import { z } from "zod";
import type { RunState } from "../store/types.ts";
import { formatBytes } from "../util/bytes.ts";
import { actions, button, context, quoteLines, readValue, section } from "./blocks.ts";
import { type FeedbackRef, feedbackBlock } from "./feedback.ts";
import { repairPartial, splitMarkdown } from "./markdown.ts";
import { mrkdwnExcerpt, notificationText } from "./mrkdwn.ts";
import { codeText, mrkdwnText, neutralizeMentions, truncate } from "./sanitize.ts";
import { revealLinkHosts } from "./scan/link-hosts.ts";
import { type TaskRef, taskButtons } from "./task-views.ts";

/** Markdown characters per message: Slack allows 12,000 across the markdown blocks of one payload
 * and has refused payloads of about 12–13k characters of block text in total. */
export const MESSAGE_MARKDOWN_LIMIT = 10_000;
const MESSAGE_TOTAL_LIMIT = 11_500;
const FALLBACK_CHARS = 300; // the `text` fallback is only for notifications
const MAX_FILE_LINES = 20;

export const STOP_ACTION_ID = "task_stop";

const blockChars = (blocks: readonly KnownBlock[]): number =>
  blocks.reduce((n, b) => n + textOf(b), 0);

function textOf(b: KnownBlock): number {
  if (b.type === "markdown") return b.text.length;
  if (b.type === "section") return b.text?.text.length ?? 0;
  if (b.type !== "context") return 100;
  return b.elements.reduce(
    (n, e) => n + ("text" in e && typeof e.text === "string" ? e.text.length : 0),
    0,
  );
}

export interface MessagePayload {
  readonly text: string;
  readonly blocks: KnownBlock[];
  readonly metadata?: MessageMetadata; // the final message's completion record (completion.ts)
}

export interface FileNote {
  readonly name: string;
  readonly size: number | undefined;
  readonly attached: boolean;
  readonly reason?: string; // why it is not attached
  readonly url?: string;
}

export interface RunView {
  readonly text: string;
  readonly state: RunState;
  readonly elapsedMs: number;
  readonly stoppedBy?: string;
  readonly reason?: string;
  readonly stopValue?: string; // while running: the Stop button's value
  readonly files?: readonly FileNote[];
  readonly remark?: string; // a short one under the answer (e.g. attachments not sent)
  readonly serviceStatus?: string; // while running: what the service says it does ("queued")
  readonly thread?: TaskRef; // once it ended: for the History, Files and Continue buttons
  readonly completion?: MessageMetadata;
  readonly runId?: string; // at the service, for the feedback buttons
  /** While running: the agent's steps, shown as a plan above the status or in its timeline. */
  readonly steps?: {
    readonly count: number;
    readonly last: string;
    readonly recent?: readonly string[];
    readonly as?: "plan" | "timeline";
  };
}

export const encodeStopValue = (ref: FeedbackRef): string =>
  JSON.stringify({ c: ref.channelId, t: ref.threadTs, r: ref.runId });

const StopValue = z.object({ c: z.string(), t: z.string(), r: z.string() });

export function decodeStopValue(value: string | undefined): FeedbackRef | undefined {
  const v = readValue(value, StopValue);
  return v && { channelId: v.c, threadTs: v.t, runId: v.r };
}

export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

/** A later part's notification: a code block it starts with keeps its ``` on a line of its own. */
const continued = (text: string): string =>
  `(continued)${text.startsWith("```") ? "\n" : " "}${text}`;

/** What an error says when its reason is missing or shows nothing. */
const SOMETHING_WRONG = "Something went wrong.";

/** A reason as mrkdwn after the status (several lines start on their own), or "". */
function why(reason: string | undefined, limit: number): string {
  const text = reason === undefined ? "" : mrkdwnExcerpt(reason, limit);
  if (text.trim() === "") return "";
  return text.includes("\n") ? `\n${text}` : ` ${text}`;
}

const because = (reason: string | undefined): string => {
  const text = why(reason, 500);
  return text === "" ? "" : `:${text}`;
};

function statusLine(view: RunView): string {
  const took = formatDuration(view.elapsedMs);
  switch (view.state) {
    case "running":
      return `:hourglass_flowing_sand: ${runningWhat(view)} ${took}${stepsText(view.steps)}`;
    case "completed":
      return `:white_check_mark: Completed in ${took}`;
    case "failed":
      return `:x: Failed after ${took}${because(view.reason)}`;
    case "stopped":
      return `:black_square_for_stop: Stopped${view.stoppedBy ? ` by <@${view.stoppedBy}>` : ""} after ${took}${because(view.reason)}`;
    case "error":
      return `:warning:${why(view.reason, 1500) || ` ${SOMETHING_WRONG}`}`;
  }
}

/** A notification's text, never blank (an answer or a reason of empty headings shows none). */
function notice(markdown: string, otherwise: string): string {
  const text = notificationText(markdown, FALLBACK_CHARS);
  return text.trim() === "" ? otherwise : text;
}

/** "Working…", or what the service says when it is not simply running ("Queued…"). */
function runningWhat(view: RunView): string {
  const status = view.serviceStatus;
  if (status === undefined || status === "running" || !/^[a-z_]{1,20}$/.test(status)) {
    return "Working…";
  }
  return `${status[0]?.toUpperCase() ?? ""}${status.slice(1).replace(/_/g, " ")}…`;
}

/** A timeline's steps in the status line: a count and the latest one. */
function stepsText(steps: RunView["steps"]): string {
  if (steps === undefined || steps.as === "plan") return "";
  return ` · step ${steps.count}: ${codeText(steps.last, 80)}`;
}

/** How many of a plan's latest steps an edited message lists. */
export const PLAN_STEPS_SHOWN = 5;

/** The agent's plan as an edited message shows it: the latest steps, earlier ones counted. */
function planBlock(steps: NonNullable<RunView["steps"]>): KnownBlock {
  const recent = (steps.recent ?? [steps.last]).slice(-PLAN_STEPS_SHOWN);
  const earlier = steps.count - recent.length;
  const lines = recent.map(
    (title, i) =>
      `${i === recent.length - 1 ? ":hourglass_flowing_sand:" : ":white_check_mark:"} ${codeText(title, 80)}`,
  );
  const head = `*Plan* · ${steps.count} ${steps.count === 1 ? "step" : "steps"}`;
  const more = earlier > 0 ? [`…and ${earlier} earlier`] : [];
  return context([head, ...more, ...lines].join("\n"));
}

function fileLines(files: readonly FileNote[]): string {
  const lines = files.slice(0, MAX_FILE_LINES).map((f) => {
    const size = f.size === undefined ? "" : ` (${formatBytes(f.size)})`;
    const name = codeText(f.name, 120);
    if (f.attached) return `• ${name}${size}: attached below`;
    const link =
      f.url && /^https:\/\//.test(f.url)
        ? ` <${f.url.replace(/[|<>]/g, encodeURIComponent)}|download>`
        : "";
    return `• ${name}${size}: ${mrkdwnText(f.reason ?? "not attached")}${link}`;
  });
  if (files.length > MAX_FILE_LINES) lines.push(`…and ${files.length - MAX_FILE_LINES} more`);
  return `*Files*\n${lines.join("\n")}`;
}

const markdownBlock = (text: string): KnownBlock => ({ type: "markdown", text });

/** The answer of a run as one or more messages; the last one carries status and controls. */
export function renderRun(view: RunView, limit = MESSAGE_MARKDOWN_LIMIT): MessagePayload[] {
  // Repair first: dropping an unpaired ` or ** could otherwise rebuild "<!channel>". The
  // closing fence it adds holds no mention, so it is not scanned again.
  const repaired = view.state === "running" ? repairPartial(view.text) : undefined;
  const body = repaired
    ? neutralizeMentions(revealLinkHosts(repaired.kept)) + repaired.closing
    : neutralizeMentions(revealLinkHosts(view.text));
  const parts = body.trim() === "" ? [] : splitMarkdown(body, limit);
  const status = statusLine(view);
  const payloads: MessagePayload[] = parts.map((part, i) => ({
    text:
      i === 0
        ? notice(part, statusFallback(view, status))
        : continued(notificationText(part, FALLBACK_CHARS)),
    blocks: [markdownBlock(part)],
  }));
  const tail: KnownBlock[] = [];
  if (view.files && view.files.length > 0) {
    tail.push(section(fileLines(view.files)));
  }
  if (view.remark) {
    tail.push(context(truncate(mrkdwnText(view.remark), 2000)));
  }
  if (view.state === "running" && view.steps?.as === "plan") tail.push(planBlock(view.steps));
  tail.push(context(status)); // escaping can make a reason five times longer: context cuts it
  if (view.state === "running" && view.stopValue) {
    const stop = button(STOP_ACTION_ID, "Stop", { style: "danger", value: view.stopValue });
    tail.push(actions("task_controls", [stop]) as unknown as KnownBlock);
  }
  if (
    view.thread &&
    (view.state === "completed" || view.state === "failed" || view.state === "stopped")
  ) {
    tail.push(taskButtons(view.thread) as unknown as KnownBlock);
    if (view.runId) tail.push(feedbackBlock({ ...view.thread, runId: view.runId }));
  }
  const last = payloads.at(-1);
  const lastChars = last ? blockChars(last.blocks) : 0;
  if (last && lastChars + blockChars(tail) <= MESSAGE_TOTAL_LIMIT) {
    last.blocks.push(...tail);
  } else if (last) {
    // A full last part plus a long files list would pass Slack's total for one message.
    payloads.push({ text: statusFallback(view, status), blocks: tail });
  } else {
    const placeholder =
      view.state === "running"
        ? "_Working on it…_"
        : view.state === "completed" && !(view.files && view.files.length > 0)
          ? "_The task finished without a text answer._"
          : undefined;
    payloads.push({
      text: statusFallback(view, status),
      blocks: [...(placeholder ? [markdownBlock(placeholder)] : []), ...tail],
    });
  }
  const final = payloads.at(-1);
  if (view.completion && view.state !== "running" && final) {
    payloads[payloads.length - 1] = { ...final, metadata: view.completion };
  }
  return payloads;
}

function statusFallback(view: RunView, status: string): string {
  return view.state === "error"
    ? notice(view.reason ?? "", SOMETHING_WRONG)
    : status.replace(/^:[a-z_]+: /, "");
}

/** mrkdwn as a block quote (mrkdwn quotes one level). */
const quoteMrkdwn = (mrkdwn: string): string =>
  mrkdwn
    .split("\n")
    .map((l) => (l.startsWith("> ") ? l : `> ${l}`))
    .join("\n");

/** The channel message that opens a task thread: who asked, and what. */
export function renderPrompt(
  userId: string,
  prompt: string,
  fileNames: readonly string[] = [],
): MessagePayload {
  const files =
    fileNames.length === 0
      ? []
      : [context(`:paperclip: ${mrkdwnText(truncate(fileNames.join(", "), 2900))}`)];
  if (prompt === "") {
    return {
      text: `<@${userId}> sent the task agent ${fileNames.length} file(s)`,
      blocks: [section(`<@${userId}> sent the task agent:`), ...files],
    };
  }
  // Quoting adds two characters a line; keep a pathological prompt inside one markdown block.
  const quoted = truncate(
    quoteLines(neutralizeMentions(revealLinkHosts(prompt))),
    MESSAGE_MARKDOWN_LIMIT,
  );
  return {
    text: `<@${userId}> asked: ${notificationText(prompt, FALLBACK_CHARS)}`,
    blocks: [section(`<@${userId}> asked the task agent:`), markdownBlock(quoted), ...files],
  };
}

/** A follow-up from the Continue form, posted in its thread: who asked, what, and which files. */
export function renderContinued(
  userId: string,
  text: string,
  fileNames: readonly string[],
): MessagePayload {
  const shown = [
    `<@${userId}> continued the task:`,
    ...(text.trim() === "" ? [] : [quoteMrkdwn(mrkdwnExcerpt(text, 2800))]),
    ...(fileNames.length > 0 ? [`:paperclip: ${mrkdwnText(fileNames.join(", "))}`] : []),
  ].join("\n");
  // A section holds 3,000 characters (escaping makes the text up to five times longer).
  const cut = truncate(shown, 3000);
  return { text: cut, blocks: [section(cut)] };
}

export const USAGE = [
  "*Usage:* `/task <what you want built>`",
  "For example: `/task Build a landing page for a bakery with a contact form`",
  "The answer streams into a thread under your request; reply in that thread to continue the conversation, and press *Stop* to stop a run.",
  "You can also mention me (`@Task Agent Build a landing page`) or send me a direct message.",
  "Options go first: `/task [model=NAME, agent=ID, effort=low|medium|high, thinking, context] your prompt`",
  "`/task` alone opens a form with the options and up to 10 files; files attached to a mention, a DM or a reply in a task thread go with it too.",
  "`/task history` and `/task files` show your latest task here; `/task settings` sets this channel's default options; your own defaults are in the app's Home tab.",
].join("\n");

/** The private note naming the attachments that were not sent, each with its reason. */
export function renderLeftOutFiles(
  leftOut: readonly { readonly name: string; readonly reason: string }[],
  sentAny: boolean,
): string {
  const head =
    leftOut.length === 1
      ? "This attachment was not sent to the task service:"
      : `These ${leftOut.length} attachments were not sent to the task service:`;
  const lines = leftOut.map((f) => `• ${mrkdwnText(f.name)}: ${mrkdwnText(f.reason)}`);
  const tail = sentAny ? ["The other files went with your message."] : [];
  return [head, ...lines, ...tail].join("\n");
}
