/** Every setting, parsed once from the environment by zod; nothing else reads `process.env`. */
import { z } from "zod";
import type { ProxyConfig } from "../util/proxy.ts";
import { urlPassword } from "../util/urls.ts";
import { encryptionFrom, wantsOAuth, workspacesFrom, workspacesShape } from "./workspaces.ts";
import {
  choice,
  flag,
  hostName,
  httpUrl,
  insecureHttp,
  insecureUrls,
  intFrom,
  jsonOf,
  nameList,
  optionalString,
  parsedOr,
} from "./values.ts";
import { featuresFrom, featuresShape } from "./features.ts";
import { tracingFrom, tracingProblems, tracingShape } from "./tracing.ts";

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

const RATE_LIMITS = z.record(z.string().regex(/^[a-z]+\.[A-Za-z.]+$/), z.number().positive());

/** Days people's records (threads, recent tasks, votes) and the audit trail outlive their last write. */
export const DEFAULT_RETENTION_DAYS = 90;

/** MiB the service's data may take: one answer's text, one run's files (as sent), the process. */
export const DEFAULT_MEMORY_MB = { answer: 8, runFiles: 64, process: 256 } as const;

const serviceShape = {
  TASK_API_URL: httpUrl.transform((v) => v.replace(/\/+$/, "")),
  /** Required with one workspace; with many (OAuth), the key of workspaces without their own. */
  TASK_API_KEY: optionalString,
  TASK_POLL_TIMEOUT_S: intFrom(1, 600, 30),
  TASK_STREAM_IDLE_TIMEOUT_S: intFrom(5, 3600, 120),
  TASK_MAX_RUN_S: intFrom(1, 7 * 86_400, 4 * 3600),
  TASK_ALLOW_GUESTS: flag,
  TASK_ALLOW_EXTERNAL: flag,
  TASK_RATE_USER_PER_MIN: intFrom(0, 1000, 10),
  TASK_RATE_CHANNEL_PER_MIN: intFrom(0, 10_000, 60),
  /** The most of one answer kept in memory (MiB of UTF-8 text); past it the run is stopped. */
  TASK_ANSWER_MAX_MB: intFrom(1, 1024, DEFAULT_MEMORY_MB.answer),
  /** The most of one run's files held in memory at once (MiB, as the service sends them). */
  TASK_FILES_MAX_MB: intFrom(1, 4096, DEFAULT_MEMORY_MB.runFiles),
  /** All runs' answers and files together (MiB): the process's budget of the service's data. */
  TASK_MEMORY_MAX_MB: intFrom(16, 65_536, DEFAULT_MEMORY_MB.process),
  /** Lets TASK_API_URL and SLACK_API_URL use plain http:// to other hosts: any, or those named. */
  ALLOW_INSECURE_HTTP: insecureHttp,
};

/** An HTTP(S)_PROXY: http:// or https:// (undici's); no scheme (`proxy.corp:3128`, as curl) is http://. */
const proxyUrl = optionalString
  .transform((v) => (v === undefined || /^[a-z][a-z0-9+.-]*:\/\//i.test(v) ? v : `http://${v}`))
  .refine((v) => v === undefined || (/^https?:\/\//i.test(v) && URL.canParse(v)), {
    message: "must be an http:// or https:// proxy URL, e.g. http://proxy.example.com:3128",
  });

/** Outbound proxy settings; lower-case names win over upper-case ones, as in curl and undici. */
const proxyShape = {
  HTTPS_PROXY: proxyUrl,
  https_proxy: proxyUrl,
  HTTP_PROXY: proxyUrl,
  http_proxy: proxyUrl,
  NO_PROXY: optionalString,
  no_proxy: optionalString,
};

const slackShape = {
  SLACK_SIGNING_SECRET: optionalString,
  SLACK_APP_TOKEN: optionalString.refine((v) => v === undefined || v.startsWith("xapp-"), {
    message: "must be an app-level token (starts with xapp-)",
  }),
  SLACK_API_URL: httpUrl.optional().or(z.literal("").transform(() => undefined)),
  SLACK_EDIT_INTERVAL_MS: intFrom(100, 60_000, 1000),
  SLACK_STREAMING: choice(["auto", "edit", "native"], "auto"),
  // Slack ends a native stream about five minutes after it started: rotate well before.
  SLACK_STREAM_ROTATE_S: intFrom(1, 280, 240),
  SLACK_TASK_DISPLAY: choice(["plan", "timeline"], "plan"),
  SLACK_RATE_SAFETY: parsedOr(0.9, "must be a number above 0 and at most 1", (v) => {
    const n = Number(v);
    return Number.isFinite(n) && n > 0 && n <= 1 ? n : undefined;
  }),
  SLACK_RATE_LIMITS: parsedOr<Record<string, number>>(
    {},
    'must be a JSON object of calls per minute by method, e.g. {"chat.update":50}',
    (v) => RATE_LIMITS.safeParse(jsonOf(v)).data,
  ),
  TASK_MODELS: nameList,
  TASK_AGENTS: nameList,
  TASK_SETTINGS_ANYONE: flag,
  REDIS_URL: optionalString.refine((v) => v === undefined || /^rediss?:\/\//.test(v), {
    message: "must be a redis:// or rediss:// URL",
  }),
  REDIS_CONNECT_TIMEOUT_MS: intFrom(100, 600_000, 10_000),
  DATA_DIR: optionalString,
  INSTANCE_ID: optionalString,
  STORE_NAMESPACE: optionalString
    .transform((v) => v ?? "taskbot")
    .pipe(z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, "must be 1 to 40 letters, digits, - or _")),
  DATA_RETENTION_DAYS: intFrom(1, 3650, DEFAULT_RETENTION_DAYS),
  RUN_LEASE_TTL_MS: intFrom(500, 600_000, 15_000),
  RESUME_SCAN_INTERVAL_MS: intFrom(100, 600_000, 2000),
  PORT: intFrom(0, 65_535, 3000),
  LISTEN_HOST: hostName("must be an address or host name, e.g. 127.0.0.1"),
  ADMIN_PORT: parsedOr<number | undefined>(undefined, "must be a port number (0 to 65535)", (v) =>
    /^\d{1,5}$/.test(v) && Number(v) <= 65_535 ? Number(v) : undefined,
  ),
  ADMIN_HOST: hostName(
    "must be an IP address or a host name (e.g. 127.0.0.1, or 0.0.0.0 for every interface)",
  ),
  LOG_LEVEL: choice(LOG_LEVELS, "info"),
};

export type Env = Readonly<Record<string, string | undefined>>;

/** Every setting but the workspaces' (parsed apart: their problems are reported with these). */
const appShape = {
  ...serviceShape,
  ...slackShape,
  ...proxyShape,
  ...featuresShape,
  ...tracingShape,
};

/** Every environment variable the app reads (deploy files are checked against this list). */
export const SETTINGS: readonly string[] = Object.keys({ ...appShape, ...workspacesShape });

/** How long a SIGTERM'd instance may take to hand its runs over before it exits anyway. */
export const SHUTDOWN_DEADLINE_MS = 15_000;

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(
      problems.length === 1
        ? `Invalid configuration: ${problems[0]}`
        : `Invalid configuration (${problems.length} problems):\n${problems.map((p) => `  - ${p}`).join("\n")}`,
    );
    this.name = "ConfigError";
    this.problems = problems;
  }
}

/** Parses one part of the environment: its values, or its problems (one line per variable). */
function parseWith<S extends z.ZodRawShape>(
  shape: S,
  env: Env,
): { readonly value?: z.infer<z.ZodObject<S>>; readonly problems: readonly string[] } {
  const result = z.object(shape).safeParse(env);
  if (result.success) return { value: result.data, problems: [] };
  // zod messages never contain the received value, so secrets stay out.
  const problems = result.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? "environment");
    const missing = issue.code === "invalid_type" && issue.input === undefined;
    return missing ? `${name} is required but not set` : `${name} ${issue.message}`;
  });
  return { problems: [...new Set(problems)] };
}

export type ServiceConfig = Readonly<ReturnType<typeof serviceFrom>>;
export type Config = Readonly<ReturnType<typeof parseConfig>>;

function serviceFrom(v: z.infer<z.ZodObject<typeof serviceShape>>) {
  return {
    baseUrl: v.TASK_API_URL,
    apiKey: v.TASK_API_KEY,
    pollTimeoutS: v.TASK_POLL_TIMEOUT_S,
    streamIdleTimeoutS: v.TASK_STREAM_IDLE_TIMEOUT_S,
    maxRunS: v.TASK_MAX_RUN_S,
    rateUserPerMin: v.TASK_RATE_USER_PER_MIN,
    rateChannelPerMin: v.TASK_RATE_CHANNEL_PER_MIN,
    allowGuests: v.TASK_ALLOW_GUESTS,
    allowExternal: v.TASK_ALLOW_EXTERNAL,
    memoryMb: {
      answer: v.TASK_ANSWER_MAX_MB,
      runFiles: v.TASK_FILES_MAX_MB,
      process: v.TASK_MEMORY_MAX_MB,
    },
  };
}

/** A process budget smaller than what one run may hold would refuse that run's every file. */
function memoryProblems(v: z.infer<z.ZodObject<typeof serviceShape>>): string[] {
  const largest = Math.max(v.TASK_ANSWER_MAX_MB, v.TASK_FILES_MAX_MB);
  const problem = `TASK_MEMORY_MAX_MB must be at least TASK_ANSWER_MAX_MB and TASK_FILES_MAX_MB (${largest}), the most one run holds`;
  return v.TASK_MEMORY_MAX_MB >= largest ? [] : [problem];
}

/** The error's message and `pointer` (where to read more): on one line for one problem. */
export function withPointer(err: ConfigError, pointer: string): string {
  return `${err.message}${err.problems.length === 1 ? " — " : "\n"}${pointer}.`;
}

/** For a command's entry point: the config, or its problems printed (never a value) and exit 1. */
export function parseConfigOrExit(env: Env): Config {
  try {
    return parseConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${withPointer(err, "README.md lists every setting")}\n`);
    process.exit(1);
  }
}

/** The app's configuration; README.md and docs/ describe each setting. */
export function parseConfig(env: Env) {
  const main = parseWith(appShape, env);
  const auth = parseWith(workspacesShape, env);
  const v = main.value;
  const appKey = Boolean(env.TASK_API_KEY?.trim());
  const chosen = auth.value ? workspacesFrom(auth.value, v?.SLACK_API_URL, appKey) : undefined;
  const oauth = auth.value !== undefined && wantsOAuth(auth.value);
  const sealing = auth.value ? encryptionFrom(auth.value, oauth) : undefined;
  const problems = [...main.problems, ...auth.problems, ...(chosen?.problems ?? [])];
  problems.push(...(sealing?.problems ?? []));
  // One workspace pays with the app's key; many may each have their own (see config/workspaces.ts).
  if (!oauth && !env.TASK_API_KEY?.trim()) problems.push("TASK_API_KEY is required but not set");
  if (v && !v.SLACK_APP_TOKEN && !v.SLACK_SIGNING_SECRET) {
    problems.push(
      "SLACK_SIGNING_SECRET is required in HTTP mode (or set SLACK_APP_TOKEN to use Socket Mode)",
    );
  }
  if (v) problems.push(...insecureUrls(v), ...memoryProblems(v), ...tracingProblems(v));
  const workspaces = chosen?.workspaces;
  if (problems.length > 0 || !v || !workspaces) throw new ConfigError(problems);
  return {
    service: serviceFrom(v),
    slack: {
      ...workspaces,
      signingSecret: v.SLACK_SIGNING_SECRET,
      appToken: v.SLACK_APP_TOKEN,
      apiUrl: v.SLACK_API_URL,
      editIntervalMs: v.SLACK_EDIT_INTERVAL_MS,
      streaming: v.SLACK_STREAMING,
      streamRotateMs: v.SLACK_STREAM_ROTATE_S * 1000,
      taskDisplay: v.SLACK_TASK_DISPLAY,
      rateSafety: v.SLACK_RATE_SAFETY,
      rateLimits: v.SLACK_RATE_LIMITS,
    },
    /** What the New task modal offers; an empty list makes the field free text. */
    choices: { models: v.TASK_MODELS, agents: v.TASK_AGENTS },
    /** Keys (base64) sealing each workspace's service key: the first seals, all open. */
    encryptionKeys: sealing?.keys ?? [],
    settingsAnyone: v.TASK_SETTINGS_ANYONE,
    proxy: {
      httpProxy: v.http_proxy ?? v.HTTP_PROXY,
      httpsProxy: v.https_proxy ?? v.HTTPS_PROXY,
      noProxy: v.no_proxy ?? v.NO_PROXY,
    } satisfies ProxyConfig,
    redisUrl: v.REDIS_URL,
    redisConnectTimeoutMs: v.REDIS_CONNECT_TIMEOUT_MS,
    dataDir: v.DATA_DIR ?? "data",
    /** This instance's name as the holder of run leases (unique per process). */
    instanceId: v.INSTANCE_ID,
    storeNamespace: v.STORE_NAMESPACE,
    retentionDays: v.DATA_RETENTION_DAYS,
    runLeaseTtlMs: v.RUN_LEASE_TTL_MS,
    resumeScanIntervalMs: v.RESUME_SCAN_INTERVAL_MS,
    port: v.PORT,
    listenHost: v.LISTEN_HOST,
    /** Where health and metrics are served instead of `port`, when set. */
    adminPort: v.ADMIN_PORT,
    adminHost: v.ADMIN_HOST ?? "127.0.0.1",
    logLevel: v.LOG_LEVEL,
    tracing: tracingFrom(v),
    ...featuresFrom(v, env.PATH),
  };
}

/** The secret values of a config, for the logger's last-line scrubber. */
export function secretsOf(config: Partial<Config>): string[] {
  return [
    config.service?.apiKey,
    config.slack?.botToken,
    config.slack?.oauth?.clientSecret,
    config.slack?.oauth?.stateSecret,
    config.slack?.signingSecret,
    config.slack?.appToken,
    ...(config.encryptionKeys ?? []),
    ...(config.tracing?.secrets ?? []),
    config.redisUrl ? urlPassword(config.redisUrl) : undefined,
    // A password in a URL (https://user:pass@host), as written and decoded.
    ...[
      config.proxy?.httpProxy,
      config.proxy?.httpsProxy,
      config.service?.baseUrl,
      config.slack?.apiUrl,
    ].flatMap((url) => (url ? [urlPassword(url), urlPassword(url, { raw: true })] : [])),
  ].filter((s): s is string => typeof s === "string" && s.length >= 4);
}
