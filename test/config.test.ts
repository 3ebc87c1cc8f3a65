import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig, parseServiceConfig, secretsOf } from "../src/config.ts";
import { describeProxy } from "../src/util/proxy.ts";

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

describe("configuration", () => {
  it("parses a complete HTTP-mode environment with defaults", () => {
    const c = parseConfig(base);
    expect(c.service.baseUrl).toBe("https://tasks.example.com");
    expect(c.port).toBe(3000);
    expect(c.logLevel).toBe("info");
    expect(c.slack.appToken).toBeUndefined();
    expect(c.redisUrl).toBeUndefined();
    expect(c.slack.editIntervalMs).toBe(1000);
  });

  it("lists every missing or invalid variable at once, without any secret value", () => {
    const problems = problemsOf({
      TASK_API_KEY: "",
      SLACK_BOT_TOKEN: "xoxp-user-token-secret",
      PORT: "http",
      REDIS_URL: "mysql://x",
      LOG_LEVEL: "loud",
    });
    const text = problems.join("\n");
    expect(text).toContain("TASK_API_URL is required");
    expect(text).toContain("TASK_API_KEY");
    expect(text).toContain("SLACK_BOT_TOKEN must be a bot token");
    expect(text).toContain("PORT must be a whole number");
    expect(text).toContain("REDIS_URL");
    expect(text).toContain("LOG_LEVEL");
    expect(text).not.toContain("xoxp-user-token-secret");
  });

  it("lets anyone change channel defaults only when TASK_SETTINGS_ANYONE says so", () => {
    expect(parseConfig(base).settingsAnyone).toBe(false);
    expect(parseConfig({ ...base, TASK_SETTINGS_ANYONE: "true" }).settingsAnyone).toBe(true);
    expect(parseConfig({ ...base, TASK_SETTINGS_ANYONE: "no" }).settingsAnyone).toBe(false);
    expect(() => parseConfig({ ...base, TASK_SETTINGS_ANYONE: "maybe" })).toThrow(
      /TASK_SETTINGS_ANYONE must be true or false/,
    );
  });

  it("needs a signing secret in HTTP mode but not in Socket Mode", () => {
    const { SLACK_SIGNING_SECRET: _, ...noSecret } = base;
    expect(problemsOf(noSecret).join()).toContain("SLACK_SIGNING_SECRET is required in HTTP mode");
    expect(parseConfig({ ...noSecret, SLACK_APP_TOKEN: "xapp-1-abc" }).slack.appToken).toBe(
      "xapp-1-abc",
    );
  });

  it("waits 10 s for Redis at start-up unless REDIS_CONNECT_TIMEOUT_MS says otherwise", () => {
    expect(parseConfig(base).redisConnectTimeoutMs).toBe(10_000);
    expect(parseConfig({ ...base, REDIS_CONNECT_TIMEOUT_MS: "2500" }).redisConnectTimeoutMs).toBe(
      2500,
    );
    expect(problemsOf({ ...base, REDIS_CONNECT_TIMEOUT_MS: "0" })).toEqual([
      "REDIS_CONNECT_TIMEOUT_MS must be a whole number from 100 to 600000",
    ]);
  });

  describe("plain http:// (refused beyond this machine unless ALLOW_INSECURE_HTTP=true)", () => {
    it.each([
      ["TASK_API_URL", "http://tasks.example.com", "tasks.example.com", "the service API key"],
      ["SLACK_API_URL", "http://slack.internal:8080/api/", "slack.internal", "the Slack bot token"],
      ["TASK_API_URL", "HTTP://10.0.0.7:8787", "10.0.0.7", "the service API key"],
      // Names that only look local.
      ["TASK_API_URL", "http://localhost.example.com", "localhost.example.com", "API key"],
      ["TASK_API_URL", "http://127.0.0.1.nip.io", "127.0.0.1.nip.io", "API key"],
      ["SLACK_API_URL", "http://0.0.0.0:3000/api/", "0.0.0.0", "bot token"],
    ])("refuses %s=%s, saying why and what to do", (name, url, host, carries) => {
      const problems = problemsOf({ ...base, [name]: url });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(
        new RegExp(`^${name} uses plain http:// to ${host.replace(/\./g, "\\.")}`),
      );
      expect(problems[0]).toContain(carries);
      expect(problems[0]).toContain("use https://, or set ALLOW_INSECURE_HTTP=true");
      // The service-only parser holds the service URL to the same rule.
      if (name === "TASK_API_URL") {
        expect(() => parseServiceConfig({ TASK_API_URL: url, TASK_API_KEY: "k" })).toThrow(
          /TASK_API_URL uses plain http:\/\//,
        );
      }
    });

    it.each([
      "http://localhost:8787",
      "http://LOCALHOST:8787/",
      "http://127.0.0.1:8787",
      "http://127.255.3.9",
      "http://127.1:8787", // 127.0.0.1, as URLs read it
      "http://[::1]:8787",
      "http://[0:0:0:0:0:0:0:1]:8787",
      "http://user@127.0.0.1:8787",
      "https://tasks.example.com",
    ])("accepts %s", (url) => {
      expect(parseConfig({ ...base, TASK_API_URL: url, SLACK_API_URL: url }).service.baseUrl).toBe(
        url.replace(/\/+$/, ""),
      );
    });

    it("accepts http:// anywhere with ALLOW_INSECURE_HTTP=true, and only true or false", () => {
      const env = {
        ...base,
        TASK_API_URL: "http://simulator:8787",
        SLACK_API_URL: "http://slack.invalid:3000/api/",
      };
      expect(problemsOf(env)).toHaveLength(2);
      const c = parseConfig({ ...env, ALLOW_INSECURE_HTTP: "true" });
      expect(c.service.baseUrl).toBe("http://simulator:8787");
      expect(c.slack.apiUrl).toBe("http://slack.invalid:3000/api/");
      expect(problemsOf({ ...env, ALLOW_INSECURE_HTTP: "false" })).toHaveLength(2);
      expect(problemsOf({ ...base, ALLOW_INSECURE_HTTP: "maybe" })).toEqual([
        "ALLOW_INSECURE_HTTP must be true or false",
      ]);
    });

    it("leaves http:// proxies alone: https:// traffic crosses them encrypted", () => {
      const c = parseConfig({ ...base, HTTPS_PROXY: "http://proxy.corp.example:3128" });
      expect(c.proxy.httpsProxy).toBe("http://proxy.corp.example:3128");
    });
  });

  it("parses the service settings alone for tools that only talk to the service", () => {
    expect(
      parseServiceConfig({ TASK_API_URL: "http://127.0.0.1:8787", TASK_API_KEY: "k" }).pollTimeoutS,
    ).toBe(30);
  });

  it("reads the proxy variables in either case, lower case first, as curl and undici do", () => {
    expect(parseConfig(base).proxy).toEqual({
      httpProxy: undefined,
      httpsProxy: undefined,
      noProxy: undefined,
    });
    const c = parseConfig({
      ...base,
      HTTPS_PROXY: "http://upper.example.com:3128",
      https_proxy: "http://lower.example.com:3128",
      HTTP_PROXY: "proxy.example.com:8080", // no scheme: http://, as curl reads it
      NO_PROXY: "localhost,.internal.example.com",
    });
    expect(c.proxy).toEqual({
      httpProxy: "http://proxy.example.com:8080",
      httpsProxy: "http://lower.example.com:3128",
      noProxy: "localhost,.internal.example.com",
    });
  });

  it("refuses a proxy URL it cannot use without printing it", () => {
    const problems = problemsOf({
      ...base,
      HTTPS_PROXY: "socks5://user:hunter2secret@socks.example.com:1080",
    }).join("\n");
    expect(problems).toContain("HTTPS_PROXY must be an http:// or https:// proxy URL");
    expect(problems).not.toContain("hunter2secret");
  });

  it("keeps a proxy's password out of the logs and describes the proxy without credentials", () => {
    const c = parseConfig({
      ...base,
      HTTPS_PROXY: "http://corp-user:p%40ss-w0rd-1@proxy.example.com:3128",
      NO_PROXY: "127.0.0.1",
    });
    expect(secretsOf(c)).toEqual(expect.arrayContaining(["p@ss-w0rd-1", "p%40ss-w0rd-1"]));
    const described = describeProxy(c.proxy);
    expect(described).toBe("https via http://proxy.example.com:3128; direct to 127.0.0.1");
    expect(describeProxy({ ...c.proxy, httpProxy: "http://u:pw@plain.example.com:80" })).toContain(
      "http via http://plain.example.com",
    );
    expect(describeProxy(parseConfig(base).proxy)).toBe("direct");
  });
});
