/**
 * A span for every Slack Web API call (`chat.update`), retries included: every WebClient's
 * `apiCall` is wrapped while tracing is on. It holds the method, Slack's host, the workspace,
 * channel and Slack's error code; never the call's text, blocks or token.
 */
import { WebClient } from "@slack/web-api";
import { ATTR, currentTeam, httpClientAttributes, inSpan, SpanKind } from "./spans.ts";

type ApiCall = WebClient["apiCall"];

const TRACED = Symbol("traced");

const stringOf = (v: unknown): string | undefined =>
  typeof v === "string" && v !== "" ? v : undefined;

/** Wraps `WebClient.prototype.apiCall` (once); returns what undoes it. */
export function traceWebApiCalls(): () => void {
  const proto = WebClient.prototype;
  const original = proto.apiCall;
  if (TRACED in original) return () => undefined;
  const traced = function (this: WebClient, method, options) {
    const team = stringOf(options?.team_id) ?? currentTeam();
    const channel = stringOf(options?.channel) ?? stringOf(options?.channel_id);
    const attributes = {
      ...httpClientAttributes("POST", new URL(`${this.slackApiUrl}${method}`)),
      ...(team === undefined ? {} : { [ATTR.team]: team }),
      ...(channel === undefined ? {} : { [ATTR.channel]: channel }),
    };
    return inSpan(method, { kind: SpanKind.CLIENT, attributes }, () =>
      original.call(this, method, options),
    );
  } as ApiCall & { [TRACED]?: true };
  traced[TRACED] = true;
  proto.apiCall = traced;
  return () => {
    if (proto.apiCall === traced) proto.apiCall = original;
  };
}
