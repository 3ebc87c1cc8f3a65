/**
 * One generated file's content, read alone and within a budget: page `position + 1` of Get
 * Task Results with `page_size=1` and `include_file_content=true`, parsed as it arrives
 * (stream-json's tokenizer) so the file's content goes straight into one buffer of at most
 * `maxBytes`. The answer's text on the same page, and the other files of a server that ignores
 * paging, are skipped as they pass, never held.
 */
import { pipeline, Readable } from "node:stream";
import { parser } from "stream-json";
import { tooLarge } from "./answers.ts";
import { TaskServiceError } from "./errors.ts";
import type { ServiceHttp } from "./http.ts";

/** Which file of a run's final result: its place in the result's files, and its id. */
export interface ResultFileRef {
  readonly position: number;
  readonly fileId: string;
}

export interface ReadFileOptions {
  readonly signal?: AbortSignal;
  /** The most bytes the file's content may take as the service sends it (base64 or text). */
  readonly maxBytes: number;
}

/**
 * How many bytes a file of `size` bytes takes as the service sends it: base64 (the encoding
 * of binary files) is the larger, 4 characters for every 3 bytes.
 */
export const sentSize = (size: number): number => Math.ceil(size / 3) * 4;

/** Short fields of a file entry (its id, its encoding) are kept up to this many characters. */
const FIELD_CHARS = 4096;

/** Reads one file's bytes: undefined when the result has no content for it. */
export async function readResultFile(
  http: ServiceHttp,
  ref: { readonly threadId: string; readonly projectId: string },
  file: ResultFileRef,
  options: ReadFileOptions,
): Promise<Buffer | undefined> {
  const what = "fetching a generated file";
  const target = http.url(http.threadPath(ref, "/response"), {
    project_id: ref.projectId,
    timeout: 0,
    include_file_content: true,
    page: file.position + 1,
    page_size: 1,
  });
  return http.read(options.signal, async () => {
    const res = await http.open(what, target, options.signal, {
      accept: "application/json",
      headersTimeoutMs: http.requestTimeoutMs,
      bodyTimeoutMs: http.requestTimeoutMs,
    });
    // The page also carries the answer's text: it passes through, within the usual cap.
    const maxRead = http.maxAnswerBytes + options.maxBytes;
    try {
      return await findFile(res.body, file.fileId, options.maxBytes, maxRead, what);
    } finally {
      if (!res.body.destroyed) {
        res.body.on("error", () => undefined);
        res.body.destroy();
      }
    }
  });
}

/** A file entry of the page as it is read. */
interface Entry {
  id: string;
  encoding: string;
  inline: boolean | undefined;
  /** Bytes of its content written to the buffer; -1 once it did not fit (its content is skipped). */
  written: number;
  hasContent: boolean;
}

type Field = "file_id" | "encoding" | "content" | undefined;

/**
 * Walks the page's tokens: `files[*]` entries are followed, the content of each written into
 * one buffer (the matching entry's stays, another's is overwritten by the next).
 */
async function findFile(
  body: Readable,
  fileId: string,
  maxBytes: number,
  maxRead: number,
  what: string,
): Promise<Buffer | undefined> {
  let buffer: Buffer | undefined;
  let read = 0;
  const counted = async function* (source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      read += chunk.length;
      if (read > maxRead) throw tooLarge(what, maxRead);
      yield chunk;
    }
  };
  // Keys and numbers are short and come whole; strings come in pieces, never whole.
  const tokens = parser.asStream({
    packKeys: true,
    streamKeys: false,
    packStrings: false,
    streamStrings: true,
    packNumbers: true,
    streamNumbers: false,
  });
  // A failure anywhere (the cap, the connection, bad JSON) ends the walk below with it.
  pipeline(Readable.from(counted(body)), tokens, () => undefined);

  // Where the walk is: `depth` counts open containers; files' entries are at depth 3
  // (the page, its `files` array, the entry).
  let depth = 0;
  let key: string | undefined;
  let inFiles = false;
  let entry: Entry | undefined;
  let field: Field;
  let small = "";
  try {
    for await (const token of tokens as AsyncIterable<{ name: string; value?: unknown }>) {
      switch (token.name) {
        case "startObject":
        case "startArray":
          depth++;
          if (depth === 2 && key === "files" && token.name === "startArray") inFiles = true;
          else if (inFiles && depth === 3 && token.name === "startObject") {
            entry = { id: "", encoding: "", inline: undefined, written: 0, hasContent: false };
          }
          key = undefined;
          break;
        case "endObject":
        case "endArray":
          if (inFiles && depth === 3 && entry !== undefined) {
            if (entry.id === fileId) return finish(entry, buffer, maxBytes, what);
            entry = undefined;
          }
          if (inFiles && depth === 2) inFiles = false;
          depth--;
          break;
        case "keyValue":
          key = String(token.value);
          field = entry !== undefined && depth === 3 && isField(key) ? (key as Field) : undefined;
          break;
        case "startString":
          small = "";
          if (field === "content" && entry !== undefined) {
            entry.hasContent = true;
            entry.written = 0;
            buffer ??= Buffer.allocUnsafe(maxBytes);
          }
          break;
        case "stringChunk": {
          const text = String(token.value);
          if (field === "content" && entry !== undefined && buffer !== undefined) {
            entry.written = write(buffer, entry.written, text);
          } else if (field !== undefined && small.length < FIELD_CHARS) {
            small += text.slice(0, FIELD_CHARS - small.length);
          }
          break;
        }
        case "endString":
          if (entry !== undefined && field === "file_id") entry.id = small;
          if (entry !== undefined && field === "encoding") entry.encoding = small.toLowerCase();
          field = undefined;
          key = undefined;
          break;
        case "trueValue":
        case "falseValue":
          if (entry !== undefined && depth === 3 && key === "included_inline") {
            entry.inline = token.name === "trueValue";
          }
          key = undefined;
          field = undefined;
          break;
        default:
          key = undefined;
          field = undefined;
      }
    }
  } catch (err) {
    if (err instanceof TaskServiceError) throw err;
    throw new TaskServiceError({
      kind: "protocol",
      message: `Task service sent an unreadable answer to ${what}.`,
      cause: err,
    });
  } finally {
    tokens.destroy();
  }
  return undefined; // not on the page
}

const isField = (key: string): boolean =>
  key === "file_id" || key === "encoding" || key === "content";

/** Writes a piece of content at `at`; -1 once it does not fit (then nothing more is written). */
function write(buffer: Buffer, at: number, text: string): number {
  if (at < 0) return at;
  const size = Buffer.byteLength(text, "utf8");
  if (at + size > buffer.length) return -1;
  return at + buffer.write(text, at, "utf8");
}

/** The matching entry's bytes: decoded from base64 where they were written. */
function finish(
  entry: Entry,
  buffer: Buffer | undefined,
  maxBytes: number,
  what: string,
): Buffer | undefined {
  if (entry.written < 0) throw tooLarge(what, maxBytes);
  if (!entry.hasContent || entry.inline === false || buffer === undefined) return undefined;
  if (entry.encoding === "base64")
    return buffer.subarray(0, decodeBase64InPlace(buffer, entry.written));
  return buffer.subarray(0, entry.written);
}

/** Base64 decoded a block at a time: whitespace, padding and other strays are skipped. */
const BLOCK = 64 * 1024;
const NOT_BASE64 = /[^A-Za-z0-9+/\-_]/g;

/**
 * Decodes the base64 text in `buffer[0, length)` into the same buffer, from its start, and
 * returns the decoded length. Decoding never overtakes reading (3 bytes out for 4 characters
 * in), so no second buffer is needed.
 */
export function decodeBase64InPlace(buffer: Buffer, length: number): number {
  let written = 0;
  let carry = "";
  for (let at = 0; at < length; at += BLOCK) {
    const text =
      carry + buffer.toString("latin1", at, Math.min(length, at + BLOCK)).replace(NOT_BASE64, "");
    const whole = text.length - (text.length % 4);
    written += buffer.write(text.slice(0, whole), written, "base64");
    carry = text.slice(whole);
  }
  if (carry !== "") written += buffer.write(carry, written, "base64");
  return written;
}
