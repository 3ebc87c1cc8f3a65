/**
 * Reads the form body of Create Task / Continue Conversation: multipart (streamed, uploads
 * hashed and measured, never buffered) or urlencoded. Limit violations are collected as
 * validation issues; the body is always read to its end so the client gets the answer.
 */
import { createHash, type Hash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { MultipartError, MultipartParser, multipartBoundary } from "./multipart.ts";
import type { ValidationIssue } from "./validation.ts";

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

/** An uploaded file as the simulator recorded it. */
export interface UploadedFile {
  name: string;
  contentType: string | undefined;
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

export class BadBodyError extends Error {
  override name = "BadBodyError";
}

const MAX_FIELD_BYTES = 1024 * 1024;

export async function readForm(req: IncomingMessage, limits: UploadLimits): Promise<FormBody> {
  const contentType = req.headers["content-type"];
  const boundary = multipartBoundary(contentType);
  if (boundary !== undefined) return readMultipart(req, boundary, limits);
  const body: FormBody = { fields: new Map(), files: [], ignoredFileFields: [], issues: [] };
  if (contentType?.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    let size = 0;
    const chunks: Buffer[] = [];
    await consume(req, (chunk) => {
      size += chunk.length;
      if (size > MAX_FIELD_BYTES * 2) throw new BadBodyError("Form body too large");
      chunks.push(chunk);
    });
    for (const [k, v] of new URLSearchParams(Buffer.concat(chunks).toString("utf8"))) {
      body.fields.set(k, v);
    }
    return body;
  }
  req.resume();
  body.issues.push({
    loc: ["body"],
    msg: "Expected a multipart/form-data (or application/x-www-form-urlencoded) body",
    type: "model_attributes_type",
  });
  return body;
}

export class ClientGoneError extends Error {
  override name = "ClientGoneError";
}

/**
 * Feeds the request body to `onChunk` and resolves at its end. The first error thrown by
 * `onChunk` stops the feeding, but the body is still read to its end (so an answer can be
 * sent on the same connection); then the promise rejects with that error.
 */
function consume(req: IncomingMessage, onChunk: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let failure: unknown;
    let ended = false;
    req.on("data", (chunk: Buffer) => {
      if (failure !== undefined) return;
      try {
        onChunk(chunk);
      } catch (error) {
        failure = error;
      }
    });
    req.on("end", () => {
      ended = true;
      if (failure === undefined) resolve();
      else reject(failure);
    });
    req.on("error", () => {});
    req.on("close", () => {
      if (!ended) reject(new ClientGoneError("client went away during the upload"));
    });
  });
}

async function readMultipart(
  req: IncomingMessage,
  boundary: string,
  limits: UploadLimits,
): Promise<FormBody> {
  const body: FormBody = { fields: new Map(), files: [], ignoredFileFields: [], issues: [] };
  let total = 0;
  let fileCount = 0;
  let current:
    | { kind: "field"; name: string; chunks: Buffer[]; size: number }
    | {
        kind: "file";
        index: number;
        name: string;
        contentType: string | undefined;
        size: number;
        hash: Hash;
      }
    | { kind: "skip" }
    | undefined;
  const parser = new MultipartParser(boundary, {
    onPartStart(headers) {
      if (headers.filename === undefined) {
        current = { kind: "field", name: headers.name, chunks: [], size: 0 };
      } else if (headers.name !== "files") {
        body.ignoredFileFields.push(headers.name);
        current = { kind: "skip" };
      } else if (headers.filename === "") {
        current = { kind: "skip" }; // an empty file input, as browsers send it
      } else {
        current = {
          kind: "file",
          index: fileCount++,
          name: headers.filename,
          contentType: headers.contentType,
          size: 0,
          hash: createHash("sha256"),
        };
      }
    },
    onPartData(data) {
      if (current === undefined || current.kind === "skip") return;
      current.size += data.length;
      if (current.kind === "field") {
        if (current.size > MAX_FIELD_BYTES) throw new BadBodyError("Form field too large");
        current.chunks.push(data);
        return;
      }
      total += data.length;
      if (current.size <= limits.maxFileBytes) current.hash.update(data);
    },
    onPartEnd() {
      if (current?.kind === "field") {
        body.fields.set(current.name, Buffer.concat(current.chunks).toString("utf8"));
      } else if (current?.kind === "file") {
        body.files.push({
          name: current.name,
          contentType: current.contentType,
          size: current.size,
          sha256: current.hash.digest("hex"),
        });
        checkFile(body, current.index, current.name, current.size, limits);
      }
      current = undefined;
    },
  });
  try {
    await consume(req, (chunk) => parser.write(chunk));
    parser.end();
  } catch (error) {
    if (error instanceof MultipartError || error instanceof BadBodyError) {
      throw new BadBodyError(error.message);
    }
    throw error;
  }
  if (fileCount > limits.maxFiles) {
    body.issues.push({
      loc: ["body", "files"],
      msg: `Too many files: at most ${limits.maxFiles} files per request, got ${fileCount}`,
      type: "too_long",
    });
  }
  if (total > limits.maxTotalBytes) {
    body.issues.push({
      loc: ["body", "files"],
      msg: `Total upload size ${total} bytes exceeds the limit of ${limits.maxTotalBytes} bytes`,
      type: "value_error",
    });
  }
  return body;
}

function checkFile(
  body: FormBody,
  index: number,
  name: string,
  size: number,
  limits: UploadLimits,
): void {
  const dot = name.lastIndexOf(".");
  const ext = dot < 0 ? "" : name.slice(dot).toLowerCase();
  if (!(ALLOWED_EXTENSIONS as readonly string[]).includes(ext)) {
    body.issues.push({
      loc: ["body", "files", index],
      msg: `File type not allowed: ${name} (allowed: ${ALLOWED_EXTENSIONS.join(" ")})`,
      type: "value_error",
    });
  }
  if (size > limits.maxFileBytes) {
    body.issues.push({
      loc: ["body", "files", index],
      msg: `File too large: ${name} is ${size} bytes, the limit is ${limits.maxFileBytes} bytes`,
      type: "value_error",
    });
  }
}
