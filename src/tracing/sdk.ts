/**
 * Starts OpenTelemetry's Node SDK when tracing is on (off, it is not even loaded): it reads the
 * OTEL_* variables itself. Traces only; the SDK's warnings become log lines.
 */
import { context, diag, DiagLogLevel, propagation, trace } from "@opentelemetry/api";
import type { Logger } from "pino";
import type { TracingConfig } from "../config/tracing.ts";
import { traceWebApiCalls } from "./slack-web-api.ts";

export interface Tracing {
  readonly enabled: boolean;
  /** Exports every span ended so far. */
  flush(): Promise<void>;
  /** Exports what is left and stops; the API is a no-op again afterwards. */
  shutdown(): Promise<void>;
}

const done = () => Promise.resolve();
const OFF: Tracing = { enabled: false, flush: done, shutdown: done };

/** Once per process (`main.ts`), before the app is built. */
export async function startTracing(config: TracingConfig, logger: Logger): Promise<Tracing> {
  if (!config.enabled) return OFF;
  const log = logger.child({ component: "opentelemetry" });
  // The SDK's console logger replaces this one when OTEL_LOG_LEVEL asks for its detail.
  diag.setLogger(
    {
      error: (msg, ...args) => log.error({ args: detail(args) }, msg),
      warn: (msg, ...args) => log.warn({ args: detail(args) }, msg),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  const { NodeSDK } = await import("@opentelemetry/sdk-node");
  const sdk = new NodeSDK({
    ...(config.defaultServiceName ? { serviceName: config.defaultServiceName } : {}),
    // Traces only: an empty list keeps the SDK from exporting metrics and logs by OTLP too.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  const untrace = traceWebApiCalls();
  log.info({ protocol: config.protocol }, "tracing on: spans are exported by OTLP");
  const provider = () => trace.getTracerProvider() as { getDelegate?: () => unknown };
  return {
    enabled: true,
    async flush() {
      const delegate = provider().getDelegate?.() as { forceFlush?: () => Promise<void> };
      await delegate?.forceFlush?.();
    },
    async shutdown() {
      untrace();
      await sdk.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
      diag.disable();
    },
  };
}

/** What the SDK adds to a message (an error, a response): its text only, never an object graph. */
const detail = (args: unknown[]): string[] | undefined =>
  args.length === 0
    ? undefined
    : args.map((a) => (a instanceof Error ? `${a.name}: ${a.message}` : String(a)).slice(0, 500));
