/** `url.full` on spans: credentials in a URL never reach the exporter (OpenTelemetry's HTTP conventions). */
import { describe, expect, it } from "vitest";
import { urlFull } from "../../src/tracing/spans.ts";

describe("url.full", () => {
  it("replaces a URL's user name and password by REDACTED, and keeps the rest", () => {
    expect(urlFull("https://svc:t%40sk@tasks.example.com:8443/api/v1/x?q=1")).toBe(
      "https://REDACTED:REDACTED@tasks.example.com:8443/api/v1/x?q=1",
    );
    expect(urlFull(new URL("https://token@slack.example.com/api/chat.update"))).toBe(
      "https://REDACTED@slack.example.com/api/chat.update",
    );
  });

  it("leaves a URL without credentials as it is", () => {
    expect(urlFull("https://slack.com/api/chat.update")).toBe("https://slack.com/api/chat.update");
  });
});
