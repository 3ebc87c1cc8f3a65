/**
 * A span for every Slack Web API call (`chat.update`), retries included: every WebClient's
 * `apiCall` is wrapped while tracing is on. It holds the method, Slack's host, the workspace,
 * channel and Slack's error code; never the call's text, blocks or token.
 */
import { WebClient } from "@slack/web-api";
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
} from "@opentelemetry/semantic-conventions";
import { ATTR, type Attributes, currentTeam, inSpan, SpanKind, urlFull } from "./spans.ts";

type ApiCall = WebClient["apiCall"];

/** Wraps `WebClient.prototype.apiCall` (once); returns what undoes it. */
export function traceWebApiCalls(): () => void {
  const proto = WebClient.prototype;
  const original = proto.apiCall;
  if (TRACED in original) return () => undefined;
  const traced = function (this: WebClient, method, options) {
    return inSpan(
      method,
      { kind: SpanKind.CLIENT, attributes: callAttributes(this.slackApiUrl, method, options) },
      () => original.call(this, method, options),
    );
  } as ApiCall & { [TRACED]?: true };
  traced[TRACED] = true;
  proto.apiCall = traced;
  return () => {
    if (proto.apiCall === traced) proto.apiCall = original;
  };
}

const TRACED = Symbol("traced");

function callAttributes(
  apiUrl: string,
  method: string,
  options: Record<string, unknown> | undefined,
): Attributes {
  const server = serverOf(apiUrl);
  const team = stringOf(options?.team_id) ?? currentTeam();
  const channel = stringOf(options?.channel) ?? stringOf(options?.channel_id);
  return {
    [ATTR_HTTP_REQUEST_METHOD]: "POST",
    [ATTR_URL_FULL]: urlFull(`${apiUrl}${method}`),
    [ATTR_SERVER_ADDRESS]: server.address,
    [ATTR_SERVER_PORT]: server.port,
    ...(team === undefined ? {} : { [ATTR.team]: team }),
    ...(channel === undefined ? {} : { [ATTR.channel]: channel }),
  };
}

const stringOf = (v: unknown): string | undefined =>
  typeof v === "string" && v !== "" ? v : undefined;

/** Slack's host and port, by API URL (one or two in a process: parsed once each). */
const servers = new Map<string, { address: string; port: number }>();

function serverOf(apiUrl: string): { address: string; port: number } {
  let server = servers.get(apiUrl);
  if (!server) {
    const url = new URL(apiUrl);
    const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
    server = { address: url.hostname, port };
    servers.set(apiUrl, server);
  }
  return server;
}
