/** The views of the buttons under a finished answer: History and Files (paged), and the Continue
 * form, within Slack's limits (100 blocks, 3,000 characters per text and of private_metadata). */
import { z } from "zod";
import type { HistoryMessage, ThreadFile } from "../service/schemas.ts";
import { formatBytes } from "../util/bytes.ts";
import { MODAL_PROMPT_MAX } from "./modal.ts";
import { mrkdwnExcerpt } from "./mrkdwn.ts";
import { codeText, mrkdwnText, truncate } from "./sanitize.ts";
import {
  actions,
  type Block,
  button,
  context,
  form,
  input,
  modal,
  readValue,
  section,
} from "./blocks.ts";

export const TASK_ACTION = {
  history: "task_history",
  files: "task_files",
  continue: "task_continue",
  page: "task_view_page",
  statusMessages: "task_view_status",
  getFile: "task_file_get",
} as const;
export const CONTINUE_VIEW = "task_continue";

/** Messages of the history per page: each may take a 3,000-character block. */
export const HISTORY_PAGE_SIZE = 10;
/** Files per page: a section with a button each, well inside 100 blocks. */
export const FILES_PAGE_SIZE = 20;

/** Which task thread a button or a view is about (kept in values and private_metadata). */
export interface TaskRef {
  readonly channelId: string;
  readonly threadTs: string;
}

/** A view's state: the thread, the page, and for History whether status messages show. */
export interface ViewState extends TaskRef {
  readonly kind: "history" | "files";
  readonly page: number;
  readonly status?: boolean;
}

export const encodeTaskRef = (ref: TaskRef): string =>
  JSON.stringify({ c: ref.channelId, t: ref.threadTs });

const TaskRefValue = z.object({ c: z.string().min(1), t: z.string().min(1) });

export function decodeTaskRef(value: string | undefined): TaskRef | undefined {
  const v = readValue(value, TaskRefValue);
  return v && { channelId: v.c, threadTs: v.t };
}

export const encodeViewState = (s: ViewState): string =>
  JSON.stringify({ k: s.kind, c: s.channelId, t: s.threadTs, p: s.page, s: s.status === true });

const ViewStateValue = TaskRefValue.extend({
  k: z.enum(["history", "files"]),
  p: z.number().min(1).refine(Number.isInteger),
  s: z.unknown(),
});

export function decodeViewState(value: string | undefined): ViewState | undefined {
  const v = readValue(value, ViewStateValue);
  return v && { channelId: v.c, threadTs: v.t, kind: v.k, page: v.p, status: v.s === true };
}

const viewModal = (title: string, state: ViewState | undefined, blocks: Block[]): Block =>
  modal(title, blocks.slice(0, 100), state && { private_metadata: encodeViewState(state) });

/** Shown at once (a trigger lasts 3 seconds), then replaced by the answer of the service. */
export const renderLoadingView = (title: string): Block =>
  viewModal(title, undefined, [section(":hourglass_flowing_sand: Loading…")]);

export const renderViewError = (title: string, text: string): Block =>
  viewModal(title, undefined, [section(`:warning: ${mrkdwnText(text)}`)]);

export interface Paging {
  readonly page: number;
  readonly hasNext: boolean;
  readonly totalPages?: number | undefined;
}

function pager(state: ViewState, paging: Paging, extra: Block[] = []): Block[] {
  const buttons: Block[] = [];
  const to = (page: number, text: string) =>
    button(`${TASK_ACTION.page}_${text.toLowerCase()}`, text, {
      value: encodeViewState({ ...state, page }),
    });
  if (paging.page > 1) buttons.push(to(paging.page - 1, "Previous"));
  if (paging.hasNext) buttons.push(to(paging.page + 1, "Next"));
  const of = paging.totalPages ? ` of ${paging.totalPages}` : "";
  const all = [...buttons, ...extra];
  return [context(`Page ${paging.page}${of}`), ...(all.length > 0 ? [actions("paging", all)] : [])];
}

const ROLE: Readonly<Record<string, string>> = {
  user: ":bust_in_silhouette: *You asked*",
  assistant: ":robot_face: *The agent*",
  system: ":gear: *Status*",
};

/** "2026-11-23 04:05"; a time that is no ISO date is not cut inside an emoji either. */
const toTheMinute = (at: string): string =>
  at
    .slice(0, 16)
    .replace(/[\uD800-\uDBFF]$/, "")
    .replace("T", " ");

export function renderHistoryView(
  state: ViewState,
  messages: readonly HistoryMessage[],
  paging: Paging,
): Block {
  const blocks: Block[] =
    messages.length === 0 ? [section("_Nothing in this conversation yet._")] : [];
  for (const m of messages.slice(0, HISTORY_PAGE_SIZE)) {
    // Own keys only: a role of "constructor" or "__proto__" is no entry of this table.
    const known = Object.hasOwn(ROLE, m.role) ? ROLE[m.role] : undefined;
    const who = known ?? `*${mrkdwnText(truncate(m.role, 40))}*`;
    const when = m.created_at ? ` · ${mrkdwnText(toTheMinute(m.created_at))}` : "";
    blocks.push(context(`${who}${when}`));
    // A section takes mrkdwn only; only the head of a (maybe long) message is converted.
    const shown = mrkdwnExcerpt(m.content.slice(0, 12_000).replace(/[\uD800-\uDBFF]$/, ""), 3000);
    blocks.push(section(shown.trim() === "" ? "(no text)" : shown));
  }
  const toggle = button(
    TASK_ACTION.statusMessages,
    state.status ? "Hide status messages" : "Show status messages",
    { value: encodeViewState({ ...state, page: 1, status: !state.status }) },
  );
  return viewModal("Task history", state, [
    ...blocks,
    { type: "divider" },
    ...pager(state, paging, [toggle]),
  ]);
}

/** One page of a thread's files, each with a button that brings it into the thread. */
export function renderFilesView(
  state: ViewState,
  files: readonly ThreadFile[],
  paging: Paging,
): Block {
  const blocks: Block[] = files.length === 0 ? [section("_This task has no files._")] : [];
  const thread = { c: state.channelId, t: state.threadTs };
  for (const f of files.slice(0, FILES_PAGE_SIZE)) {
    const size = typeof f.file_size === "number" ? ` · ${formatBytes(f.file_size)}` : "";
    const value = JSON.stringify({ ...thread, f: truncate(f.file_id, 200) });
    blocks.push({
      ...section(`${codeText(f.file_name, 150)}${size}`),
      accessory: button(TASK_ACTION.getFile, "Get it", { value }),
    });
  }
  return viewModal("Task files", state, [...blocks, { type: "divider" }, ...pager(state, paging)]);
}

/** The Continue form: a follow-up's prompt and files (the options of a new task do not apply). */
export const renderContinueView = (ref: TaskRef): Block =>
  form(
    CONTINUE_VIEW,
    "Continue the task",
    "Send",
    [
      input(
        "prompt",
        "What next?",
        { type: "plain_text_input", multiline: true, max_length: MODAL_PROMPT_MAX },
        { optional: true },
      ),
      input("files", "Files", { type: "file_input", max_files: 10 }, { optional: true }),
    ],
    { private_metadata: encodeTaskRef(ref) },
  );

export function taskButtons(ref: TaskRef): Block {
  const value = { value: encodeTaskRef(ref) };
  return actions("task_views", [
    button(TASK_ACTION.history, "History", value),
    button(TASK_ACTION.files, "Files", value),
    button(TASK_ACTION.continue, "Continue…", value),
  ]);
}
