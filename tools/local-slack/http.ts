// HTTP plumbing: reading bodies, answering JSON, and decoding a Web API request's arguments and token
// the way Slack accepts them (form or JSON body, query string, Bearer header or `token` argument).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Problem } from "./errors.ts";
import type { SlackArgs } from "./types.ts";
import { isRecord } from "./util.ts";

/** Form fields WebClient sends as JSON strings; decoded into `RecordedCall.args`. */
const JSON_FIELDS = new Set([
  "attachments",
  "blocks",
  "chunks",
  "file_ids",
  "files",
  "loading_messages",
  "metadata",
  "outputs",
  "prompts",
  "unfurls",
  "user_auth_blocks",
  "view",
]);

export interface ApiRequest {
  args: SlackArgs;
  token: string | undefined;
  /** A body Slack could not parse; answered after auth, faults, rate tiers and scopes. */
  problem?: Problem;
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  }
  return Buffer.concat(chunks);
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(payload),
    ...headers,
  });
  res.end(payload);
}

function parseJsonBody(text: string, args: SlackArgs): Problem | undefined {
  if (text.trim() === "") return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed)) Object.assign(args, parsed);
    else return { error: "invalid_json", message: "body is not a JSON object" };
  } catch {
    return { error: "invalid_json", message: "body is not valid JSON" };
  }
  return undefined;
}

function parseFormBody(text: string, args: SlackArgs): Problem | undefined {
  let problem: Problem | undefined;
  for (const [k, v] of new URLSearchParams(text)) {
    if (!JSON_FIELDS.has(k)) {
      args[k] = v;
      continue;
    }
    try {
      args[k] = JSON.parse(v);
    } catch {
      args[k] = v;
      problem ??= {
        error: k === "blocks" ? "invalid_blocks_format" : "invalid_arguments",
        message: `${k} is not valid JSON`,
        pointer: `/${k}`,
      };
    }
  }
  return problem;
}

export function parseApiRequest(req: IncomingMessage, body: Buffer, url: URL): ApiRequest {
  const contentType = (req.headers["content-type"] ?? "").toLowerCase();
  const args: SlackArgs = {};
  for (const [k, v] of url.searchParams) args[k] = v;
  const text = body.toString("utf8");
  let problem: Problem | undefined;
  if (contentType.startsWith("application/json")) problem = parseJsonBody(text, args);
  else if (text !== "") problem = parseFormBody(text, args);
  const auth = req.headers.authorization;
  let token = auth?.startsWith("Bearer ") ? auth.slice("Bearer ".length) : undefined;
  // oauth.v2.access: the client id and secret in HTTP Basic, as Slack prefers, or as arguments.
  if (auth?.startsWith("Basic ")) {
    const [id, ...rest] = Buffer.from(auth.slice("Basic ".length), "base64").toString().split(":");
    args.client_id ??= id;
    args.client_secret ??= rest.join(":");
  }
  if (token === undefined && typeof args.token === "string") token = args.token;
  delete args.token;
  return problem ? { args, token, problem } : { args, token };
}
