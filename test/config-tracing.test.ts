import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig, secretsOf, SETTINGS } from "../src/config/config.ts";
import { DEFAULT_SERVICE_NAME } from "../src/config/tracing.ts";

const base = {
  TASK_API_URL: "https://tasks.example.com/",
  TASK_API_KEY: "he-secret-value-123",
  SLACK_BOT_TOKEN: "xoxb-1-secret",
  SLACK_SIGNING_SECRET: "signing-secret-value",
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  throw new Error("expected a ConfigError");
}

describe("tracing's settings (the standard OTEL_* variables)", () => {
  it("is off unless an exporter is configured, and OTEL_SDK_DISABLED wins", () => {
    expect(parseConfig(base).tracing.enabled).toBe(false);
    // Without an endpoint the SDK would export to localhost:4318 by default: the app does not.
    expect(parseConfig({ ...base, OTEL_SERVICE_NAME: "bot" }).tracing.enabled).toBe(false);
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };
    expect(parseConfig({ ...base, ...endpoint }).tracing.enabled).toBe(true);
    expect(
      parseConfig({
        ...base,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://otel.example.com/v1/traces",
      }).tracing.enabled,
    ).toBe(true);
    expect(parseConfig({ ...base, OTEL_TRACES_EXPORTER: "otlp" }).tracing.enabled).toBe(true);
    expect(
      parseConfig({ ...base, ...endpoint, OTEL_TRACES_EXPORTER: "none" }).tracing.enabled,
    ).toBe(false);
    expect(parseConfig({ ...base, ...endpoint, OTEL_SDK_DISABLED: "true" }).tracing.enabled).toBe(
      false,
    );
    // As compose passes an unset variable: empty is unset.
    expect(parseConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "" }).tracing.enabled).toBe(false);
  });

  it("takes the protocol, the sampler and the service name as the specification spells them", () => {
    const c = parseConfig({
      ...base,
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
      OTEL_PROPAGATORS: "tracecontext,baggage",
    });
    expect(c.tracing).toMatchObject({
      protocol: "http/json",
      defaultServiceName: DEFAULT_SERVICE_NAME,
    });
    expect(
      parseConfig({ ...base, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc" }).tracing.protocol,
    ).toBe("grpc");
    expect(parseConfig(base).tracing.protocol).toBe("http/protobuf");
    // A name the operator gave is the SDK's to apply; the app's default is only for none.
    expect(parseConfig({ ...base, OTEL_SERVICE_NAME: "bot" }).tracing.defaultServiceName).toBe(
      undefined,
    );
    expect(
      parseConfig({
        ...base,
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,service.name=bot",
      }).tracing.defaultServiceName,
    ).toBe(undefined);
  });

  it("refuses a value the SDK would silently replace by its default, saying what it takes", () => {
    const problems = problemsOf({
      ...base,
      OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/xml",
      OTEL_TRACES_SAMPLER: "sometimes",
      OTEL_TRACES_SAMPLER_ARG: "2",
      OTEL_TRACES_EXPORTER: "jaeger",
      OTEL_PROPAGATORS: "tracecontext,xray",
    });
    expect(problems).toEqual(
      [
        "OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL",
        "OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf, http/json, grpc",
        "OTEL_TRACES_SAMPLER must be always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio",
        "OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1",
        "OTEL_TRACES_EXPORTER must list otlp, none",
        "OTEL_PROPAGATORS must list tracecontext, baggage, b3, b3multi, none",
      ].sort(
        (a, b) => SETTINGS.indexOf(a.split(" ")[0] ?? "") - SETTINGS.indexOf(b.split(" ")[0] ?? ""),
      ),
    );
    expect(problemsOf({ ...base, OTEL_TRACES_EXPORTER: "otlp,none" })).toEqual([
      "OTEL_TRACES_EXPORTER must be otlp or none, not both",
    ]);
  });

  it("keeps the OTLP headers' values (a vendor's key) out of the logs", () => {
    const c = parseConfig({
      ...base,
      OTEL_EXPORTER_OTLP_HEADERS: "x-honeycomb-team=hc-key-0123,x-other=val%20ue",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "authorization=Bearer%20tok-4567",
    });
    expect(secretsOf(c)).toEqual(
      expect.arrayContaining([
        "hc-key-0123",
        "val%20ue",
        "val ue",
        "Bearer%20tok-4567",
        "Bearer tok-4567",
      ]),
    );
  });
});
