/**
 * A streaming multipart/form-data body, written here because FormData takes only Blobs (a Slack
 * download would be buffered whole): file bytes read as undici sends them, Content-Length known.
 */
import { randomBytes } from "node:crypto";
import { lookup } from "mime-types";

export interface UploadFile {
  readonly name: string;
  /** Exact size in bytes; the upload fails if the source yields a different number. */
  readonly size: number;
  readonly contentType?: string;
  /** Called once, when the body is sent. */
  open(): AsyncIterable<Uint8Array>;
}

/** RFC 9110's media type (tokens, `; name=value` parameters): no CR, LF or control character. */
const MEDIA_TYPE =
  /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:[ \t]*;[ \t]*[!#$%&'*+.^_`|~0-9A-Za-z-]+=(?:[!#$%&'*+.^_`|~0-9A-Za-z-]+|"[ !#-[\]-~]*"))*$/;

/**
 * A file part's Content-Type: the one given (Slack's `mimetype`) when well-formed, else its name's
 * (`mime-types`). Slack's is hostile: a CR or LF would end the part's headers and inject parts.
 */
export function partContentType(given: string | undefined, name: string): string {
  return given !== undefined && given.length <= 255 && MEDIA_TYPE.test(given)
    ? given
    : lookup(name.toLowerCase()) || "application/octet-stream";
}

export function fileFromBytes(name: string, bytes: Uint8Array, contentType?: string): UploadFile {
  return {
    name,
    size: bytes.byteLength,
    ...(contentType ? { contentType } : {}),
    async *open() {
      yield bytes;
    },
  };
}

/** Quote a name for Content-Disposition the way browsers do (HTML's form encoding). */
const quote = (s: string) => s.replace(/"/g, "%22").replace(/\r/g, "%0D").replace(/\n/g, "%0A");

export interface MultipartBody {
  readonly contentType: string;
  readonly length: number;
  readonly body: AsyncIterable<Uint8Array>;
  /** The whole body when it has no files (it is small then): sent in one write. */
  readonly bytes?: Buffer;
}

export function encodeMultipart(
  /** Fields left undefined are not sent. */
  fields: ReadonlyArray<readonly [string, string | boolean | undefined]>,
  /** Each sent as a `files` part, as the contract names them. */
  files: readonly UploadFile[],
): MultipartBody {
  const boundary = `----taskbot${randomBytes(12).toString("hex")}`;
  const enc = new TextEncoder();
  const CRLF = enc.encode("\r\n");
  const parts: Array<{ head: Uint8Array; text?: Uint8Array; file?: UploadFile }> = [];
  for (const [name, value] of fields) {
    if (value === undefined) continue;
    parts.push({
      head: enc.encode(
        `--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n`,
      ),
      text: enc.encode(String(value)),
    });
  }
  for (const file of files) {
    parts.push({
      head: enc.encode(
        `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${quote(file.name)}"\r\nContent-Type: ${partContentType(file.contentType, file.name)}\r\n\r\n`,
      ),
      file,
    });
  }
  const closing = enc.encode(`--${boundary}--\r\n`);
  const length =
    parts.reduce(
      (n, p) => n + p.head.byteLength + (p.text?.byteLength ?? p.file?.size ?? 0) + CRLF.byteLength,
      0,
    ) + closing.byteLength;

  // What is in memory goes out as one buffer per run of parts; only file bytes are streamed.
  async function* body(): AsyncGenerator<Uint8Array> {
    let held: Uint8Array[] = [];
    const flush = () => {
      const out = Buffer.concat(held);
      held = [];
      return out;
    };
    for (const part of parts) {
      held.push(part.head);
      if (part.text) held.push(part.text);
      if (part.file) {
        yield flush();
        let sent = 0;
        for await (const chunk of part.file.open()) {
          sent += chunk.byteLength;
          if (sent > part.file.size) break;
          yield chunk;
        }
        if (sent !== part.file.size) {
          throw new Error(
            `"${part.file.name}" changed while uploading (expected ${part.file.size} bytes, read ${sent})`,
          );
        }
      }
      held.push(CRLF);
    }
    held.push(closing);
    yield flush();
  }
  const contentType = `multipart/form-data; boundary=${boundary}`;
  if (files.length === 0) {
    const bytes = Buffer.concat([
      ...parts.flatMap((p) => (p.text ? [p.head, p.text, CRLF] : [p.head, CRLF])),
      closing,
    ]);
    return { contentType, length, body: body(), bytes };
  }
  return { contentType, length, body: body() };
}
