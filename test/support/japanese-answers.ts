/**
 * A hop between the app and the task service simulator that gives answers in Japanese: every
 * ASCII letter of an answer becomes a kana, in its stream's content events and in the result's
 * `response`. An answer keeps its length in characters and its Markdown (headings, lists,
 * tables, code fences: only letters change), and takes about three times the UTF-8 bytes, as
 * Japanese text does. Everything else (other requests, files, status events) passes as it is,
 * streamed as it comes. The simulator writes English answers only; this is how a story of
 * Slack's byte ceilings gets a Japanese one.
 *
 * Written here rather than with a proxy package: the hop has to rewrite server-sent events
 * line by line as they stream, which none of them does.
 */
import { once } from "node:events";
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";

const HIRAGANA = "あいうえおかきくけこさしすせそたちつてとなにぬねのは";
const KATAKANA = "アイウエオカキクケコサシスセソタチツテトナニヌネノハ";

/** The answer as the hop gives it: each ASCII letter a kana (one UTF-16 unit, 3 UTF-8 bytes). */
export function inJapanese(text: string): string {
  return text.replace(/[a-zA-Z]/g, (c) => {
    const code = c.charCodeAt(0);
    return code >= 97 ? (HIRAGANA[code - 97] ?? c) : (KATAKANA[code - 65] ?? c);
  });
}

/** One server-sent event line with a content event's text in Japanese; others as they are. */
function eventLine(line: string): string {
  if (!line.startsWith("data:")) return line;
  try {
    const event: unknown = JSON.parse(line.slice(5));
    if (typeof event !== "object" || event === null) return line;
    const e = event as Record<string, unknown>;
    if (e.type !== "content" || typeof e.content !== "string") return line;
    return `data: ${JSON.stringify({ ...e, content: inJapanese(e.content) })}`;
  } catch {
    return line;
  }
}

/** A task result with its response's text in Japanese; any other body as it is. */
function resultBody(body: Buffer): Buffer {
  try {
    const result: unknown = JSON.parse(body.toString("utf8"));
    const response = (result as { response?: { content?: unknown } } | null)?.response;
    if (typeof response?.content !== "string") return body;
    response.content = inJapanese(response.content);
    return Buffer.from(JSON.stringify(result));
  } catch {
    return body;
  }
}

function withoutLength(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { "content-length": _length, "transfer-encoding": _encoding, ...rest } = headers;
  return rest;
}

/** Streams server-sent events through, a whole line at a time (a line is whole UTF-8). */
function relayEvents(upstream: IncomingMessage, res: ServerResponse): void {
  let held = Buffer.alloc(0);
  upstream.on("data", (chunk: Buffer) => {
    held = Buffer.concat([held, chunk]);
    const end = held.lastIndexOf(10);
    if (end < 0) return;
    const lines = held.subarray(0, end).toString("utf8").split("\n");
    held = held.subarray(end + 1);
    res.write(`${lines.map(eventLine).join("\n")}\n`);
  });
  upstream.on("end", () => res.end(held.length > 0 ? eventLine(held.toString("utf8")) : ""));
}

function relay(target: URL, req: IncomingMessage, res: ServerResponse): void {
  const upstream = request(
    new URL(req.url ?? "/", target),
    { method: req.method, headers: { ...req.headers, host: target.host } },
    (answer) => {
      const type = String(answer.headers["content-type"] ?? "");
      if (type.startsWith("text/event-stream")) {
        res.writeHead(answer.statusCode ?? 502, withoutLength(answer.headers));
        relayEvents(answer, res);
      } else if (type.startsWith("application/json")) {
        const parts: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => parts.push(chunk));
        answer.on("end", () => {
          const body = resultBody(Buffer.concat(parts));
          res.writeHead(answer.statusCode ?? 502, {
            ...withoutLength(answer.headers),
            "content-length": String(body.length),
          });
          res.end(body);
        });
      } else {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      }
      answer.on("error", () => res.destroy());
    },
  );
  upstream.on("error", () => res.destroy());
  // The app hung up (a stream it no longer follows): so does the hop.
  res.on("close", () => upstream.destroy());
  req.pipe(upstream);
}

export interface JapaneseAnswers {
  /** The service's base URL for the app (`TASK_API_URL`). */
  readonly url: string;
  close(): Promise<void>;
}

/** Starts the hop in front of the service at `target` (the simulator's URL). */
export async function startJapaneseAnswers(target: string): Promise<JapaneseAnswers> {
  const base = new URL(target);
  const server = createServer((req, res) => relay(base, req, res));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}
