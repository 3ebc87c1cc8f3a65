/**
 * The span of each Slack request (`slack /task`, `slack event app_mention`…) around Bolt's
 * `processEvent`, both receivers' one door: ids and kinds, never the text. In HTTP mode an HTTP
 * server span (`POST /slack/events`, continuing a proxy's `traceparent`) holds it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { context, propagation, trace } from "@opentelemetry/api";
import {
  type AnyMiddlewareArgs,
  type App,
  HTTPReceiver,
  type Middleware,
  type SocketModeReceiver,
} from "@slack/bolt";
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from "@opentelemetry/semantic-conventions";
import { ATTR, type Attributes, failed, inSpan, SpanKind, startSpan, withTeam } from "./spans.ts";

/** Wraps Bolt's requests (and, in HTTP mode, the POSTs to `path`) in spans: call it last. */
export function traceSlackRequests(
  app: App,
  receiver: HTTPReceiver | SocketModeReceiver,
  path: string,
): void {
  if (receiver instanceof HTTPReceiver) traceHttpRequests(receiver, path);
  const process = app.processEvent.bind(app);
  app.processEvent = (event) => {
    const { name, attributes } = describe(event.body);
    if (event.retryNum !== undefined) attributes[ATTR.retry] = event.retryNum;
    // Under the HTTP span in HTTP mode; in Socket Mode the request's first span.
    const kind = trace.getActiveSpan() ? SpanKind.INTERNAL : SpanKind.SERVER;
    return inSpan(name, { kind, attributes }, () => process(event));
  };
  app.use(authorisedTeam);
}

/** After Bolt's authorisation: the span says which workspace, and so does what runs under it. */
const authorisedTeam: Middleware<AnyMiddlewareArgs> = ({ context: bolt, next }) => {
  if (bolt.teamId !== undefined) trace.getActiveSpan()?.setAttribute(ATTR.team, bolt.teamId);
  return withTeam(bolt.teamId, next);
};

/** An HTTP server span for each POST to `path`. */
function traceHttpRequests(receiver: HTTPReceiver, path: string): void {
  const listener = receiver.requestListener;
  receiver.requestListener = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST" || (req.url ?? "").split("?")[0] !== path) return listener(req, res);
    const parent = propagation.extract(context.active(), req.headers);
    const attributes: Attributes = {
      [ATTR_HTTP_REQUEST_METHOD]: "POST",
      [ATTR_HTTP_ROUTE]: path,
      [ATTR_URL_PATH]: path,
      [ATTR_URL_SCHEME]: "encrypted" in req.socket ? "https" : "http",
    };
    const agent = req.headers["user-agent"];
    if (agent !== undefined) attributes[ATTR_USER_AGENT_ORIGINAL] = agent;
    const { span, context: ctx } = startSpan(
      `POST ${path}`,
      { kind: SpanKind.SERVER, attributes },
      parent,
    );
    res.once("close", () => {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
      if (res.statusCode >= 500) failed(span, undefined, String(res.statusCode));
      span.end();
    });
    context.with(ctx, () => listener(req, res));
  };
}

type Body = Record<string, unknown>;

const field = (o: unknown, key: string): unknown =>
  typeof o === "object" && o !== null ? (o as Body)[key] : undefined;

const text = (v: unknown): string | undefined =>
  typeof v === "string" && v !== "" ? v : undefined;

/** The span's name and attributes for a payload: ids and kinds only. */
function describe(body: Body): { name: string; attributes: Attributes } {
  const attributes: Attributes = {};
  const set = (key: string, value: string | undefined) => {
    if (value !== undefined) attributes[key] = value;
  };
  const event = field(body, "event");
  const command = text(body.command);
  const type = command ? "command" : (text(body.type) ?? "unknown");
  set(ATTR.payload, type);
  set(ATTR.team, text(body.team_id) ?? text(field(body.team, "id")));
  set(
    ATTR.channel,
    text(body.channel_id) ??
      text(field(body.channel, "id")) ??
      text(field(event, "channel")) ??
      text(field(body.container, "channel_id")),
  );
  set(ATTR.command, command);
  const eventType = text(field(event, "type"));
  set(ATTR.event, eventType);
  const actions = body.actions;
  set(ATTR.action, Array.isArray(actions) ? text(field(actions[0], "action_id")) : undefined);
  set(ATTR.callback, text(body.callback_id) ?? text(field(body.view, "callback_id")));
  const what = command ?? (eventType && type === "event_callback" ? `event ${eventType}` : type);
  return { name: `slack ${what}`, attributes };
}
