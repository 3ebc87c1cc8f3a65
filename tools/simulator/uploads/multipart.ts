/**
 * Reads a `multipart/form-data` body with busboy, streamed: uploads are measured and hashed as
 * they arrive, never held in memory; the form rules of uploads.ts are applied on the way.
 */
import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import busboy, { type Busboy, type FieldInfo, type FileInfo } from "busboy";
import {
  BadBodyError,
  ClientGoneError,
  emptyForm,
  type FormBody,
  fileIssues,
  MAX_FIELD_BYTES,
  type UploadLimits,
  uploadIssues,
} from "./uploads.ts";

// busboy (mscdex) rather than its fork @fastify/busboy: the fork drops a `filename*` that
// follows a quoted `filename` (the form RFC 6266 §4.3 recommends) and skips malformed part
// headers silently, where busboy prefers `filename*` and rejects them.

/** A parser for a `multipart/form-data` Content-Type, or undefined for any other (or no boundary). */
export function multipartParser(contentType: string | undefined): Busboy | undefined {
  if (contentType === undefined || !/^\s*multipart\/form-data\s*(;|$)/i.test(contentType)) {
    return undefined;
  }
  try {
    return busboy({
      headers: { "content-type": contentType },
      defCharset: "utf8",
      defParamCharset: "utf8", // filenames are sent as raw UTF-8
      preservePath: true, // record the name as sent
      // busboy flags a value as truncated once it reaches the limit, so one byte more.
      limits: { fieldSize: MAX_FIELD_BYTES + 1 },
    });
  } catch {
    return undefined; // "Multipart: Boundary not found"
  }
}

/** Counters of the request's `files` parts. */
interface Tally {
  count: number;
  total: number;
}

/**
 * Reads the whole body through `parser`. A broken body rejects with BadBodyError, but only once
 * the body was read to its end (so the answer can go out on the same connection); a client
 * that goes away first rejects with ClientGoneError.
 */
export function readMultipart(
  body: Readable,
  parser: Busboy,
  limits: UploadLimits,
): Promise<FormBody> {
  const form = emptyForm();
  const tally: Tally = { count: 0, total: 0 };
  return new Promise((resolve, reject) => {
    let failure: Error | undefined;
    let ended = false;
    let parsed = false;
    const settle = () => {
      if (!ended) return;
      if (failure !== undefined) reject(failure);
      else if (parsed) {
        form.issues.push(...uploadIssues(tally.count, tally.total, limits));
        resolve(form);
      }
    };
    const fail = (error: Error) => {
      if (failure !== undefined) return;
      failure = error;
      body.unpipe(parser);
      body.resume(); // read on to the end, then answer
      settle();
    };
    const failed = () => failure !== undefined;
    parser.on("field", (name, value, info) => onField(form, name, value, info, failed, fail));
    parser.on("file", (name, stream, info) =>
      onFile(form, tally, limits, { name, stream, info }, failed, fail),
    );
    parser.on("error", (error: unknown) => {
      fail(new BadBodyError(error instanceof Error ? error.message : String(error)));
    });
    parser.on("close", () => {
      parsed = true;
      settle();
    });
    body.on("error", () => {}); // the client hung up; "close" follows
    body.on("end", () => {
      ended = true;
      settle();
    });
    body.on("close", () => {
      if (!ended) reject(new ClientGoneError("client went away during the upload"));
    });
    body.pipe(parser);
  });
}

function onField(
  form: FormBody,
  name: string | undefined,
  value: string,
  info: FieldInfo,
  failed: () => boolean,
  fail: (error: Error) => void,
): void {
  if (failed()) return;
  // busboy reports a part without a name (or with an empty one) with an undefined name.
  if (!name) fail(new BadBodyError("Multipart part without a name"));
  else if (info.valueTruncated) fail(new BadBodyError("Form field too large"));
  else form.fields.set(name, value);
}

interface FilePart {
  name: string | undefined;
  stream: Readable;
  info: FileInfo;
}

function onFile(
  form: FormBody,
  tally: Tally,
  limits: UploadLimits,
  part: FilePart,
  failed: () => boolean,
  fail: (error: Error) => void,
): void {
  const { name, stream, info } = part;
  stream.on("error", () => {}); // a body cut mid-file: busboy reports it as its own error
  const filename = info.filename;
  if (failed() || name !== "files" || filename === undefined) {
    stream.resume(); // not recorded: just read through it
    if (failed()) return;
    if (!name) fail(new BadBodyError("Multipart part without a name"));
    // File parts under another name are ignored, like the real service does.
    else if (name !== "files") form.ignoredFileFields.push(name);
    // Otherwise no filename: `filename=""` (an empty file input, as browsers send it; busboy
    // reports no name for it) or an octet-stream part without one (busboy calls it a file).
    return;
  }
  const index = tally.count++;
  const hash = createHash("sha256");
  let size = 0;
  stream.on("data", (chunk: Buffer) => {
    size += chunk.length;
    tally.total += chunk.length;
    if (size <= limits.maxFileBytes) hash.update(chunk);
  });
  stream.on("end", () => {
    if (failed()) return;
    form.files.push({
      name: filename,
      contentType: info.mimeType,
      size,
      sha256: hash.digest("hex"),
    });
    form.issues.push(...fileIssues(index, filename, size, limits));
  });
}
