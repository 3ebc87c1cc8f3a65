/**
 * What the playground's page server accepts: it runs on a developer's machine with a workspace
 * (and its files) anyone who reaches it can read and act in, so it answers only its own page.
 * - `Host` must name the loopback host and port it serves: a DNS-rebinding page (whose name now
 *   points at 127.0.0.1) sends its own host name and is refused.
 * - `Origin`, when the browser sends one, must be that same origin: another site's form or
 *   `fetch` (a "simple" cross-site POST needs no preflight) is refused.
 * - A POST must say `Content-Type: application/json` (no HTML form can send that cross-site
 *   without a CORS preflight, which this server never grants) and stay under a size cap.
 */
import type { IncomingMessage } from "node:http";
import { formatBytes } from "../../src/util/bytes.ts";

/** Host names that mean this machine's loopback interface, as a browser writes them. */
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

export interface Refusal {
  readonly status: 403 | 413 | 415;
  readonly text: string;
}

/** Why `req` is refused before anything is read or done, or undefined when it may go on. */
export function refuse(req: IncomingMessage, port: number): Refusal | undefined {
  const host = (req.headers.host ?? "").toLowerCase();
  const served = `http://127.0.0.1:${port}/`;
  if (!allowedHost(host, port)) {
    return { status: 403, text: `This playground answers only at ${served} (Host: ${host}).` };
  }
  const origin = req.headers.origin;
  if (origin !== undefined && origin.toLowerCase() !== `http://${host}`) {
    return { status: 403, text: `Requests from ${origin} are not accepted; open ${served}.` };
  }
  if (req.method === "POST" && !isJson(req.headers["content-type"])) {
    return {
      status: 415,
      text: "The playground takes JSON only (Content-Type: application/json).",
    };
  }
  return undefined;
}

function allowedHost(host: string, port: number): boolean {
  const at = host.lastIndexOf(":");
  if (at <= 0 || host.slice(at + 1) !== String(port)) return false;
  return LOOPBACK.has(host.slice(0, at));
}

const isJson = (type: string | undefined): boolean =>
  /^application\/json\s*(;|$)/i.test(type?.trim() ?? "");

/** A request body larger than the playground takes (answered 413). */
export class BodyTooLarge extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`The playground takes requests of up to ${formatBytes(limit)}.`);
    this.limit = limit;
  }
}

/** The body as text, refused (BodyTooLarge) as soon as it passes `limit` bytes. */
export async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) throw new BodyTooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new BodyTooLarge(limit);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
