/**
 * A local OTLP/HTTP receiver: a real HTTP server taking what an OpenTelemetry exporter sends to
 * a collector's `/v1/traces` in the OTLP/JSON encoding (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`:
 * ids in hex, attributes as `{key, value: {stringValue|intValue|…}}`), answering as a collector
 * does (200 and an empty `ExportTraceServiceResponse`). It keeps every span it received, flat.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

type AttributeValue = string | number | boolean | AttributeValue[] | undefined;

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Absent (or empty) for a trace's root. */
  readonly parentSpanId: string | undefined;
  readonly name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  /** 0 unset, 1 ok, 2 error. */
  readonly status: { readonly code: number; readonly message?: string };
  /** The service's name, from the span's resource. */
  readonly service: string | undefined;
  /** Where the exporter sent it from (the request's path). */
  readonly path: string;
}

export interface OtlpReceiver {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to (the exporter adds `/v1/traces`). */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** The raw bodies as they came (JSON text), to look for what must never be there. */
  readonly bodies: string[];
  /** Export requests it could not read (not OTLP/JSON). */
  readonly refused: number;
  close(): Promise<void>;
}

interface OtlpAnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpAnyValue[] };
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpAnyValue }[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number; message?: string };
}

interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: OtlpAnyValue }[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
}

function valueOf(v: OtlpAnyValue): AttributeValue {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

const attributesOf = (list: { key: string; value: OtlpAnyValue }[] | undefined) =>
  Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));

function spansOf(request: ExportRequest, path: string): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((rs) => {
    const service = attributesOf(rs.resource?.attributes)["service.name"];
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId || undefined,
        name: s.name,
        kind: s.kind,
        attributes: attributesOf(s.attributes),
        links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
        status: {
          code: s.status?.code ?? 0,
          ...(s.status?.message ? { message: s.status.message } : {}),
        },
        service: typeof service === "string" ? service : undefined,
        path,
      })),
    );
  });
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  let refused = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body = Buffer.concat(chunks);
      if (req.headers["content-encoding"] === "gzip") body = gunzipSync(body);
      const text = body.toString("utf8");
      const path = (req.url ?? "").split("?")[0] ?? "";
      if (req.method !== "POST" || !String(req.headers["content-type"]).includes("json")) {
        refused++;
        res.writeHead(415).end();
        return;
      }
      try {
        spans.push(...spansOf(JSON.parse(text) as ExportRequest, path));
        bodies.push(text);
      } catch {
        refused++;
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    get refused() {
      return refused;
    },
    async close() {
      const closed = once(server, "close");
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}
