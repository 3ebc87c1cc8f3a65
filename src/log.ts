/**
 * The app's pino logger. Secrets are kept out by path (`redact`) and by value (a scrubber over
 * every line: the secrets this process knows, anything shaped like a Slack token). A line
 * written during a trace carries its ids (`trace_id`, `span_id`).
 */
import { type DestinationStream, type Logger, pino } from "pino";
import { traceFields } from "./tracing/spans.ts";

export type { Logger };

const SECRET_FIELDS = [
  "apiKey",
  "token",
  "botToken",
  "appToken",
  "signingSecret",
  "authorization",
  "password",
];
const REDACT_PATHS = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `*.${field}`),
  'headers["x-api-key"]',
  "headers.authorization",
  '*.headers["x-api-key"]',
  "*.headers.authorization",
  'req.headers["x-slack-signature"]',
];

/** Slack tokens (bot, user, app-level, config, a workflow step's) by shape. */
const TOKEN_SHAPES = /\b(?:xox[abposre]|xapp|xwfp)-[A-Za-z0-9-]{8,}/g;

/**
 * A workflow step's execution token, whatever its shape: `function_executed`'s `bot_access_token`,
 * as JSON or JSON in a string (Bolt's Socket Mode receiver logs each message at debug).
 */
const EXECUTION_TOKEN = /(bot_access_token\\?"\s*:\s*\\?")[^"\\]+/g;

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function makeScrubber(secrets: readonly string[]): (line: string) => string {
  const known = secrets.filter((s) => s.length >= 4);
  const re =
    known.length > 0
      ? new RegExp(
          known
            .sort((a, b) => b.length - a.length)
            .map((s) => {
              // A JSON line holds the secret JSON-escaped; match both forms.
              const json = JSON.stringify(s).slice(1, -1);
              return json === s ? escapeRe(s) : `${escapeRe(s)}|${escapeRe(json)}`;
            })
            .join("|"),
          "g",
        )
      : undefined;
  return (line) => {
    let out = line.replace(TOKEN_SHAPES, "[REDACTED]").replace(EXECUTION_TOKEN, "$1[REDACTED]");
    if (re) out = out.replace(re, "[REDACTED]");
    return out;
  };
}

export interface LoggerOptions {
  level?: string;
  secrets?: readonly string[];
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const scrub = makeScrubber(options.secrets ?? []);
  return pino(
    {
      name: "task-bot",
      level: options.level ?? "info",
      redact: { paths: REDACT_PATHS, censor: "[REDACTED]" },
      hooks: { streamWrite: scrub },
      serializers: { err: pino.stdSerializers.err },
      mixin: traceFields,
    },
    options.destination ?? stdoutDestination(),
  );
}

/** Asynchronous: logging never blocks the app. */
export function stdoutDestination() {
  return pino.destination({ fd: 1, sync: false });
}

/**
 * Writes before each call returns (to `fd`, stdout by default), for the last line before exit:
 * pino.final is gone since pino 7, and `flush()` does not wait for a write under way.
 */
export function createFinalLogger(options: Omit<LoggerOptions, "destination"> & { fd?: number }) {
  const { fd, ...rest } = options;
  return createLogger({ ...rest, destination: pino.destination({ fd: fd ?? 1, sync: true }) });
}
