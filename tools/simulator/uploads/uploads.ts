/**
 * The upload rules of Create Task / Continue Conversation (file count, sizes, extensions) and
 * the shape of a read form body, shared by the multipart and urlencoded readers.
 */
import type { ValidationIssue } from "../validation.ts";

// Deliberately not shared with the client (src/service): its mistakes must not hide behind one list.
export const ALLOWED_EXTENSIONS = [
  ".png",
  ".jpg",
  ".jpeg",
  ".gif",
  ".svg",
  ".webp",
  ".pdf",
  ".docx",
  ".xlsx",
  ".pptx",
  ".csv",
  ".txt",
  ".json",
  ".xml",
  ".md",
  ".mp3",
  ".wav",
  ".flac",
  ".aac",
  ".zip",
  ".rar",
  ".7z",
] as const;

export interface UploadLimits {
  /** Files per request (10). */
  maxFiles: number;
  /** Bytes per file (50 MiB). */
  maxFileBytes: number;
  /** Bytes of all files of a request (200 MiB). */
  maxTotalBytes: number;
}

export const DEFAULT_LIMITS: UploadLimits = {
  maxFiles: 10,
  maxFileBytes: 50 * 1024 * 1024,
  maxTotalBytes: 200 * 1024 * 1024,
};

/** Bytes of one text field; a longer one makes the body unparsable (400). */
export const MAX_FIELD_BYTES = 1024 * 1024;

/** An uploaded file as the simulator recorded it (measured and hashed, never kept). */
export interface UploadedFile {
  name: string;
  /** The part's Content-Type; `text/plain` when the part has none (RFC 7578 §4.4). */
  contentType: string;
  size: number;
  sha256: string;
}

export interface FormBody {
  /** Text fields (the last value wins when a name repeats). */
  fields: Map<string, string>;
  /** The parts named `files` that carry a filename. */
  files: UploadedFile[];
  /** Names of file parts that were not named `files` (ignored, like the real service does). */
  ignoredFileFields: string[];
  issues: ValidationIssue[];
}

export function emptyForm(): FormBody {
  return { fields: new Map(), files: [], ignoredFileFields: [], issues: [] };
}

/** The body cannot be parsed: answered 400 "There was an error parsing the body: …". */
export class BadBodyError extends Error {
  override name = "BadBodyError";
}

/** The client went away before its body was read: nobody to answer. */
export class ClientGoneError extends Error {
  override name = "ClientGoneError";
}

/** Issues of one uploaded file (`index` counts the request's `files` parts from 0). */
export function fileIssues(
  index: number,
  name: string,
  size: number,
  limits: UploadLimits,
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const dot = name.lastIndexOf(".");
  const ext = dot < 0 ? "" : name.slice(dot).toLowerCase();
  if (!(ALLOWED_EXTENSIONS as readonly string[]).includes(ext)) {
    issues.push({
      loc: ["body", "files", index],
      msg: `File type not allowed: ${name} (allowed: ${ALLOWED_EXTENSIONS.join(" ")})`,
      type: "value_error",
    });
  }
  if (size > limits.maxFileBytes) {
    issues.push({
      loc: ["body", "files", index],
      msg: `File too large: ${name} is ${size} bytes, the limit is ${limits.maxFileBytes} bytes`,
      type: "value_error",
    });
  }
  return issues;
}

/** Issues of the request's uploads as a whole: how many files, how many bytes. */
export function uploadIssues(
  count: number,
  total: number,
  limits: UploadLimits,
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (count > limits.maxFiles) {
    issues.push({
      loc: ["body", "files"],
      msg: `Too many files: at most ${limits.maxFiles} files per request, got ${count}`,
      type: "too_long",
    });
  }
  if (total > limits.maxTotalBytes) {
    issues.push({
      loc: ["body", "files"],
      msg: `Total upload size ${total} bytes exceeds the limit of ${limits.maxTotalBytes} bytes`,
      type: "value_error",
    });
  }
  return issues;
}
