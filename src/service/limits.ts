/** The spec's request limits, checked before any byte is sent: a user hears which one they hit. */
import { extname } from "node:path";
import { formatBytes } from "../util/bytes.ts";
import { TaskServiceError } from "./errors.ts";
import type { UploadFile } from "./multipart.ts";

export const LIMITS = {
  promptMaxChars: 5000,
  maxFiles: 10,
  maxFileBytes: 50 * 1024 * 1024,
  maxTotalBytes: 200 * 1024 * 1024,
  pollTimeoutMaxS: 600,
  pageSizeMax: 1000,
} as const;

export const ALLOWED_EXTENSIONS: ReadonlySet<string> = new Set(
  [
    "png jpg jpeg gif svg webp", // images
    "pdf docx xlsx pptx csv", // documents
    "txt json xml md", // text
    "mp3 wav flac aac", // audio
    "zip rar 7z", // archives
  ].flatMap((group) => group.split(" ").map((ext) => `.${ext}`)),
);

/** Prompt length in characters as the service counts them (Unicode code points). */
export const promptLength = (prompt: string): number => [...prompt].length;

type SizedFile = Pick<UploadFile, "name" | "size">;

function refuse(limit: string, message: string): never {
  throw new TaskServiceError({ kind: "input", limit, message });
}

export function validateTaskInput(prompt: string | undefined, files: readonly SizedFile[]): void {
  const hasPrompt = prompt !== undefined && prompt.trim() !== "";
  if (!hasPrompt && files.length === 0) {
    refuse("prompt_required", "A prompt is required when no files are attached.");
  }
  const len = promptLength(prompt ?? "");
  if (len > LIMITS.promptMaxChars) {
    refuse(
      "prompt_length",
      `The prompt is ${len.toLocaleString("en-US")} characters long; the limit is ${LIMITS.promptMaxChars.toLocaleString("en-US")}.`,
    );
  }
  if (files.length > LIMITS.maxFiles) {
    refuse(
      "file_count",
      `${files.length} files attached; at most ${LIMITS.maxFiles} can be sent with one request.`,
    );
  }
  let total = 0;
  for (const f of files) {
    const ext = extname(f.name).toLowerCase();
    if (!ALLOWED_EXTENSIONS.has(ext)) {
      refuse(
        "file_type",
        `"${f.name}" has a file type the service does not accept (${ext || "no extension"}). Accepted: ${[...ALLOWED_EXTENSIONS].join(" ")}.`,
      );
    }
    if (f.size > LIMITS.maxFileBytes) {
      refuse(
        "file_size",
        `"${f.name}" is ${formatBytes(f.size)}; each file may be at most ${formatBytes(LIMITS.maxFileBytes)}.`,
      );
    }
    total += f.size;
  }
  if (total > LIMITS.maxTotalBytes) {
    refuse(
      "total_size",
      `The files add up to ${formatBytes(total)}; one request may carry at most ${formatBytes(LIMITS.maxTotalBytes)}.`,
    );
  }
}
