import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig, secretsOf } from "../src/config/config.ts";
import { DEFAULT_SUGGESTED_PROMPTS } from "../src/config/prompts.ts";
import { describeProxy } from "../src/util/proxy.ts";

const base = {
  TASK_API_URL: "https://tasks.example.com/",
  TASK_API_KEY: "he-secret-value-123",
  SLACK_BOT_TOKEN: "xoxb-1-secret",
  SLACK_SIGNING_SECRET: "signing-secret-value",
};

/** 32 bytes, base64 (as `openssl rand -base64 32` prints them). */
const SEALING_KEY = Buffer.alloc(32, 7).toString("base64");
const OLD_SEALING_KEY = Buffer.alloc(32, 9).toString("base64");

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
    expect(c.slack.streaming).toBe("auto");
    expect(c.slack.streamRotateMs).toBe(240_000);
  });

  it("streams answers in auto, edit or native mode, rotating streams before Slack ends them", () => {
    for (const mode of ["auto", "edit", "native", "NATIVE"]) {
      expect(parseConfig({ ...base, SLACK_STREAMING: mode }).slack.streaming).toBe(
        mode.toLowerCase(),
      );
    }
    expect(problemsOf({ ...base, SLACK_STREAMING: "stream" }).join("\n")).toMatch(
      /SLACK_STREAMING/,
    );
    expect(parseConfig({ ...base, SLACK_STREAM_ROTATE_S: "2" }).slack.streamRotateMs).toBe(2000);
    // Past about five minutes Slack has ended the stream already.
    expect(problemsOf({ ...base, SLACK_STREAM_ROTATE_S: "300" }).join("\n")).toMatch(
      /SLACK_STREAM_ROTATE_S/,
    );
  });

  it("shows the agent's steps as a plan unless told to show a timeline", () => {
    expect(parseConfig(base).slack.taskDisplay).toBe("plan");
    expect(parseConfig({ ...base, SLACK_TASK_DISPLAY: "Timeline" }).slack.taskDisplay).toBe(
      "timeline",
    );
    expect(problemsOf({ ...base, SLACK_TASK_DISPLAY: "cards" }).join("\n")).toMatch(
      /SLACK_TASK_DISPLAY/,
    );
  });

  it("reads the agent view's suggested prompts from TASK_SUGGESTED_PROMPTS, with defaults", () => {
    expect(parseConfig(base).suggestedPrompts).toEqual(DEFAULT_SUGGESTED_PROMPTS);
    const own = [{ title: "Landing page", message: "Build a landing page for my shop" }];
    expect(
      parseConfig({ ...base, TASK_SUGGESTED_PROMPTS: JSON.stringify(own) }).suggestedPrompts,
    ).toEqual(own);
    expect(parseConfig({ ...base, TASK_SUGGESTED_PROMPTS: "[]" }).suggestedPrompts).toEqual([]);
    const five = JSON.stringify(Array.from({ length: 5 }, () => own[0]));
    for (const bad of ["not json", five, '[{"title":""}]']) {
      expect(problemsOf({ ...base, TASK_SUGGESTED_PROMPTS: bad }).join("\n")).toMatch(
        /TASK_SUGGESTED_PROMPTS.*JSON array of at most 4/,
      );
    }
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

  it("listens on every interface unless LISTEN_HOST names one address", () => {
    expect(parseConfig(base).listenHost).toBeUndefined();
    expect(parseConfig({ ...base, LISTEN_HOST: " 127.0.0.1 " }).listenHost).toBe("127.0.0.1");
    expect(parseConfig({ ...base, LISTEN_HOST: "::1" }).listenHost).toBe("::1");
    expect(problemsOf({ ...base, LISTEN_HOST: "http://0.0.0.0/" }).join("\n")).toContain(
      "LISTEN_HOST must be an address or host name",
    );
  });

  it("reads the page previews' and thread context's settings, with their defaults", () => {
    const c = parseConfig({ ...base, PATH: "/usr/local/bin:/usr/bin" });
    expect(c.preview).toEqual({
      enabled: true,
      chromiumPath: undefined,
      searchPath: ["/usr/local/bin", "/usr/bin"],
      maxPages: 3,
      pageTimeoutMs: 10_000,
      runTimeoutMs: 30_000,
      concurrency: 2,
      maxHeight: 4000,
      allowNoSandbox: false,
      memoryMb: 512,
    });
    expect(c.threadContext).toEqual({
      enabled: true,
      maxMessages: 50,
      maxChars: 20_000,
      waitMs: 5000,
    });
    const set = parseConfig({
      ...base,
      PAGE_PREVIEWS: "OFF",
      CHROMIUM_PATH: "/opt/chrome",
      PREVIEW_ALLOW_NO_SANDBOX: "1",
      PREVIEW_MEMORY_MB: "1024",
      THREAD_CONTEXT: "off",
      THREAD_CONTEXT_MESSAGES: "15",
    });
    expect(set.preview).toMatchObject({
      enabled: false,
      chromiumPath: "/opt/chrome",
      allowNoSandbox: true,
      memoryMb: 1024,
    });
    for (const yes of ["true", "YES", "on"]) {
      expect(parseConfig({ ...base, PREVIEW_ALLOW_NO_SANDBOX: yes }).preview.allowNoSandbox).toBe(
        true,
      );
    }
    for (const no of ["false", "0", "no", "off", ""]) {
      expect(parseConfig({ ...base, PREVIEW_ALLOW_NO_SANDBOX: no }).preview.allowNoSandbox).toBe(
        false,
      );
    }
    expect(set.threadContext).toMatchObject({ enabled: false, maxMessages: 15 });
    expect(
      problemsOf({
        ...base,
        PAGE_PREVIEWS: "maybe",
        PREVIEW_MAX_PAGES: "0",
        PREVIEW_ALLOW_NO_SANDBOX: "sometimes",
        PREVIEW_MEMORY_MB: "64",
        THREAD_CONTEXT: "x",
      }),
    ).toEqual([
      "PAGE_PREVIEWS must be auto or off",
      "PREVIEW_MAX_PAGES must be a whole number from 1 to 20",
      "PREVIEW_ALLOW_NO_SANDBOX must be true or false",
      "PREVIEW_MEMORY_MB must be a whole number from 128 to 8192",
      "THREAD_CONTEXT must be on or off",
    ]);
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

  it("keeps people's records 90 days unless DATA_RETENTION_DAYS says otherwise (1 to 3650)", () => {
    expect(parseConfig(base).retentionDays).toBe(90);
    expect(parseConfig({ ...base, DATA_RETENTION_DAYS: "30" }).retentionDays).toBe(30);
    for (const days of ["0", "3651", "7.5", "a month"]) {
      expect(problemsOf({ ...base, DATA_RETENTION_DAYS: days })).toEqual([
        "DATA_RETENTION_DAYS must be a whole number from 1 to 3650",
      ]);
    }
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

    it("accepts http:// anywhere with ALLOW_INSECURE_HTTP=true, and true, false or host names", () => {
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
      for (const value of ["maybe?", "http://simulator", "a b", "simulator,", "-x"]) {
        expect(problemsOf({ ...base, ALLOW_INSECURE_HTTP: value })).toEqual([
          "ALLOW_INSECURE_HTTP must be true, false or host names, comma-separated (e.g. simulator)",
        ]);
      }
    });

    it("accepts http:// only to the hosts ALLOW_INSECURE_HTTP names (the compose demo's simulator)", () => {
      const env = { ...base, TASK_API_URL: "http://simulator:8787" };
      expect(parseConfig({ ...env, ALLOW_INSECURE_HTTP: "simulator" }).service.baseUrl).toBe(
        "http://simulator:8787",
      );
      const both = { ...env, SLACK_API_URL: "http://Slack.Internal.:3000/api/" };
      const c = parseConfig({ ...both, ALLOW_INSECURE_HTTP: " Simulator , slack.internal" });
      expect(c.slack.apiUrl).toBe("http://Slack.Internal.:3000/api/");
      // Any other host is still refused, however close its name.
      const problems = problemsOf({
        ...both,
        TASK_API_URL: "http://simulator.example.com:8787",
        ALLOW_INSECURE_HTTP: "simulator",
      });
      expect(problems.map((p) => p.split(",")[0])).toEqual([
        "TASK_API_URL uses plain http:// to simulator.example.com",
        "SLACK_API_URL uses plain http:// to slack.internal.",
      ]);
    });

    it("leaves http:// proxies alone: https:// traffic crosses them encrypted", () => {
      const c = parseConfig({ ...base, HTTPS_PROXY: "http://proxy.corp.example:3128" });
      expect(c.proxy.httpsProxy).toBe("http://proxy.corp.example:3128");
    });
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

  it("keeps a password in the task service's or Slack's URL out of the logs", () => {
    const c = parseConfig({
      ...base,
      TASK_API_URL: "https://svc:t%40sk-pass-9@tasks.example.com/",
      SLACK_API_URL: "https://slk:sl4ck-pass-7@slack.example.com/api/",
    });
    expect(secretsOf(c)).toEqual(
      expect.arrayContaining(["t@sk-pass-9", "t%40sk-pass-9", "sl4ck-pass-7"]),
    );
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

  describe("many workspaces (OAuth)", () => {
    const { SLACK_BOT_TOKEN: _token, ...noToken } = base;
    const oauth = {
      ...noToken,
      SLACK_CLIENT_ID: "1234.5678",
      SLACK_CLIENT_SECRET: "client-secret-value-abc",
      SLACK_STATE_SECRET: "state-secret-of-my-own-0123",
      ENCRYPTION_KEY: SEALING_KEY,
    };

    it("switches on with the client id, client secret and state secret, no bot token needed", () => {
      const c = parseConfig(oauth);
      expect(c.slack.botToken).toBeUndefined();
      expect(c.slack.oauth).toEqual({
        clientId: "1234.5678",
        clientSecret: "client-secret-value-abc",
        stateSecret: "state-secret-of-my-own-0123",
        redirectUri: undefined,
        authorizeUrl: "https://slack.com/oauth/v2/authorize",
        // Every workspace may install it; none spends TASK_API_KEY unless named.
        allowedTeams: undefined,
        apiKeyFor: new Set(),
      });
      expect(secretsOf(c)).toEqual(
        expect.arrayContaining(["client-secret-value-abc", "state-secret-of-my-own-0123"]),
      );
    });

    it("reads the operator's allow-list and the workspaces that may use TASK_API_KEY", () => {
      const c = parseConfig({
        ...oauth,
        TASK_API_KEY: "he-appKey0123456789",
        TASK_ALLOWED_TEAMS: " T0ACME, E0GRID ",
        TASK_API_KEY_FOR: "T0ACME",
      });
      expect(c.slack.oauth?.allowedTeams).toEqual(new Set(["T0ACME", "E0GRID"]));
      expect(c.slack.oauth?.apiKeyFor).toEqual(new Set(["T0ACME"]));
      expect(
        parseConfig({ ...oauth, TASK_API_KEY: "k", TASK_API_KEY_FOR: "*" }).slack.oauth,
      ).toMatchObject({ apiKeyFor: "all" });
    });

    it("refuses malformed team lists, a lent key that is not set, and the lists with one workspace", () => {
      expect(problemsOf({ ...oauth, TASK_ALLOWED_TEAMS: "acme, T0ACME" })).toEqual([
        "TASK_ALLOWED_TEAMS must list workspace ids (T…) and organisation ids (E…), comma-separated, e.g. T012AB3C4,E0123ABCD",
      ]);
      expect(problemsOf({ ...oauth, TASK_API_KEY: "", TASK_API_KEY_FOR: "T0ACME" })).toEqual([
        "TASK_API_KEY_FOR is set but TASK_API_KEY is not: set the key it lends, or unset TASK_API_KEY_FOR",
      ]);
      expect(problemsOf({ ...oauth, TASK_ALLOWED_TEAMS: "*" })).toEqual([
        "TASK_ALLOWED_TEAMS lists ids, not *: unset it to allow every workspace",
      ]);
      expect(problemsOf({ ...base, TASK_ALLOWED_TEAMS: "T0ACME" })).toEqual([
        "TASK_ALLOWED_TEAMS applies to many workspaces (OAuth) only: unset it with SLACK_BOT_TOKEN",
      ]);
    });

    it("sends people to the consent screen of the Slack that SLACK_API_URL names", () => {
      const c = parseConfig({ ...oauth, SLACK_API_URL: "http://127.0.0.1:4567/api/" });
      expect(c.slack.oauth?.authorizeUrl).toBe("http://127.0.0.1:4567/oauth/v2/authorize");
    });

    it("takes a redirect URL only if it ends in /slack/oauth_redirect", () => {
      const uri = "https://bot.example.com/slack/oauth_redirect";
      expect(parseConfig({ ...oauth, SLACK_REDIRECT_URI: uri }).slack.oauth?.redirectUri).toBe(uri);
      expect(problemsOf({ ...oauth, SLACK_REDIRECT_URI: "https://bot.example.com/cb" })).toEqual([
        "SLACK_REDIRECT_URI must be the app's public URL ending in /slack/oauth_redirect",
      ]);
    });

    it("names what is missing when only some of the three are set, never a value", () => {
      const { SLACK_STATE_SECRET: _s, SLACK_CLIENT_SECRET: _c, ...partial } = oauth;
      const problems = problemsOf(partial);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^SLACK_CLIENT_SECRET and SLACK_STATE_SECRET are not set/);
      expect(problems[0]).toContain("SLACK_CLIENT_ID, SLACK_CLIENT_SECRET, SLACK_STATE_SECRET");
      const { SLACK_CLIENT_ID: _i, ...noId } = oauth;
      expect(problemsOf(noId).join()).toMatch(/^SLACK_CLIENT_ID is not set/);
      expect(problemsOf(noId).join()).not.toContain("client-secret-value-abc");
    });

    it("refuses a bot token beside them, and a short state secret", () => {
      expect(problemsOf({ ...oauth, SLACK_BOT_TOKEN: "xoxb-1-secret" }).join()).toContain(
        "SLACK_BOT_TOKEN cannot be set with SLACK_CLIENT_ID, SLACK_CLIENT_SECRET, SLACK_STATE_SECRET",
      );
      expect(problemsOf({ ...oauth, SLACK_STATE_SECRET: "short" })).toEqual([
        "SLACK_STATE_SECRET must be at least 16 characters (a random secret of your own)",
      ]);
    });

    it("needs ENCRYPTION_KEY (32 bytes of base64) for each workspace's service key, naming it, never its value", () => {
      const { ENCRYPTION_KEY: _k, ...noKey } = oauth;
      expect(problemsOf(noKey)).toEqual([
        "ENCRYPTION_KEY is required with many workspaces (OAuth): each workspace's service key is stored encrypted with it (32 random bytes, base64: `openssl rand -base64 32`)",
      ]);
      const short = Buffer.alloc(16, 3).toString("base64");
      const problems = problemsOf({ ...oauth, ENCRYPTION_KEY: short });
      expect(problems).toEqual([
        "ENCRYPTION_KEY must be 32 random bytes, base64: `openssl rand -base64 32`",
      ]);
      expect(problems.join()).not.toContain(short);
      expect(problemsOf({ ...oauth, ENCRYPTION_KEY: "not base64 at all!" }).join()).toContain(
        "ENCRYPTION_KEY must be 32 random bytes",
      );
    });

    it("takes ENCRYPTION_KEYS for rotation (the first seals), names a bad one by position, and scrubs them all from logs", () => {
      const { ENCRYPTION_KEY: _k, ...noKey } = oauth;
      const c = parseConfig({ ...noKey, ENCRYPTION_KEYS: `${SEALING_KEY}, ${OLD_SEALING_KEY}` });
      expect(c.encryptionKeys).toEqual([SEALING_KEY, OLD_SEALING_KEY]);
      expect(secretsOf(c)).toEqual(expect.arrayContaining([SEALING_KEY, OLD_SEALING_KEY]));
      const bad = problemsOf({ ...noKey, ENCRYPTION_KEYS: `${SEALING_KEY},c2hvcnQ=` });
      expect(bad).toEqual([
        "ENCRYPTION_KEYS (key 2) must be 32 random bytes, base64: `openssl rand -base64 32`",
      ]);
      expect(problemsOf({ ...oauth, ENCRYPTION_KEYS: SEALING_KEY }).join()).toContain(
        "ENCRYPTION_KEY and ENCRYPTION_KEYS are both set",
      );
    });

    it("makes TASK_API_KEY optional: the default key of workspaces without their own", () => {
      const { TASK_API_KEY: _a, ...noAppKey } = oauth;
      expect(parseConfig(noAppKey).service.apiKey).toBeUndefined();
      expect(parseConfig(oauth).service.apiKey).toBe("he-secret-value-123");
      // One workspace still needs it; ENCRYPTION_KEY is optional there (admins may set a key).
      const { TASK_API_KEY: _b, ...oneNoKey } = base;
      expect(problemsOf(oneNoKey)).toEqual(["TASK_API_KEY is required but not set"]);
      expect(parseConfig(base).encryptionKeys).toEqual([]);
      expect(parseConfig({ ...base, ENCRYPTION_KEY: SEALING_KEY }).encryptionKeys).toEqual([
        SEALING_KEY,
      ]);
    });

    it("still needs a bot token when none of them is set, listed with every other problem", () => {
      const { TASK_API_URL: _url, ...rest } = noToken;
      const problems = problemsOf(rest).join("\n");
      expect(problems).toContain("TASK_API_URL is required");
      expect(problems).toContain("SLACK_BOT_TOKEN is required but not set");
      // An empty value (docker compose's `${SLACK_BOT_TOKEN:-}`) is not set either.
      expect(problemsOf({ ...noToken, SLACK_BOT_TOKEN: "" }).join()).toContain(
        "SLACK_BOT_TOKEN is required but not set",
      );
    });
  });
});
