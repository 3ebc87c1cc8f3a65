/**
 * One generated file's content, read alone within a budget: page `position + 1` of Get Task
 * Results (`page_size=1`, `include_file_content=true`), tokenized as it arrives (stream-json) so
 * the content goes straight into one buffer of at most `maxBytes`; the rest is skipped.
 */
import type { Readable } from "node:stream";
import { getManyValues, isMany, none } from "stream-chain";
import { jsonParser } from "stream-json/parser.js";
import { tooLarge } from "./responses.ts";
import { TaskServiceError } from "./errors.ts";
import type { ServiceHttp } from "./http.ts";

/** Which file of a run's final result: its place in the result's files, and its id. */
export interface ResultFileRef {
  readonly position: number;
  readonly fileId: string;
}

export interface ReadFileOptions {
  readonly signal?: AbortSignal;
  /** The most bytes the content may take as sent (base64 or text). */
  readonly maxBytes: number;
}

/** The bytes a file of `size` takes as sent: base64, 4 characters for 3 bytes, at most. */
export const sentSize = (size: number): number => Math.ceil(size / 3) * 4;

/**
 * Gives a file's memory back now, not when the collector gets to it (several of tens of MB may be
 * alive otherwise); the buffer is empty afterwards. Only for what `readResultFile` returned.
 */
export function freeFileBytes(bytes: Buffer): void {
  const memory = bytes.buffer;
  // The shared pool of small buffers is never given back: others live in it.
  if (memory instanceof ArrayBuffer && !memory.detached && memory.byteLength > Buffer.poolSize) {
    memory.transfer(0);
  }
}

/** The most of a key kept (the walk looks for short ones), and of a short field (id, encoding). */
const KEY_CHARS = 64;
const FIELD_CHARS = 4096;

export async function readResultFile(
  http: ServiceHttp,
  ref: { readonly threadId: string; readonly projectId: string },
  file: ResultFileRef,
  options: ReadFileOptions,
): Promise<Buffer | undefined> {
  const what = "fetching a generated file";
  const target = http.threadUrl(ref, "/response", {
    timeout: 0,
    include_file_content: true,
    page: file.position + 1,
    page_size: 1,
  });
  return http.retried(options.signal, async () => {
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

const FIELDS = ["file_id", "encoding", "content"] as const;
type Field = (typeof FIELDS)[number] | undefined;
const isField = (key: string): key is NonNullable<Field> => FIELDS.some((f) => f === key);

type Token = { readonly name: string; readonly value?: unknown };

/**
 * The page's tokens, one at a time (no stream queues them, so a long string's pieces die
 * young): each `files[*]` entry's content is written into one buffer, the matching one's stays.
 */
class PageWalk {
  /** The matching entry, once it ended. */
  found: Entry | undefined;
  buffer: Buffer | undefined;
  /** Whether the tokenizer is inside a file's content (a string) now. */
  inContent = false;
  readonly #fileId: string;
  readonly #maxBytes: number;
  /** Open containers: files' entries are at depth 3 (the page, its `files` array, the entry). */
  #depth = 0;
  #key: string | undefined;
  #inFiles = false;
  #entry: Entry | undefined;
  #field: Field;
  #small = "";
  #inKey = false;
  #keyText = "";

  constructor(fileId: string, maxBytes: number) {
    this.#fileId = fileId;
    this.#maxBytes = maxBytes;
  }

  /** Content bytes that are plain printable ASCII, written as the tokenizer would have. */
  raw(bytes: Buffer, from: number, to: number): void {
    const entry = this.#entry;
    if (this.found || entry === undefined || this.buffer === undefined || entry.written < 0) return;
    if (entry.written + (to - from) > this.buffer.length) entry.written = -1;
    else entry.written += bytes.copy(this.buffer, entry.written, from, to);
  }

  /** A piece of a key or of a string: kept where it counts (a content, a short field). */
  #piece(text: string): void {
    if (this.#inKey) {
      if (this.#keyText.length < KEY_CHARS) {
        this.#keyText += text.slice(0, KEY_CHARS - this.#keyText.length);
      }
    } else if (
      this.#field === "content" &&
      this.#entry !== undefined &&
      this.buffer !== undefined
    ) {
      this.#entry.written = write(this.buffer, this.#entry.written, text);
    } else if (this.#field !== undefined && this.#small.length < FIELD_CHARS) {
      this.#small += text.slice(0, FIELD_CHARS - this.#small.length);
    }
  }

  take(token: Token): void {
    if (this.found) return; // its content stays as it is in the buffer
    switch (token.name) {
      case "startObject":
      case "startArray":
        this.#depth++;
        if (this.#depth === 2 && this.#key === "files" && token.name === "startArray") {
          this.#inFiles = true;
        } else if (this.#inFiles && this.#depth === 3 && token.name === "startObject") {
          this.#entry = { id: "", encoding: "", inline: undefined, written: 0, hasContent: false };
        }
        this.#key = undefined;
        break;
      case "endObject":
      case "endArray":
        if (this.#inFiles && this.#depth === 3 && this.#entry !== undefined) {
          if (this.#entry.id === this.#fileId) this.found = this.#entry;
          this.#entry = undefined;
        }
        if (this.#inFiles && this.#depth === 2) this.#inFiles = false;
        this.#depth--;
        break;
      case "startKey":
        this.#inKey = true;
        this.#keyText = "";
        break;
      case "endKey": {
        const key = this.#keyText;
        this.#inKey = false;
        this.#key = key;
        this.#field =
          this.#entry !== undefined && this.#depth === 3 && isField(key) ? key : undefined;
        break;
      }
      case "startString":
        this.#small = "";
        if (this.#field === "content" && this.#entry !== undefined) {
          this.inContent = true;
          this.#entry.hasContent = true;
          this.#entry.written = 0;
          // Its own memory (never the shared pool of small buffers), so that it can be
          // given back at once (freeFileBytes); untouched pages take none.
          this.buffer ??= Buffer.from(new ArrayBuffer(this.#maxBytes));
        }
        break;
      case "stringChunk":
        this.#piece(String(token.value));
        break;
      case "endString":
        this.inContent = false;
        if (this.#entry !== undefined && this.#field === "file_id") this.#entry.id = this.#small;
        if (this.#entry !== undefined && this.#field === "encoding") {
          this.#entry.encoding = this.#small.toLowerCase();
        }
        this.#field = undefined;
        this.#key = undefined;
        break;
      case "trueValue":
      case "falseValue":
        if (this.#entry !== undefined && this.#depth === 3 && this.#key === "included_inline") {
          this.#entry.inline = token.name === "trueValue";
        }
        this.#key = undefined;
        this.#field = undefined;
        break;
      default:
        this.#key = undefined;
        this.#field = undefined;
    }
  }
}

/** Reads the page until its file's entry ended (or the page did); its bytes, if it has any. */
async function findFile(
  body: Readable,
  fileId: string,
  maxBytes: number,
  maxRead: number,
  what: string,
): Promise<Buffer | undefined> {
  // Keys, strings and numbers come in pieces (a hostile page makes them as long as it likes).
  // stream-chain's flushable function: text in, `none`, a token or `many` out; `none` flushes.
  const tokenize = jsonParser({ packValues: false, streamValues: true }) as unknown as (
    input: string | typeof none,
  ) => unknown;
  const walk = new PageWalk(fileId, maxBytes);
  const feed = (input: string | typeof none): void => {
    const out: unknown = tokenize(input);
    if (isMany(out)) for (const token of getManyValues(out)) walk.take(token as Token);
    else if (out !== none) walk.take(out as Token);
  };
  const decoder = new TextDecoder("utf-8");
  let read = 0;
  try {
    // Whether the decoder and tokenizer hold nothing back: then content bytes may skip them.
    let clean = false;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      read += chunk.length;
      if (read > maxRead) throw tooLarge(what, maxRead);
      let from = 0;
      if (walk.inContent && clean) {
        // The content's plain bytes (base64 is all plain) go straight into the buffer.
        from = plainUntil(chunk);
        walk.raw(chunk, 0, from);
      }
      if (from < chunk.length) {
        feed(decoder.decode(from === 0 ? chunk : chunk.subarray(from), { stream: true }));
        clean = endsClean(chunk);
      }
      // Leaving the loop closes the body: the rest of the page is not read.
      if (walk.found) return finish(walk, maxBytes, what);
    }
    feed(decoder.decode());
    feed(none);
  } catch (err) {
    if (err instanceof TaskServiceError) throw err;
    throw new TaskServiceError({
      kind: "protocol",
      message: `Task service sent an unreadable answer to ${what}.`,
      cause: err,
    });
  }
  return finish(walk, maxBytes, what);
}

const [QUOTE, BACKSLASH] = [0x22, 0x5c];

/** Where `chunk`'s plain bytes end: its first quote, backslash or byte not printable ASCII. */
function plainUntil(chunk: Buffer): number {
  for (let i = 0; i < chunk.length; i++) {
    const b = chunk[i] ?? 0;
    if (b < 0x20 || b >= 0x7f || b === QUOTE || b === BACKSLASH) return i;
  }
  return chunk.length;
}

/** Whether `chunk` ends where nothing is held back: an ASCII byte, no backslash near (an escape). */
function endsClean(chunk: Buffer): boolean {
  const last = chunk.at(-1) ?? 0;
  return last < 0x80 && chunk.lastIndexOf(BACKSLASH) < chunk.length - 6;
}

/** Writes a piece of content at `at`; -1 once it does not fit (then nothing more is written). */
function write(buffer: Buffer, at: number, text: string): number {
  if (at < 0) return at;
  const size = Buffer.byteLength(text, "utf8");
  if (at + size > buffer.length) return -1;
  return at + buffer.write(text, at, "utf8");
}

/** The matching entry's bytes: decoded from base64 where they were written. */
function finish(walk: PageWalk, maxBytes: number, what: string): Buffer | undefined {
  const { found: entry, buffer } = walk;
  if (entry === undefined) return undefined;
  if (entry.written < 0) throw tooLarge(what, maxBytes);
  if (!entry.hasContent || entry.inline === false || buffer === undefined) return undefined;
  const written =
    entry.encoding === "base64" ? decodeBase64InPlace(buffer, entry.written) : entry.written;
  return buffer.subarray(0, written);
}

const BLOCK = 64 * 1024;
const NOT_BASE64 = /[^A-Za-z0-9+/\-_]/g;

/**
 * Decodes `buffer[0, length)`'s base64 into itself a block at a time (3 bytes out for 4 in never
 * overtake), skipping whitespace, padding and other strays; the decoded length.
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
