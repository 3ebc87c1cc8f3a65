/** HTTP plumbing of the simulator: its routes' paths, and JSON and `{detail}` answers. */
import type { ServerResponse } from "node:http";
import type { ErrorAnswer } from "./faults.ts";
import type { ValidationIssue } from "./validation.ts";
import type { FaultEndpoint } from "./options.ts";

export const PREFIX = "/api/v1/public";
export const DOWNLOAD_PREFIX = "/sim-storage/download/";
export const SECRET_QUERY = /key|token|secret|auth|password/i;

export type Endpoint = Exclude<FaultEndpoint, "any" | "stream">;

export type Route =
  | { kind: "endpoint"; endpoint: Endpoint; threadId: string }
  | { kind: "notFound" }
  | { kind: "methodNotAllowed"; allow: string };

export function matchRoute(method: string, pathname: string): Route {
  if (!pathname.startsWith(`${PREFIX}/`)) return { kind: "notFound" };
  const parts = pathname.slice(PREFIX.length + 1).split("/");
  const check = (allowed: Record<string, Endpoint>, threadId: string): Route => {
    const endpoint = allowed[method];
    if (endpoint === undefined)
      return { kind: "methodNotAllowed", allow: Object.keys(allowed).join(", ") };
    return { kind: "endpoint", endpoint, threadId };
  };
  if (parts.length === 1 && parts[0] === "quick-action") return check({ POST: "create" }, "");
  if (parts[0] !== "threads" || parts.length < 3 || parts[1] === "") return { kind: "notFound" };
  let threadId: string;
  try {
    threadId = decodeURIComponent(parts[1] ?? "");
  } catch {
    return { kind: "notFound" };
  }
  const rest = parts.slice(2).join("/");
  if (rest === "response") return check({ GET: "result", POST: "continue" }, threadId);
  if (rest === "history") return check({ GET: "history" }, threadId);
  if (rest === "agent/stop") return check({ POST: "stop" }, threadId);
  if (rest === "files") return check({ GET: "files" }, threadId);
  return { kind: "notFound" };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}

export function sendDetail(
  res: ServerResponse,
  status: number,
  detail: string | ValidationIssue[],
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { detail }, headers);
}

export function sendError(res: ServerResponse, answer: ErrorAnswer): void {
  sendDetail(res, answer.status, answer.detail, answer.headers);
}

/** True when the client went away before its answer. */
export function gone(res: ServerResponse): boolean {
  return res.destroyed || res.socket === null || res.socket.destroyed;
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export function paginate<T>(items: readonly T[], page: number, pageSize: number) {
  const totalPages = Math.ceil(items.length / pageSize);
  return {
    items: items.slice((page - 1) * pageSize, page * pageSize),
    pagination: {
      current_page: page,
      page_size: pageSize,
      total_items: items.length,
      total_pages: totalPages,
      has_next: page < totalPages,
      has_prev: page > 1,
    },
  };
}
