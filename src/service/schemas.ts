/** zod schemas of the service's responses: the spec's, tolerant of what deployments add. */
import { z } from "zod";
import { owned } from "../util/text.ts";

/** Field bounds: an id past its bound breaks the contract; a name, path or type is cut. */
const Id = z.string().min(1).max(256);
/** A file's id is a path in its run's workspace (`<thread_id>:/workspace/<path>`): longer. */
const FileId = z.string().min(1).max(4096);
const NAME_MAX = 1024;
const URL_MAX = 8192;

/** A string cut to `max` characters, never in an emoji, as a string of its own (not a slice). */
const cut = (max: number) =>
  z
    .string()
    .transform((v) =>
      v.length <= max ? v : owned(v.slice(0, max).replace(/[\uD800-\uDBFF]$/, "")),
    );

/** A list of `entry`; an odd item is left out, not the list. */
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

/** `schema`'s value, or `empty` when the field is missing or null. */
const orEmpty = <S extends z.ZodType>(schema: S, empty: NonNullable<z.output<S>>) =>
  schema.nullish().transform((v): NonNullable<z.output<S>> => v ?? empty);

/** The documented statuses, or any new one the service invents. */
const RunStatus = z.string().min(1).max(64);

const text = orEmpty(z.string(), "");

/** Statuses of a run that is not over yet (the documented one, and what deployments add). */
const ACTIVE_STATUSES = new Set("running queued pending in_progress starting created".split(" "));

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
  language: orEmpty(cut(64), ""),
  code: z.string(),
  file_path: cut(NAME_MAX).nullish(),
});
export type CodeBlock = z.infer<typeof CodeBlock>;

/** A file of a task result, never its content (read alone when delivered: result-file.ts). */
export const ResultFile = z.object({
  file_id: FileId,
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

const Pagination = z.object({
  current_page: z.number().int().optional(),
  page_size: z.number().int().optional(),
  total_items: z.number().int().optional(),
  total_pages: z.number().int().optional(),
  has_next: z.boolean().optional(),
  has_prev: z.boolean().optional(),
});

export const TaskResult = z.object({
  ...ok,
  thread_id: Id.optional(),
  project_id: Id.optional(),
  agent_run_id: Id.nullish(),
  status: RunStatus,
  response: orEmpty(
    z.object({
      role: z.string().optional(),
      content: text,
      message_id: Id.nullish(),
      created_at: z.string().nullish(),
    }),
    { content: "" },
  ),
  has_code: z.boolean().optional(),
  has_files: z.boolean().optional(),
  code_blocks: orEmpty(z.array(CodeBlock), []),
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
  content: text,
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

export const ThreadFile = ResultFile.pick({
  file_id: true,
  file_name: true,
  file_size: true,
  file_type: true,
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
