/**
 * Tracing's settings: OpenTelemetry's `OTEL_*` variables. The SDK reads them itself; they are
 * checked here so a misspelt value stops the app with one clear line, not a silent default.
 */
import { z } from "zod";
import { flag, httpUrl, optionalString } from "./values.ts";

const EXPORTERS = ["otlp", "none"] as const;
const PROTOCOLS = ["http/protobuf", "http/json", "grpc"] as const;
const SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;
const PROPAGATORS = ["tracecontext", "baggage", "b3", "b3multi", "none"] as const;

/** A comma-separated list of `names` (unset or empty: undefined). */
const listOf = <const T extends readonly [string, ...string[]]>(names: T) =>
  optionalString
    .transform((v) => v?.split(",").map((s) => s.trim()))
    .pipe(z.array(z.enum(names, { error: `must list ${names.join(", ")}` })).optional());

const oneOf = <const T extends readonly [string, ...string[]]>(names: T) =>
  optionalString.pipe(z.enum(names, { error: `must be ${names.join(", ")}` }).optional());

const endpoint = optionalString.pipe(httpUrl.optional());

export const tracingShape = {
  /** `true`: no tracing whatever the rest says. */
  OTEL_SDK_DISABLED: flag,
  /** `otlp` (the default once an endpoint is set) or `none`. */
  OTEL_TRACES_EXPORTER: listOf(EXPORTERS),
  /** The collector: `http://collector:4318` (HTTP; `/v1/traces` is added) or `:4317` (gRPC). */
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: oneOf(PROTOCOLS),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: oneOf(PROTOCOLS),
  /** `key=value,…` sent with every export, often a vendor's key: kept out of the logs. */
  OTEL_EXPORTER_OTLP_HEADERS: optionalString,
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: optionalString,
  OTEL_SERVICE_NAME: optionalString,
  OTEL_RESOURCE_ATTRIBUTES: optionalString,
  OTEL_TRACES_SAMPLER: oneOf(SAMPLERS),
  OTEL_TRACES_SAMPLER_ARG: optionalString.refine(
    (v) => v === undefined || (/^\s*[0-9.eE+-]+\s*$/.test(v) && Number(v) >= 0 && Number(v) <= 1),
    { message: "must be a number from 0 to 1" },
  ),
  OTEL_PROPAGATORS: listOf(PROPAGATORS),
};

type TracingValues = z.infer<z.ZodObject<typeof tracingShape>>;

/** The service name spans carry when the operator names none (the SDK's own is `unknown_service`). */
export const DEFAULT_SERVICE_NAME = "slack-task-bot";

export type TracingConfig = Readonly<ReturnType<typeof tracingFrom>>;

/** On when an OTLP endpoint (or `OTEL_TRACES_EXPORTER=otlp`) is set and OTEL_SDK_DISABLED is not. */
export function tracingFrom(v: TracingValues) {
  const exporters = v.OTEL_TRACES_EXPORTER;
  const endpointSet =
    v.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined ||
    v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined;
  // The SDK exports to localhost:4318 by default; the app exports nothing unless told where.
  const wanted = exporters === undefined ? endpointSet : exporters.includes("otlp");
  const named =
    v.OTEL_SERVICE_NAME !== undefined ||
    /(^|,)\s*service\.name\s*=/.test(v.OTEL_RESOURCE_ATTRIBUTES ?? "");
  return {
    enabled: wanted && !v.OTEL_SDK_DISABLED,
    protocol:
      v.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? v.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf",
    defaultServiceName: named ? undefined : DEFAULT_SERVICE_NAME,
    // The OTLP headers' values (a vendor's key, often), for the logs' scrubber.
    secrets: [v.OTEL_EXPORTER_OTLP_HEADERS, v.OTEL_EXPORTER_OTLP_TRACES_HEADERS].flatMap(
      headerValues,
    ) as readonly string[],
  };
}

/** `OTEL_TRACES_EXPORTER=otlp,none` means nothing clear: the SDK would pick otlp silently. */
export function tracingProblems(v: TracingValues): string[] {
  const exporters = v.OTEL_TRACES_EXPORTER ?? [];
  return exporters.includes("none") && exporters.length > 1
    ? ["OTEL_TRACES_EXPORTER must be otlp or none, not both"]
    : [];
}

/** The values of `key=value,…` (percent-decoded as the SDK sends them, and as written). */
function headerValues(headers: string | undefined): string[] {
  if (headers === undefined) return [];
  return headers.split(",").flatMap((pair) => {
    const value = pair.slice(pair.indexOf("=") + 1).trim();
    if (!pair.includes("=") || value === "") return [];
    let decoded = value;
    try {
      decoded = decodeURIComponent(value);
    } catch {
      // kept as written
    }
    return decoded === value ? [value] : [value, decoded];
  });
}
