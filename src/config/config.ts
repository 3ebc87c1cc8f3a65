/**
 * Every setting of the app comes from the environment and is parsed here (and, for which Slack
 * workspaces it serves, in config/workspaces.ts), once, by zod. Logic receives the parsed
 * `Config` object; nothing else reads `process.env`.
 */
import { z } from "zod";
import type { ProxyConfig } from "../util/proxy.ts";
import { urlPassword } from "../util/urls.ts";
import {
  type Workspaces,
  encryptionFrom,
  wantsOAuth,
  workspacesFrom,
  workspacesShape,
} from "./workspaces.ts";
import {
  flag,
  hostName,
  httpUrl,
  insecureHttp,
  insecureUrls,
  intFrom,
  nameList,
  optionalString,
} from "./values.ts";
import { type Features, featuresFrom, featuresShape } from "./features.ts";
import { type TracingConfig, tracingFrom, tracingProblems, tracingShape } from "./tracing.ts";

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/**
 * How long people's records (task threads with their queued replies, recent tasks with their
 * prompt excerpts, votes on answers) and the audit trail are kept after they were last written.
 */
export const DEFAULT_RETENTION_DAYS = 90;

/**
 * What the task service's data may take in memory by default (MiB): one answer's text, one
 * run's files at once (as sent: base64 takes 4 bytes for 3), and everything the process holds.
 */
export const DEFAULT_MEMORY_MB = { answer: 8, runFiles: 64, process: 256 } as const;

/** Settings of the Task Execution Service client (needed by everything that talks to it). */
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

/**
 * A proxy URL as HTTP(S)_PROXY holds it. `proxy.corp:3128` (no scheme, as curl accepts it)
 * means http://. Only HTTP proxies (http:// or https://) are supported, as undici's.
 */
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
  SLACK_STREAMING: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === undefined || v === "" ? "auto" : v.toLowerCase()))
    .pipe(z.enum(["auto", "edit", "native"])),
  // Slack ends a native stream about five minutes after it started: rotate well before.
  SLACK_STREAM_ROTATE_S: intFrom(1, 280, 240),
  // How the agent's steps show: one plan block (the default: a long run's steps stay one
  // block above the answer) or a timeline of cards, one per step.
  SLACK_TASK_DISPLAY: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === undefined || v === "" ? "plan" : v.toLowerCase()))
    .pipe(z.enum(["plan", "timeline"])),
  SLACK_RATE_SAFETY: z
    .string()
    .trim()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === "") return 0.9;
      const n = Number(v);
      if (!Number.isFinite(n) || n <= 0 || n > 1) {
        ctx.addIssue({ code: "custom", message: "must be a number above 0 and at most 1" });
        return z.NEVER;
      }
      return n;
    }),
  SLACK_RATE_LIMITS: z
    .string()
    .trim()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === "") return {};
      try {
        const parsed = z
          .record(z.string().regex(/^[a-z]+\.[A-Za-z.]+$/), z.number().positive())
          .parse(JSON.parse(v));
        return parsed;
      } catch {
        ctx.addIssue({
          code: "custom",
          message: 'must be a JSON object of calls per minute by method, e.g. {"chat.update":50}',
        });
        return z.NEVER;
      }
    }),
  TASK_MODELS: nameList,
  TASK_AGENTS: nameList,
  TASK_SETTINGS_ANYONE: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === undefined || v === "" ? "false" : v.toLowerCase()))
    .pipe(z.enum(["true", "false", "1", "0", "yes", "no"], { error: "must be true or false" }))
    .transform((v) => v === "true" || v === "1" || v === "yes"),
  REDIS_URL: optionalString.refine((v) => v === undefined || /^rediss?:\/\//.test(v), {
    message: "must be a redis:// or rediss:// URL",
  }),
  REDIS_CONNECT_TIMEOUT_MS: intFrom(100, 600_000, 10_000),
  DATA_DIR: optionalString,
  INSTANCE_ID: optionalString,
  STORE_NAMESPACE: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === undefined || v === "" ? "taskbot" : v))
    .pipe(z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, "must be 1 to 40 letters, digits, - or _")),
  DATA_RETENTION_DAYS: intFrom(1, 3650, DEFAULT_RETENTION_DAYS),
  RUN_LEASE_TTL_MS: intFrom(500, 600_000, 15_000),
  RESUME_SCAN_INTERVAL_MS: intFrom(100, 600_000, 2000),
  PORT: intFrom(0, 65_535, 3000),
  LISTEN_HOST: hostName("must be an address or host name, e.g. 127.0.0.1"),
  ADMIN_PORT: optionalString.pipe(
    z
      .string()
      .regex(/^\d{1,5}$/, "must be a port number (0 to 65535)")
      .transform(Number)
      .refine((n) => n <= 65_535, "must be a port number (0 to 65535)")
      .optional(),
  ),
  /** The interface of ADMIN_PORT: loopback unless the operator names one (0.0.0.0 in a pod). */
  ADMIN_HOST: hostName(
    "must be an IP address or a host name (e.g. 127.0.0.1, or 0.0.0.0 for every interface)",
  ),
  LOG_LEVEL: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === undefined || v === "" ? "info" : v.toLowerCase()))
    .pipe(z.enum(LOG_LEVELS)),
};

export type Env = Readonly<Record<string, string | undefined>>;

/** Every environment variable the app reads (deploy files are checked against this list). */
export const SETTINGS: readonly string[] = [
  ...Object.keys(serviceShape),
  ...Object.keys(slackShape),
  ...Object.keys(workspacesShape),
  ...Object.keys(proxyShape),
  ...Object.keys(featuresShape),
  ...Object.keys(tracingShape),
];

/** How long a SIGTERM'd instance may take to hand its runs over before it exits anyway. */
export const SHUTDOWN_DEADLINE_MS = 15_000;

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    // One problem, one line; several, a line each under a heading.
    super(
      problems.length === 1
        ? `Invalid configuration: ${problems[0]}`
        : `Invalid configuration (${problems.length} problems):\n${problems.map((p) => `  - ${p}`).join("\n")}`,
    );
    this.name = "ConfigError";
    this.problems = problems;
  }
}

function parseWith<S extends z.ZodRawShape>(shape: S, env: Env): z.infer<z.ZodObject<S>> {
  const result = z.object(shape).safeParse(env);
  if (result.success) return result.data;
  // One line per variable; zod messages never contain the received value, so secrets stay out.
  const problems = result.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? "environment");
    const missing = issue.code === "invalid_type" && issue.input === undefined;
    return missing ? `${name} is required but not set` : `${name} ${issue.message}`;
  });
  throw new ConfigError([...new Set(problems)]);
}

export interface ServiceConfig {
  readonly baseUrl: string;
  /** The app's key (TASK_API_KEY): with many workspaces, for those without their own (or none). */
  readonly apiKey: string | undefined;
  /** Long-poll `timeout` (seconds) used when following a run without a stream. */
  readonly pollTimeoutS: number;
  /** A stream silent for this long (no event, no keep-alive) counts as dropped. */
  readonly streamIdleTimeoutS: number;
  /** A run still going after this long is stopped at the service, and the thread says so. */
  readonly maxRunS: number;
  /** Tasks and follow-ups one person, and one channel, may start per minute (0: no limit). */
  readonly rateUserPerMin: number;
  readonly rateChannelPerMin: number;
  /** Whether guests, and people of other organisations (Slack Connect), may use the app. */
  readonly allowGuests: boolean;
  readonly allowExternal: boolean;
  /** What the service's data may take in memory (MiB): one answer, one run's files, all of it. */
  readonly memoryMb: {
    readonly answer: number;
    readonly runFiles: number;
    readonly process: number;
  };
}

/** One workspace (`botToken`) or many installed through OAuth (`oauth`): exactly one is set. */
export interface SlackConfig extends Workspaces {
  readonly signingSecret: string | undefined;
  readonly appToken: string | undefined;
  readonly apiUrl: string | undefined;
  /** Minimum interval between two edits of one streaming message. */
  readonly editIntervalMs: number;
  /**
   * How answers reach Slack: `auto` (default) streams natively while the workspace's stream
   * budget allows and edits otherwise; `edit` always edits; `native` always streams.
   */
  readonly streaming: "auto" | "edit" | "native";
  /** How long one native stream message is streamed into before the answer goes on in a new one. */
  readonly streamRotateMs: number;
  /**
   * How the agent's steps show while it works: `plan` (default), one block listing them (a
   * stream's `task_display_mode`, and the latest few in an edited message); `timeline`, a card
   * per step in a stream (and the latest step in an edited message's status line).
   */
  readonly taskDisplay: "plan" | "timeline";
  /** Share of each method's rate tier the app allows itself (headroom for other apps' calls). */
  readonly rateSafety: number;
  /** Calls per minute by method, overriding the tier defaults. */
  readonly rateLimits: Readonly<Record<string, number>>;
}

/** What the New task modal offers; an empty list makes the field free text. */
export interface TaskChoices {
  readonly models: readonly string[];
  readonly agents: readonly string[];
}

/** The optional features (page previews, thread context, suggested prompts) are in Features. */
export interface Config extends Features {
  readonly service: ServiceConfig;
  readonly slack: SlackConfig;
  readonly choices: TaskChoices;
  /** Keys (base64) sealing each workspace's service key: the first seals, all open; maybe none. */
  readonly encryptionKeys: readonly string[];
  /** Anyone may change a channel's task defaults (else its creator and workspace admins). */
  readonly settingsAnyone: boolean;
  /** Where outbound connections go: through these proxies unless NO_PROXY lists the host. */
  readonly proxy: ProxyConfig;
  readonly redisUrl: string | undefined;
  /** Start-up gives up when Redis has not answered within this long. */
  readonly redisConnectTimeoutMs: number;
  readonly dataDir: string;
  /** This instance's name as the holder of run leases (unique per process). */
  readonly instanceId: string | undefined;
  /** Prefix of every key in the store (several bots may share one Redis). */
  readonly storeNamespace: string;
  /** Days people's records and the audit trail are kept after last written (DATA_RETENTION_DAYS). */
  readonly retentionDays: number;
  /** A run whose owner stops renewing its lease is taken over after this long. */
  readonly runLeaseTtlMs: number;
  /** How often an instance looks for runs nobody relays. */
  readonly resumeScanIntervalMs: number;
  readonly port: number;
  /** The address `port` listens on (every interface when unset), e.g. 127.0.0.1 locally. */
  readonly listenHost: string | undefined;
  /** Where health and metrics are served instead of `port`, when set (an internal port). */
  readonly adminPort: number | undefined;
  /** The interface the admin port listens on (ADMIN_HOST; loopback by default). */
  readonly adminHost: string;
  readonly logLevel: (typeof LOG_LEVELS)[number];
  /** OpenTelemetry traces (the standard OTEL_* variables, which the SDK reads itself). */
  readonly tracing: TracingConfig;
}

export function parseServiceConfig(env: Env): ServiceConfig {
  const v = parseWith(serviceShape, env);
  if (v.TASK_API_KEY === undefined) throw new ConfigError(["TASK_API_KEY is required but not set"]);
  const problems = [...insecureUrls(v), ...memoryProblems(v)];
  if (problems.length > 0) throw new ConfigError(problems);
  return serviceFrom(v);
}

function serviceFrom(v: z.infer<z.ZodObject<typeof serviceShape>>): ServiceConfig {
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
  return v.TASK_MEMORY_MAX_MB >= largest
    ? []
    : [
        `TASK_MEMORY_MAX_MB must be at least TASK_ANSWER_MAX_MB and TASK_FILES_MAX_MB (${largest}), the most one run holds`,
      ];
}

/** Parses one part of the environment: its value, or its problems instead of a throw. */
function attempt<T>(parse: () => T): { readonly value?: T; readonly problems: readonly string[] } {
  try {
    return { value: parse(), problems: [] };
  } catch (err) {
    if (err instanceof ConfigError) return { problems: err.problems };
    throw err;
  }
}

/** The error's message and `pointer` (where to read more): on one line for one problem. */
export function withPointer(err: ConfigError, pointer: string): string {
  return `${err.message}${err.problems.length === 1 ? " — " : "\n"}${pointer}.`;
}

/**
 * For a command's entry point (`npm start`, `npm run keys:reseal`): the config, or the problems
 * printed (never a value) and exit code 1.
 */
export function parseConfigOrExit(env: Env): Config {
  try {
    return parseConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${withPointer(err, "README.md lists every setting")}\n`);
    process.exit(1);
  }
}

export function parseConfig(env: Env): Config {
  const main = attempt(() =>
    parseWith(
      { ...serviceShape, ...slackShape, ...proxyShape, ...featuresShape, ...tracingShape },
      env,
    ),
  );
  const auth = attempt(() => parseWith(workspacesShape, env));
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
    choices: { models: v.TASK_MODELS, agents: v.TASK_AGENTS },
    encryptionKeys: sealing?.keys ?? [],
    settingsAnyone: v.TASK_SETTINGS_ANYONE,
    proxy: {
      httpProxy: v.http_proxy ?? v.HTTP_PROXY,
      httpsProxy: v.https_proxy ?? v.HTTPS_PROXY,
      noProxy: v.no_proxy ?? v.NO_PROXY,
    },
    redisUrl: v.REDIS_URL,
    redisConnectTimeoutMs: v.REDIS_CONNECT_TIMEOUT_MS,
    dataDir: v.DATA_DIR ?? "data",
    instanceId: v.INSTANCE_ID,
    storeNamespace: v.STORE_NAMESPACE,
    retentionDays: v.DATA_RETENTION_DAYS,
    runLeaseTtlMs: v.RUN_LEASE_TTL_MS,
    resumeScanIntervalMs: v.RESUME_SCAN_INTERVAL_MS,
    port: v.PORT,
    listenHost: v.LISTEN_HOST,
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
