/**
 * The app's spans through OpenTelemetry's API alone (no-ops without the SDK of sdk.ts). They carry
 * ids, methods, statuses and addresses: never a prompt, an answer, a token or a key.
 */
import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  defaultTextMapGetter,
  defaultTextMapSetter,
  isSpanContextValid,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  type SpanOptions,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
} from "@opentelemetry/semantic-conventions";

export { SpanKind, type Span, type Attributes };

const tracer = trace.getTracer("slack-task-bot");

/** Attribute names of the app's own (Slack's ids, the task service's run). */
export const ATTR = {
  team: "slack.team.id",
  channel: "slack.channel.id",
  payload: "slack.payload.type",
  event: "slack.event.type",
  command: "slack.command",
  action: "slack.action.id",
  callback: "slack.callback.id",
  retry: "slack.retry.num",
  endpoint: "task.endpoint",
  runId: "task.run.id",
  runStart: "task.run.start",
  runStatus: "task.run.status",
  /** OpenTelemetry's (still incubating) name for a URL's route with its ids left out. */
  urlTemplate: "url.template",
} as const;

/** The Slack workspace the work under way is for (Web API calls' spans read it). */
const TEAM = createContextKey("slack-task-bot.team");

/** A URL as `url.full` holds it: credentials `REDACTED`, as OpenTelemetry's HTTP conventions say. */
export function urlFull(url: string | URL): string {
  const parsed = new URL(url);
  if (parsed.username === "" && parsed.password === "") return parsed.href;
  parsed.username = "REDACTED";
  parsed.password = parsed.password === "" ? "" : "REDACTED";
  return parsed.href;
}

/** OpenTelemetry's HTTP client attributes of a request to `url`. */
export function httpClientAttributes(method: string, url: URL): Attributes {
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  return {
    [ATTR_HTTP_REQUEST_METHOD]: method,
    [ATTR_URL_FULL]: urlFull(url),
    [ATTR_SERVER_ADDRESS]: url.hostname,
    [ATTR_SERVER_PORT]: port,
  };
}

export const currentTeam = (): string | undefined => {
  const team = context.active().getValue(TEAM);
  return typeof team === "string" ? team : undefined;
};

/** Runs `fn` as work for `teamId` (the spans started in it say which workspace). */
export function withTeam<T>(teamId: string | undefined, fn: () => T): T {
  if (teamId === undefined) return fn();
  return context.with(context.active().setValue(TEAM, teamId), fn);
}

/** Runs `fn` in a child span, ended when `fn` settles; a failure sets `error.type` (below). */
export function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>) {
  return tracer.startActiveSpan(name, options, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      failed(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A span begun now in `parent` (the current context by default), for the caller to end. */
export function startSpan(name: string, options: SpanOptions, parent = context.active()) {
  const span = tracer.startSpan(name, options, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Marks a span as failed with `err`'s type (or `type`), never its message (it may quote a person). */
export function failed(span: Span, err: unknown, type = errorType(err)): void {
  if (!span.isRecording()) return;
  span.setAttribute(ATTR_ERROR_TYPE, type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

/** A Slack error's code (`channel_not_found`), an HTTP status, a service error's kind, its class. */
function errorType(err: unknown): string {
  const e = err as { data?: { error?: unknown }; status?: unknown; kind?: unknown } | null;
  if (typeof e?.data?.error === "string") return e.data.error;
  if (typeof e?.status === "number") return String(e.status);
  if (typeof e?.kind === "string") return e.kind;
  return err instanceof Error ? err.name : "error";
}

/** Adds the current trace's headers (W3C `traceparent` by default) to `headers`. */
export function withTraceHeaders(headers: Record<string, string>, at = context.active()) {
  propagation.inject(at, headers);
  return headers;
}

/** Binds `fn` to the current context: work queued now and run later stays in this trace. */
export const bindToCurrent = <F extends (...args: never[]) => unknown>(fn: F): F =>
  context.bind(context.active(), fn);

/** The current span's W3C `traceparent` (whatever the propagators), kept with a run's record. */
export function currentTraceparent(): string | undefined {
  const span = trace.getActiveSpan();
  if (span === undefined || !isSpanContextValid(span.spanContext())) return undefined;
  const carrier: Record<string, string> = {};
  W3C.inject(context.active(), carrier, defaultTextMapSetter);
  return carrier.traceparent;
}

const W3C = new W3CTraceContextPropagator();

/** Where a run's relay span goes: in (and linked to) the trace `traceparent` names, else here. */
export function continuing(traceparent: string | undefined): { parent: Context; links: Link[] } {
  if (traceparent === undefined) return { parent: context.active(), links: [] };
  const parent = W3C.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
  const stored = trace.getSpanContext(parent);
  return stored ? { parent, links: [{ context: stored }] } : continuing(undefined);
}

/** The current span (a Stop pressed in Slack, say) links to the trace `traceparent` names. */
export function linkToTrace(traceparent: string | undefined): void {
  const current = trace.getActiveSpan();
  if (traceparent === undefined || current === undefined || !current.isRecording()) return;
  const stored = continuing(traceparent).links[0];
  if (stored) current.addLink(stored);
}

/** Runs `fn` in the trace `traceparent` names (a run's stored one), or as it is without one. */
export function inTrace<T>(traceparent: string | undefined, fn: () => T): T {
  if (traceparent === undefined) return fn();
  return context.with(continuing(traceparent).parent, fn);
}

/** The current span's ids for log lines, named as OpenTelemetry's log correlation names them. */
export function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  // A new object each time: pino merges the line's own fields into it.
  if (span === undefined) return {};
  const ids = span.spanContext();
  if (!isSpanContextValid(ids)) return {};
  const flags = ids.traceFlags.toString(16).padStart(2, "0");
  return { trace_id: ids.traceId, span_id: ids.spanId, trace_flags: flags };
}
