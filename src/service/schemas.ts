/**
 * zod schemas of every response of the Task Execution Service. They follow the spec and
 * stay tolerant of what the deployed service adds (unknown fields are accepted and kept
 * out of the typed result; optional fields default sensibly).
 */
import { z } from "zod";
import { owned } from "../util/text.ts";

/**
 * Bounds on what one field of an answer may hold (an answer as a whole is bounded by the
 * client's read cap). An id or a status past its bound makes the answer not the contract's;
 * a name, a path or a type past its bound is cut (never between the halves of an emoji).
 */
const ID_MAX = 256;
/** A file's id is a path in its run's workspace (`<thread_id>:/workspace/<path>`): longer. */
const FILE_ID_MAX = 4096;
const NAME_MAX = 1024;
const URL_MAX = 8192;

/** An identifier of the service's (a project, a thread, a run, a message, a file). */
const Id = z.string().min(1).max(ID_MAX);

/**
 * A string cut to `max` characters, as a string of its own (a slice would keep the whole
 * original alive: a 30-million-character name cut to 1,024 held 30 million).
 */
const cut = (max: number) =>
  z
    .string()
    .transform((v) =>
      v.length <= max ? v : owned(v.slice(0, max).replace(/[\uD800-\uDBFF]$/, "")),
    );

/**
 * A list of `entry`, an entry that is not one left out (a file whose id is no id, say): one
 * odd entry does not cost the others.
 */
const entries = <S extends z.ZodType>(entry: S) =>
  z
    .array(z.unknown())
    .nullish()
    .transform((items): z.infer<S>[] =>
      (items ?? []).flatMap((item) => {
        const read = entry.safeParse(item);
        return read.success ? [read.data as z.infer<S>] : [];
      }),
    );

export const RUN_STATUSES = ["running", "completed", "failed", "stopped", "no_run"] as const;
/** Known statuses plus whatever new one the service may invent (kept as a string). */
export const RunStatus = z.string().min(1).max(64);
export type RunStatus = (typeof RUN_STATUSES)[number] | (string & {});

/** Statuses of a run that is not over yet (the documented one, and what deployments add). */
const ACTIVE_STATUSES = new Set([
  "running",
  "queued",
  "pending",
  "in_progress",
  "starting",
  "created",
]);

/** Whether a status ends a run. Unknown new statuses count as final only if not "active" words. */
export const isFinalStatus = (s: string): boolean => !ACTIVE_STATUSES.has(s);

const ok = { success: z.boolean().optional() };

export const CreateTaskResponse = z.object({
  ...ok,
  project_id: Id,
  thread_id: Id,
  agent_run_id: Id,
  message: z.string().optional(),
});
export type CreateTaskResponse = z.infer<typeof CreateTaskResponse>;

export const CodeBlock = z.object({
  language: cut(64)
    .nullish()
    .transform((v) => v ?? ""),
  code: z.string(),
  file_path: cut(NAME_MAX).nullish(),
});
export type CodeBlock = z.infer<typeof CodeBlock>;

/**
 * A file of a task result, as the app keeps it: what it is, never its content (a file's
 * content is read alone, when it is delivered: result-file.ts). Content a service sends
 * anyway is not kept.
 */
export const ResultFile = z.object({
  file_id: z.string().min(1).max(FILE_ID_MAX),
  file_name: cut(NAME_MAX).pipe(z.string().min(1)),
  file_path: cut(NAME_MAX).nullish(),
  file_type: cut(255).nullish(),
  file_size: z.number().int().nonnegative().nullish(),
  included_inline: z.boolean().nullish(),
  /** A link no longer than any browser takes; a longer one is not offered. */
  download_url: z
    .string()
    .nullish()
    .transform((v) => (v && v.length <= URL_MAX ? v : undefined))
    .optional(),
});
export type ResultFile = z.infer<typeof ResultFile>;

export const Pagination = z.object({
  current_page: z.number().int().optional(),
  page_size: z.number().int().optional(),
  total_items: z.number().int().optional(),
  total_pages: z.number().int().optional(),
  has_next: z.boolean().optional(),
  has_prev: z.boolean().optional(),
});
export type Pagination = z.infer<typeof Pagination>;

export const TaskResult = z.object({
  ...ok,
  thread_id: Id.optional(),
  project_id: Id.optional(),
  agent_run_id: Id.nullish(),
  status: RunStatus,
  response: z
    .object({
      role: z.string().optional(),
      content: z
        .string()
        .nullish()
        .transform((v) => v ?? ""),
      message_id: Id.nullish(),
      created_at: z.string().nullish(),
    })
    .nullish()
    .transform((v) => v ?? { content: "" }),
  has_code: z.boolean().optional(),
  has_files: z.boolean().optional(),
  code_blocks: z
    .array(CodeBlock)
    .nullish()
    .transform((v) => v ?? []),
  files: entries(ResultFile),
  pagination: Pagination.nullish(),
  waited_seconds: z.number().nullish(),
  /** Not in the spec; some deployments explain a failed run here. */
  error: z.unknown().optional(),
});
export type TaskResult = z.infer<typeof TaskResult>;

export const ContinueResponse = z.object({
  ...ok,
  agent_run_id: Id,
  status: RunStatus.optional(),
  message: z.string().optional(),
});
export type ContinueResponse = z.infer<typeof ContinueResponse>;

export const HistoryMessage = z.object({
  message_id: Id.nullish(),
  role: z.string(),
  content: z
    .string()
    .nullish()
    .transform((v) => v ?? ""),
  created_at: z.string().nullish(),
  has_code: z.boolean().nullish(),
  has_files: z.boolean().nullish(),
});
export type HistoryMessage = z.infer<typeof HistoryMessage>;

export const HistoryResponse = z.object({
  ...ok,
  thread_id: z.string().optional(),
  messages: z.array(HistoryMessage),
  pagination: Pagination.nullish(),
});
export type HistoryResponse = z.infer<typeof HistoryResponse>;

export const StopResponse = z.object({
  ...ok,
  agent_run_id: Id.nullish(),
  status: RunStatus.optional(),
});
export type StopResponse = z.infer<typeof StopResponse>;

export const ThreadFile = z.object({
  file_id: z.string().min(1).max(FILE_ID_MAX),
  file_name: cut(NAME_MAX).pipe(z.string().min(1)),
  file_size: z.number().int().nonnegative().nullish(),
  file_type: cut(255).nullish(),
});
export type ThreadFile = z.infer<typeof ThreadFile>;

export const FileListResponse = z.object({
  ...ok,
  files: entries(ThreadFile),
  pagination: Pagination.nullish(),
});
export type FileListResponse = z.infer<typeof FileListResponse>;

/** `{detail}` error bodies: a string, or FastAPI-style validation issues. */
export const ErrorBody = z.object({
  detail: z.union([
    z.string(),
    z.array(
      z.object({
        loc: z.array(z.union([z.string(), z.number()])).optional(),
        msg: z.string(),
        type: z.string().optional(),
      }),
    ),
    z.record(z.string(), z.unknown()),
  ]),
});
