/**
 * The History and Files views of a thread the app ran, "Get it" (one of its files into the thread)
 * and the Continue form; only for someone the people and usage policies let in (checks.ts).
 */
import { TaskServiceError } from "../service/errors.ts";
import type { ResultFile } from "../service/schemas.ts";
import type { SlackFileRef, SlackThreadKey } from "../store/types.ts";
import { describeServiceError } from "../view/errors.ts";
import { renderContinued } from "../view/render.ts";
import { mrkdwnText } from "../view/sanitize.ts";
import { FILES_PAGE_SIZE, HISTORY_PAGE_SIZE, type Paging } from "../view/task-views.ts";
import { PerKeyThrottle } from "../util/throttle.ts";
import { readFile, safeFileName } from "../runs/file-delivery.ts";
import { memoryLimits } from "../runs/memory.ts";
import type { ThreadRef } from "./ports.ts";
import type { ThreadReply } from "./requests.ts";
import { viewerRefusal } from "./access/checks.ts";
import type { CoordinatorDeps } from "./coordinator-deps.ts";

/** History, Files and "Get it" loads one person may ask for per minute (each is a service call). */
export const VIEW_LOADS_PER_MIN = 30;
/** A fetched result answers "Get it" in its thread for a minute; 16 kept, never their content. */
const RESULT_TTL_MS = 60_000;
const RESULTS_KEPT = 16;

type ResultFiles = readonly { readonly file: ResultFile; readonly position: number }[];

/** The process's default budgets, when the coordinator is given none (tests). */
const DEFAULT_MEMORY = memoryLimits();

const NOT_A_TASK = "This thread has no task the app knows of (it may have been started elsewhere).";
const GONE =
  "The task service no longer has this task (its project was deleted or expired), so there is nothing to show.";

interface ReplyHandling {
  readonly reply: (reply: ThreadReply) => Promise<boolean>;
  readonly check: (reply: Omit<ThreadReply, "ts">) => Promise<string | undefined>;
}

export class ThreadViews {
  readonly #deps: CoordinatorDeps;
  readonly #replies: ReplyHandling;
  readonly #throttle = new PerKeyThrottle(VIEW_LOADS_PER_MIN, 60_000, () => this.#deps.now());
  /** The last fetched result's files per thread (insertion order: oldest first). */
  readonly #results = new Map<string, { readonly at: number; readonly files: ResultFiles }>();

  constructor(deps: CoordinatorDeps, replies: ReplyHandling) {
    this.#deps = deps;
    this.#replies = replies;
  }

  /** Too many loads this minute (counted first: asks nobody), or the people and usage policies. */
  async #refusal(key: SlackThreadKey, userId: string): Promise<string | undefined> {
    const wait = this.#throttle.take(`${key.teamId}:${userId}`);
    if (wait !== undefined) {
      return `You opened task history and files ${VIEW_LOADS_PER_MIN} times in the last minute, the most one person may. Please try again in ${Math.max(1, Math.ceil(wait / 1000))} s.`;
    }
    return viewerRefusal(this.#deps, { teamId: key.teamId, channelId: key.channelId, userId });
  }

  async #ref(key: SlackThreadKey): Promise<ThreadRef | undefined> {
    return (await this.#deps.store.getThread(key))?.service;
  }

  async history(key: SlackThreadKey, userId: string, page: number, includeStatusMessages: boolean) {
    return this.#page(key, userId, page, HISTORY_PAGE_SIZE, async (ref, pageSize) => {
      const service = this.#deps.workspaces.service(key.teamId);
      const res = await service.getHistory(ref, { page, pageSize, includeStatusMessages });
      return { items: res.messages, pagination: res.pagination };
    });
  }

  async files(key: SlackThreadKey, userId: string, page: number) {
    return this.#page(key, userId, page, FILES_PAGE_SIZE, async (ref, pageSize) => {
      const service = this.#deps.workspaces.service(key.teamId);
      const res = await service.listFiles(ref, { page, pageSize });
      return { items: res.files, pagination: res.pagination };
    });
  }

  /** A task file into the thread (unless there), or its link; what to tell the person. */
  async fetchFile(key: SlackThreadKey, userId: string, fileId: string): Promise<string> {
    const refused = await this.#refusal(key, userId);
    if (refused !== undefined) return refused;
    const ref = await this.#ref(key);
    if (!ref) return NOT_A_TASK;
    const found = await this.#resultFile(key, ref, fileId).catch(describeError);
    if (typeof found === "string") return found;
    if (!found) {
      return "The service does not offer that file any more (it belongs to an earlier run).";
    }
    const { file, position } = found;
    const safe = safeFileName(file.file_name);
    const name = mrkdwnText(safe);
    const writer = this.#deps.workspaces.writer(key.teamId);
    const shared = await writer
      .sharedFileNames(key.channelId, key.threadTs)
      .catch(() => new Set<string>());
    if (shared.has(safe)) return `\`${name}\` is already in the thread.`;
    if (file.download_url && /^https:\/\//.test(file.download_url)) {
      return `\`${name}\` is too large to attach here: <${file.download_url.replace(/[|<>]/g, encodeURIComponent)}|download it>.`;
    }
    // Its content is read alone, within the same budgets as a run's files.
    const { workspaces, memory = DEFAULT_MEMORY, logger } = this.#deps;
    const from = { service: workspaces.service(key.teamId), memory, ref, log: logger };
    const read = await readFile(from, file, position);
    if ("reason" in read) {
      return read.reason === "content not available"
        ? `\`${name}\` has no content the service can give.`
        : `\`${name}\` could not be brought into the thread: ${read.reason}.`;
    }
    try {
      await writer.upload(key.channelId, key.threadTs, [{ filename: safe, bytes: read.bytes }]);
    } finally {
      read.release();
    }
    return `\`${name}\` is now in the thread.`;
  }

  /** A result's file and its place: from a result fetched this last minute, else the service. */
  async #resultFile(key: SlackThreadKey, ref: ThreadRef, fileId: string) {
    const at = `${key.teamId}/${key.channelId}/${key.threadTs}`;
    const now = this.#deps.now();
    // Expired results go at every click, not only when another is kept.
    for (const [old, r] of this.#results)
      if (now - r.at >= RESULT_TTL_MS) this.#results.delete(old);
    let files = this.#results.get(at)?.files;
    if (files === undefined || !files.some((f) => f.file.file_id === fileId)) {
      const service = this.#deps.workspaces.service(key.teamId);
      const result = await service.getTaskResult(ref, { timeout: 0, includeFileContent: false });
      files = result.files.map((file, position) => ({ file, position }));
      this.#results.delete(at);
      this.#results.set(at, { at: now, files });
      // The oldest (first in insertion order) goes while too many are kept.
      for (const old of this.#results.keys()) {
        if (this.#results.size <= RESULTS_KEPT) break;
        this.#results.delete(old);
      }
    }
    return files.find((f) => f.file.file_id === fileId);
  }

  /** The Continue form: checked (a refusal is the person's alone), posted, handled as a reply. */
  async continueTask(
    key: SlackThreadKey,
    userId: string,
    text: string,
    files: readonly SlackFileRef[],
  ): Promise<string | undefined> {
    if (!(await this.#ref(key))) return NOT_A_TASK;
    const refusal = await this.#replies.check({ key, userId, text, files });
    if (refusal !== undefined) return refusal;
    const names = files.map((f) => f.name).filter((n) => n !== "");
    const payload = renderContinued(userId, text, names);
    const writer = this.#deps.workspaces.writer(key.teamId);
    const ts = await writer.post(key.channelId, payload, key.threadTs);
    await this.#replies.reply({ key, userId, text, ts, files, checked: true });
    return undefined;
  }

  async #page<T>(
    key: SlackThreadKey,
    userId: string,
    page: number,
    pageSize: number,
    load: (ref: ThreadRef, pageSize: number) => Promise<{ items: readonly T[]; pagination: Pages }>,
  ): Promise<
    | { readonly ok: true; readonly items: readonly T[]; readonly paging: Paging }
    | { readonly ok: false; readonly error: string }
  > {
    const refused = await this.#refusal(key, userId);
    if (refused !== undefined) return { ok: false, error: refused };
    const ref = await this.#ref(key);
    if (!ref) return { ok: false, error: NOT_A_TASK };
    try {
      const { items, pagination: p } = await load(ref, pageSize);
      const hasNext =
        p?.has_next ??
        (p?.total_pages !== undefined ? page < p.total_pages : items.length >= pageSize);
      const paging = { page, hasNext, ...(p?.total_pages ? { totalPages: p.total_pages } : {}) };
      return { ok: true, items, paging };
    } catch (err) {
      this.#deps.logger.warn({ err }, "could not load a task view");
      return { ok: false, error: describeError(err) };
    }
  }
}

const describeError = (err: unknown): string =>
  err instanceof TaskServiceError && err.kind === "not_found" ? GONE : describeServiceError(err);

type Pages =
  { has_next?: boolean | undefined; total_pages?: number | undefined } | null | undefined;
