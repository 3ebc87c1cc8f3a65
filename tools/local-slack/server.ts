// The HTTP router: /api/<method> (the Web API), /upload/v1/<file> (external upload URLs),
// /response-url/<id> (interaction response_urls), /files-pri/… (files.slack.com downloads) and
// /oauth/v2/authorize (Slack's consent screen in an OAuth install).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ApiOutcome } from "./dispatch.ts";
import type { ApiRequest } from "./http.ts";
import { parseApiRequest, readBody, sendJson } from "./http.ts";
import type { LocalOAuth } from "./oauth.ts";
import type { Workspace } from "./state.ts";
import type { Tenancy } from "./tenancy.ts";
import type { ResponseUrlPost } from "./types.ts";

/** What the routes need from the double: its state, the API dispatcher and the recorders. */
export interface RouteHost {
  readonly state: Workspace;
  readonly tenancy: Tenancy;
  readonly oauth: LocalOAuth;
  answerApi(method: string, request: ApiRequest): ApiOutcome;
  /** Records a call that arrived at `at` (in `calls`, and in `validationErrors` if it failed validation) and notifies waiters. */
  recordCall(
    method: string,
    request: Pick<ApiRequest, "args" | "token">,
    at: number,
    outcome: ApiOutcome,
  ): void;
  /** How many earlier POSTs to this response_url were accepted. */
  responseUrlUses(id: string): number;
  recordResponseUrl(post: ResponseUrlPost): void;
  /** Wakes the waiters (an install went through the consent screen). */
  notify(): void;
}

export async function route(
  host: RouteHost,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const at = Date.now();
  const url = new URL(req.url ?? "/", host.state.baseUrl);
  const body = await readBody(req);
  const path = url.pathname;
  const rest = (prefix: string): string => decodeURIComponent(path.slice(prefix.length));
  if (path.startsWith("/api/")) {
    const request = parseApiRequest(req, body, url);
    const method = rest("/api/");
    const outcome = host.answerApi(method, request);
    const headers: Record<string, string> =
      outcome.retryAfter === undefined ? {} : { "retry-after": String(outcome.retryAfter) };
    // Recorded in the same tick as the answer is sent: a waiter never sees an unanswered call.
    host.recordCall(method, request, at, outcome);
    sendJson(res, outcome.status, outcome.response, headers);
    return;
  }
  if (path.startsWith("/upload/v1/") && req.method === "POST") {
    await handleUpload(host, rest("/upload/v1/"), req, body, at, res);
    return;
  }
  if (path.startsWith("/response-url/") && req.method === "POST") {
    handleResponseUrl(host, rest("/response-url/"), req, body, at, res);
    return;
  }
  if (path.startsWith("/files-pri/") && req.method === "GET") {
    handleUserFileDownload(host, path, req, res);
    return;
  }
  if (path === "/oauth/v2/authorize" && req.method === "GET") {
    handleAuthorize(host, url, req, res);
    return;
  }
  res.writeHead(404, { "content-type": "text/plain" });
  res.end(`local-slack: no route for ${req.method ?? "?"} ${path}`);
}

/** The uploaded bytes: the body itself, or the first file part of a multipart/form-data body. */
async function uploadedBytes(body: Buffer, contentType: string): Promise<Buffer> {
  if (!contentType.toLowerCase().startsWith("multipart/form-data")) return body;
  // WebClient.filesUploadV2 posts `{ body: <Buffer> }` through its generic serializer, which turns a
  // Buffer into multipart/form-data with one part named "body" (filename "Untitled").
  const form = await new Response(new Uint8Array(body), {
    headers: { "content-type": contentType },
  }).formData();
  let part: string | File | undefined;
  for (const value of form.values()) {
    if (typeof value !== "string") {
      part = value;
      break;
    }
    part ??= value;
  }
  if (part === undefined) return Buffer.alloc(0);
  return typeof part === "string" ? Buffer.from(part) : Buffer.from(await part.arrayBuffer());
}

async function handleUpload(
  host: RouteHost,
  fileId: string,
  req: IncomingMessage,
  body: Buffer,
  at: number,
  res: ServerResponse,
): Promise<void> {
  const file = host.state.files.get(fileId);
  const contentType = req.headers["content-type"] ?? "application/octet-stream";
  let status = 200;
  let text: string;
  if (!file) {
    status = 404;
    text = "file_not_found";
  } else {
    const bytes = await uploadedBytes(body, contentType);
    file.bytes = bytes;
    file.uploaded = true;
    file.uploadContentType = contentType;
    text = `OK - ${bytes.length}`;
  }
  const args = {
    file_id: fileId,
    content_type: contentType,
    bytes: file?.bytes.length ?? body.length,
  };
  const response = status === 200 ? { ok: true } : { ok: false, error: text };
  res.writeHead(status, { "content-type": "text/plain" });
  host.recordCall("upload_url", { args, token: undefined }, at, { status, response });
  res.end(text);
}

function handleResponseUrl(
  host: RouteHost,
  id: string,
  req: IncomingMessage,
  body: Buffer,
  at: number,
  res: ServerResponse,
): void {
  const contentType = req.headers["content-type"] ?? "";
  const rawBody = body.toString("utf8");
  let parsed: unknown = rawBody;
  if (contentType.startsWith("application/json")) {
    try {
      parsed = JSON.parse(rawBody);
    } catch {
      parsed = rawBody;
    }
  } else if (contentType.startsWith("application/x-www-form-urlencoded")) {
    parsed = Object.fromEntries(new URLSearchParams(rawBody));
  }
  // Slack accepts up to 5 uses of a response_url.
  const status = host.responseUrlUses(id) >= 5 ? 404 : 200;
  const post: ResponseUrlPost = { id, body: parsed, rawBody, contentType, at, status };
  if (status === 200) sendJson(res, 200, { ok: true });
  else sendJson(res, 404, { ok: false, error: "used_url" });
  host.recordResponseUrl(post);
}

function handleUserFileDownload(
  host: RouteHost,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const match = /^\/files-pri\/[^/-]+-([^/]+)\//.exec(path);
  const file = match?.[1] ? host.state.userFiles.get(match[1]) : undefined;
  if (!file) {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("file_not_found");
    return;
  }
  const auth = req.headers.authorization;
  const caller = auth?.startsWith("Bearer ") ? host.tenancy.identify(auth.slice(7)) : undefined;
  if (caller === undefined || caller === "expired" || caller === "revoked") {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(
      "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to Slack</body></html>",
    );
    return;
  }
  res.writeHead(200, { "content-type": file.mimetype, "content-length": file.bytes.length });
  res.end(file.bytes);
}

/** Slack's consent screen, consenting at once: back to the app with a code, or an error page. */
function handleAuthorize(
  host: RouteHost,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const outcome = host.oauth.authorize(url, req.headers.cookie);
  if (outcome.status === 302) {
    res.writeHead(302, { location: outcome.location });
    res.end();
  } else {
    res.writeHead(400, { "content-type": "text/html; charset=utf-8" });
    res.end(
      `<!DOCTYPE html><html><body><h1>Something went wrong</h1><p>${outcome.error}</p></body></html>`,
    );
  }
  host.notify();
}
