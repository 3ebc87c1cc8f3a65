/**
 * What the History and Files views of a task thread show, and the two things they do: bring
 * one of the thread's files into the thread, and continue the task from the Continue form.
 * The thread is looked up in the store: a view only ever shows a thread the app ran.
 */
import { TaskServiceError } from "../service/errors.ts";
import type { HistoryMessage, ResultFile, ThreadFile } from "../service/schemas.ts";
import type { SlackFileRef, SlackThreadKey } from "../store/types.ts";
import { describeServiceError } from "../view/errors.ts";
import { renderContinued } from "../view/render.ts";
import { mrkdwnText } from "../view/sanitize.ts";
import { FILES_PAGE_SIZE, HISTORY_PAGE_SIZE, type Paging } from "../view/task-views.ts";
import { decodeFile } from "./file-delivery.ts";
import type { ThreadRef } from "./ports.ts";
import type { ThreadReply } from "./requests.ts";
import type { CoordinatorDeps } from "./task-context.ts";

export type ViewResult<T> =
  | { readonly ok: true; readonly items: readonly T[]; readonly paging: Paging }
  | { readonly ok: false; readonly error: string };

const NOT_A_TASK = "This thread has no task the app knows of (it may have been started elsewhere).";
const GONE =
  "The task service no longer has this task (its project was deleted or expired), so there is nothing to show.";

/** How a follow-up from the Continue form is checked, then handled like a reply in the thread. */
export interface ReplyHandling {
  readonly reply: (reply: ThreadReply) => Promise<boolean>;
  /** What to tell the person when the reply would be refused (a rate slot is taken otherwise). */
  readonly check: (reply: Omit<ThreadReply, "ts">) => Promise<string | undefined>;
}

export class ThreadViews {
  readonly #deps: CoordinatorDeps;
  readonly #replies: ReplyHandling;

  constructor(deps: CoordinatorDeps, replies: ReplyHandling) {
    this.#deps = deps;
    this.#replies = replies;
  }

  /** The service's reference of a task thread, if the app ran a task there. */
  async ref(key: SlackThreadKey): Promise<ThreadRef | undefined> {
    const record = await this.#deps.store.getThread(key);
    if (!record || record.threadId === "") return undefined;
    return { projectId: record.projectId, threadId: record.threadId };
  }

  async history(
    key: SlackThreadKey,
    page: number,
    statusMessages: boolean,
  ): Promise<ViewResult<HistoryMessage>> {
    return this.#page(key, async (ref) => {
      const res = await this.#deps.workspaces.service(key.teamId).getHistory(ref, {
        page,
        pageSize: HISTORY_PAGE_SIZE,
        includeStatusMessages: statusMessages,
      });
      return {
        items: res.messages,
        paging: pagingOf(page, res.pagination, res.messages.length, HISTORY_PAGE_SIZE),
      };
    });
  }

  async files(key: SlackThreadKey, page: number): Promise<ViewResult<ThreadFile>> {
    return this.#page(key, async (ref) => {
      const res = await this.#deps.workspaces
        .service(key.teamId)
        .listFiles(ref, { page, pageSize: FILES_PAGE_SIZE });
      return {
        items: res.files,
        paging: pagingOf(page, res.pagination, res.files.length, FILES_PAGE_SIZE),
      };
    });
  }

  /**
   * Brings one of the thread's files into the thread (uploaded, unless it is there already),
   * or gives its download link. Returns what to tell the person who asked.
   */
  async fetchFile(key: SlackThreadKey, fileId: string): Promise<string> {
    const ref = await this.ref(key);
    if (!ref) return NOT_A_TASK;
    let file: ResultFile | undefined;
    try {
      const result = await this.#deps.workspaces
        .service(key.teamId)
        .getTaskResult(ref, { timeout: 0 });
      file = result.files.find((f) => f.file_id === fileId);
    } catch (err) {
      return describeError(err);
    }
    if (!file)
      return "The service does not offer that file any more (it belongs to an earlier run).";
    const name = mrkdwnText(file.file_name);
    const shared = await this.#deps.workspaces
      .writer(key.teamId)
      .sharedFileNames(key.channelId, key.threadTs)
      .catch(() => new Set<string>());
    if (shared.has(file.file_name)) return `\`${name}\` is already in the thread.`;
    const bytes = decodeFile(file);
    if (bytes) {
      await this.#deps.workspaces
        .writer(key.teamId)
        .upload(key.channelId, key.threadTs, [{ filename: file.file_name, bytes }]);
      return `\`${name}\` is now in the thread.`;
    }
    if (file.download_url && /^https:\/\//.test(file.download_url)) {
      return `\`${name}\` is too large to attach here: <${file.download_url.replace(/[|<>]/g, encodeURIComponent)}|download it>.`;
    }
    return `\`${name}\` has no content the service can give.`;
  }

  /**
   * A follow-up from the Continue form: checked first (people, usage, rate: a refusal is the
   * person's alone, nothing is posted), then posted in the thread (so everyone sees what was
   * asked) and handled like a reply typed there.
   */
  async continueTask(
    key: SlackThreadKey,
    userId: string,
    text: string,
    files: readonly SlackFileRef[],
  ): Promise<string | undefined> {
    if (!(await this.ref(key))) return NOT_A_TASK;
    const refusal = await this.#replies.check({ key, userId, text, files });
    if (refusal !== undefined) return refusal;
    const names = files.map((f) => f.name).filter((n) => n !== "");
    const payload = renderContinued(userId, text, names);
    const ts = await this.#deps.workspaces
      .writer(key.teamId)
      .post(key.channelId, payload, key.threadTs);
    await this.#replies.reply({ key, userId, text, ts, files, checked: true });
    return undefined;
  }

  async #page<T>(
    key: SlackThreadKey,
    load: (ref: ThreadRef) => Promise<{ items: readonly T[]; paging: Paging }>,
  ): Promise<ViewResult<T>> {
    const ref = await this.ref(key);
    if (!ref) return { ok: false, error: NOT_A_TASK };
    try {
      return { ok: true, ...(await load(ref)) };
    } catch (err) {
      this.#deps.logger.warn({ err }, "could not load a task view");
      return { ok: false, error: describeError(err) };
    }
  }
}

function describeError(err: unknown): string {
  return err instanceof TaskServiceError && err.kind === "not_found"
    ? GONE
    : describeServiceError(err);
}

function pagingOf(
  page: number,
  p: { has_next?: boolean | undefined; total_pages?: number | undefined } | null | undefined,
  count: number,
  pageSize: number,
): Paging {
  const hasNext =
    p?.has_next ?? (p?.total_pages !== undefined ? page < p.total_pages : count >= pageSize);
  return { page, hasNext, ...(p?.total_pages ? { totalPages: p.total_pages } : {}) };
}
