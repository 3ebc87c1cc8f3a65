/**
 * A small streaming `multipart/form-data` parser (RFC 7578): parts are reported as they
 * arrive, so uploads are hashed and measured without being held in memory.
 */

export class MultipartError extends Error {
  override name = "MultipartError";
}

export interface PartHeaders {
  /** Form field name (`name` parameter of Content-Disposition). */
  name: string;
  /** Present for file parts; `filename*` (RFC 5987) wins over `filename`. */
  filename: string | undefined;
  contentType: string | undefined;
}

export interface MultipartHandlers {
  onPartStart(headers: PartHeaders): void;
  onPartData(data: Buffer): void;
  onPartEnd(): void;
}

/** The boundary of a multipart Content-Type header, or undefined when it is not multipart. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  const [type, ...rest] = contentType.split(";");
  if (type?.trim().toLowerCase() !== "multipart/form-data") return undefined;
  const params = parseParams(`;${rest.join(";")}`);
  const boundary = params.get("boundary");
  return boundary !== undefined && boundary.length > 0 && boundary.length <= 200
    ? boundary
    : undefined;
}

/** Parses `; key=value; key="quoted \" value"` parameter lists (keys lower-cased). */
export function parseParams(text: string): Map<string, string> {
  const params = new Map<string, string>();
  const re = /;\s*([^\s=;]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)/g;
  for (const m of text.matchAll(re)) {
    const key = (m[1] ?? "").toLowerCase();
    let value = (m[2] ?? "").trim();
    if (value.startsWith('"')) value = value.slice(1, -1).replace(/\\(.)/g, "$1");
    params.set(key, value);
  }
  return params;
}

function decodeExtValue(value: string): string | undefined {
  const m = /^([\w!#$%&+^`{}~-]*)'[^']*'(.*)$/.exec(value);
  if (m === null) return undefined;
  try {
    return decodeURIComponent(m[2] ?? "");
  } catch {
    return undefined;
  }
}

const CRLF = Buffer.from("\r\n");
const HEADER_END = Buffer.from("\r\n\r\n");
const MAX_HEADER_BYTES = 16 * 1024;

type State = "preamble" | "afterDelimiter" | "headers" | "body" | "done";

export class MultipartParser {
  #delimiter: Buffer;
  #handlers: MultipartHandlers;
  // The body is read as if it started with CRLF, so the first boundary matches the delimiter.
  #buf: Buffer = Buffer.from(CRLF);
  #state: State = "preamble";

  constructor(boundary: string, handlers: MultipartHandlers) {
    this.#delimiter = Buffer.from(`\r\n--${boundary}`, "latin1");
    this.#handlers = handlers;
  }

  get done(): boolean {
    return this.#state === "done";
  }

  write(data: Buffer): void {
    if (this.#state === "done") return; // epilogue
    this.#buf = this.#buf.length === 0 ? data : Buffer.concat([this.#buf, data]);
    for (;;) {
      if (!this.#step()) return;
    }
  }

  end(): void {
    if (this.#state !== "done") throw new MultipartError("Unexpected end of multipart body");
  }

  /** Advances the state machine; false when more input is needed. */
  #step(): boolean {
    const buf = this.#buf;
    const delim = this.#delimiter;
    switch (this.#state) {
      case "preamble": {
        const at = buf.indexOf(delim);
        if (at < 0) {
          this.#buf = buf.subarray(Math.max(0, buf.length - delim.length + 1));
          return false;
        }
        this.#buf = buf.subarray(at + delim.length);
        this.#state = "afterDelimiter";
        return true;
      }
      case "afterDelimiter": {
        if (buf.length < 2) return false;
        if (buf[0] === 0x2d && buf[1] === 0x2d) {
          this.#state = "done";
          this.#buf = Buffer.alloc(0);
          return false;
        }
        const eol = buf.indexOf(CRLF);
        if (eol < 0) {
          if (buf.length > 256) throw new MultipartError("Malformed multipart boundary line");
          return false;
        }
        for (let i = 0; i < eol; i++) {
          if (buf[i] !== 0x20 && buf[i] !== 0x09) {
            throw new MultipartError("Malformed multipart boundary line");
          }
        }
        this.#buf = buf.subarray(eol + 2);
        this.#state = "headers";
        return true;
      }
      case "headers": {
        if (buf.length >= 2 && buf[0] === 0x0d && buf[1] === 0x0a) {
          throw new MultipartError("Multipart part without headers");
        }
        const end = buf.indexOf(HEADER_END);
        if (end < 0) {
          if (buf.length > MAX_HEADER_BYTES)
            throw new MultipartError("Multipart headers too large");
          return false;
        }
        this.#handlers.onPartStart(parseHeaders(buf.subarray(0, end).toString("utf8")));
        this.#buf = buf.subarray(end + 4);
        this.#state = "body";
        return true;
      }
      case "body": {
        const at = buf.indexOf(delim);
        if (at >= 0) {
          if (at > 0) this.#handlers.onPartData(buf.subarray(0, at));
          this.#handlers.onPartEnd();
          this.#buf = buf.subarray(at + delim.length);
          this.#state = "afterDelimiter";
          return true;
        }
        // Keep what could be the start of a delimiter split across reads.
        const safe = buf.length - delim.length + 1;
        if (safe > 0) {
          this.#handlers.onPartData(buf.subarray(0, safe));
          this.#buf = buf.subarray(safe);
        }
        return false;
      }
      case "done":
        return false;
    }
  }
}

function parseHeaders(block: string): PartHeaders {
  let disposition: string | undefined;
  let contentType: string | undefined;
  for (const line of block.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) throw new MultipartError("Malformed multipart header");
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === "content-disposition") disposition = value;
    else if (key === "content-type") contentType = value;
  }
  if (disposition === undefined)
    throw new MultipartError("Multipart part without Content-Disposition");
  const semi = disposition.indexOf(";");
  const kind = (semi < 0 ? disposition : disposition.slice(0, semi)).trim().toLowerCase();
  if (kind !== "form-data") throw new MultipartError("Multipart part is not form-data");
  const params = parseParams(semi < 0 ? "" : disposition.slice(semi));
  const name = params.get("name");
  if (name === undefined) throw new MultipartError("Multipart part without a name");
  const extended = params.get("filename*");
  const filename =
    (extended === undefined ? undefined : decodeExtValue(extended)) ?? params.get("filename");
  return { name, filename, contentType };
}
