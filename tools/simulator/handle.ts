/** The simulator's request handler: the request log, auth, injected faults, then the route. */
import { type IncomingMessage, type ServerResponse } from "node:http";
import { type RequestRecord } from "./engine.ts";
import { errorAnswer } from "./faults.ts";
import { queryRecord } from "./validation.ts";
import type { SimContext } from "./context.ts";
import { baseUrl, givenKey, hold, keyIndexOf, lookup, takeFault } from "./context.ts";
import { create, followUp } from "./routes/create.ts";
import { result } from "./routes/result.ts";
import { history } from "./routes/history.ts";
import { stop } from "./routes/stop.ts";
import { download, files } from "./routes/files.ts";
import {
  gone,
  sendDetail,
  sendError,
  sendJson,
  DOWNLOAD_PREFIX,
  SECRET_QUERY,
  matchRoute,
  type Route,
} from "./http.ts";
import type { FaultEndpoint } from "./options.ts";

type EndpointRoute = Extract<Route, { kind: "endpoint" }>;

export async function handle(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? "/", "http://simulator.invalid");
  const method = req.method ?? "GET";
  logRequest(ctx, req, res, url);
  if (ctx.closing) {
    sendDetail(res, 503, "Simulator shutting down");
    return;
  }
  if (method === "GET" && url.pathname === "/health") {
    sendJson(res, 200, { status: "ok" });
    return;
  }
  const isDownload = url.pathname.startsWith(DOWNLOAD_PREFIX);
  const route = isDownload ? undefined : matchRoute(method, url.pathname);
  if (route?.kind === "notFound") {
    sendDetail(res, 404, "Not Found");
    return;
  }
  if (route?.kind === "methodNotAllowed") {
    sendDetail(res, 405, "Method Not Allowed", { Allow: route.allow });
    return;
  }
  if (route !== undefined && !authorized(ctx, req, res)) return;
  if (await injectFault(ctx, req, res, url, route)) return;
  if (route === undefined) {
    if (method !== "GET") sendDetail(res, 405, "Method Not Allowed", { Allow: "GET" });
    else download(ctx, res, url.pathname);
    return;
  }
  await answer(ctx, req, res, url, route);
}

/**
 * Records the request (secrets in the query redacted, the API key only by its position in the
 * accepted list) and logs it once it is answered.
 */
function logRequest(ctx: SimContext, req: IncomingMessage, res: ServerResponse, url: URL): void {
  const method = req.method ?? "GET";
  const query = queryRecord(url.searchParams);
  for (const key of Object.keys(query)) if (SECRET_QUERY.test(key)) query[key] = "[redacted]";
  const record: RequestRecord = { method, path: url.pathname, query, at: Date.now() };
  const keyIndex = keyIndexOf(ctx, req);
  if (keyIndex !== undefined) record.keyIndex = keyIndex;
  const traceparent = req.headers.traceparent;
  if (typeof traceparent === "string") record.traceparent = traceparent;
  if (ctx.o.maxRequestLog > 0) {
    ctx.requests.push(record);
    if (ctx.requests.length > ctx.o.maxRequestLog + 1000)
      ctx.requests.splice(0, ctx.requests.length - ctx.o.maxRequestLog);
  }
  res.on("close", () => {
    record.status = res.statusCode;
    record.durationMs = Date.now() - record.at;
    ctx.log(`${method} ${url.pathname}${url.search} ${res.statusCode} ${record.durationMs}ms`);
    ctx.events.emit("request", record);
  });
}

/** Whether the request carries a known API key; answers 401 when it does not. */
function authorized(ctx: SimContext, req: IncomingMessage, res: ServerResponse): boolean {
  const given = givenKey(req);
  if (given === undefined || given === "") {
    sendDetail(res, 401, "Missing API key: send it in the X-API-Key header");
    return false;
  }
  if (!ctx.apiKeys.has(given)) {
    sendDetail(res, 401, "Invalid API key");
    return false;
  }
  return true;
}

/** Applies the first injected fault that matches; true when it answered (or dropped) the request. */
async function injectFault(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  route: EndpointRoute | undefined,
): Promise<boolean> {
  const endpoint: FaultEndpoint =
    route === undefined
      ? "download"
      : route.endpoint === "result" &&
          /^(true|1|yes|on)$/i.test(url.searchParams.get("realtime") ?? "")
        ? "stream"
        : route.endpoint;
  const fault =
    ctx.faults.length === 0 ? undefined : takeFault(ctx, endpoint, route?.threadId ?? "");
  if (fault === undefined) return false;
  if (fault.delayMs !== undefined) await hold(ctx, fault.delayMs, res);
  if (gone(res) || ctx.closing) return true;
  if (fault.reset === true) {
    req.socket.destroy();
    return true;
  }
  if (fault.status !== undefined) {
    const refusal = errorAnswer(fault.status, fault.detail);
    sendError(res, { ...refusal, headers: { ...refusal.headers, ...fault.headers } });
    return true;
  }
  return false;
}

/** The endpoint's own answer. */
async function answer(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  route: EndpointRoute,
): Promise<void> {
  if (route.endpoint === "create") {
    await create(ctx, req, res);
    return;
  }
  const thread = lookup(ctx, res, url, route.threadId);
  if (thread === undefined) return;
  switch (route.endpoint) {
    case "result":
      await result(ctx, res, url, thread, baseUrl(ctx, req));
      return;
    case "continue":
      await followUp(ctx, req, res, thread);
      return;
    case "history":
      history(ctx, res, url, thread, baseUrl(ctx, req));
      return;
    case "stop":
      stop(ctx, res, thread);
      return;
    case "files":
      files(ctx, res, url, thread);
      return;
  }
}
