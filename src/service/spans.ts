/**
 * How a request to the task service shows in a trace: an HTTP client span named after its
 * method and route (`POST /api/v1/public/quick-action`, `GET …/threads/{thread_id}/response`),
 * with OpenTelemetry's HTTP attributes (method, URL, server, status) and the endpoint as the
 * metrics name it. The URL holds ids only: the key travels in a header, the prompt in the body.
 */
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
} from "@opentelemetry/semantic-conventions";
import { ATTR, failed, type Span, SpanKind, urlFull } from "../tracing/spans.ts";
import type { SpanOptions } from "@opentelemetry/api";

/** The span's name and options for a request to `target`. */
export function clientSpanOf(
  method: string,
  target: URL,
  /** Which endpoint (`create`, `result_stream`…; `other` for any other path). */
  endpoint: string,
): [name: string, options: SpanOptions] {
  // A thread's id is not part of a route: spans of one endpoint share one name.
  const template =
    endpoint === "other"
      ? undefined
      : target.pathname.replace(/\/threads\/[^/]+/, "/threads/{thread_id}");
  const port = target.port === "" ? (target.protocol === "https:" ? 443 : 80) : Number(target.port);
  return [
    template === undefined ? method : `${method} ${template}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: method,
        [ATTR_URL_FULL]: urlFull(target),
        [ATTR_SERVER_ADDRESS]: target.hostname,
        [ATTR_SERVER_PORT]: port,
        [ATTR.endpoint]: endpoint,
        ...(template === undefined ? {} : { [ATTR.urlTemplate]: template }),
      },
    },
  ];
}

/** The answer's status on the span; from 400 on, an error of that status. */
export function statusOn(span: Span, status: number): void {
  if (!span.isRecording()) return;
  span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
  if (status >= 400) failed(span, undefined, String(status));
}
