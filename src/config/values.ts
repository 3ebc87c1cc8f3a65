/** The zod parsers of environment values, and the check that no secret crosses plain http://. */
import { z } from "zod";
import { plainHttpProblems } from "../util/urls.ts";

export const optionalString = z
  .string()
  .trim()
  .transform((v) => (v === "" ? undefined : v))
  .optional();

/** A value `parse` reads (undefined: refused with `message`); unset or empty is `fallback`. */
export const parsedOr = <T>(fallback: T, message: string, parse: (v: string) => T | undefined) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v, ctx): T => {
      if (v === undefined || v === "") return fallback;
      const parsed = parse(v);
      if (parsed !== undefined) return parsed;
      ctx.addIssue({ code: "custom", message });
      return z.NEVER;
    });

/** `v` as JSON, or undefined when it is not. */
export function jsonOf(v: string): unknown {
  try {
    return JSON.parse(v);
  } catch {
    return undefined;
  }
}

export const intFrom = (min: number, max: number, fallback: number) =>
  parsedOr(fallback, `must be a whole number from ${min} to ${max}`, (v) => {
    const n = Number(v);
    return Number.isInteger(n) && n >= min && n <= max ? n : undefined;
  });

export const httpUrl = z
  .string()
  .trim()
  .refine((v) => /^https?:\/\//i.test(v) && URL.canParse(v), {
    message: "must be an http(s) URL",
  });

/** A DNS name: labels of letters, digits and inner hyphens, dot-separated. */
const HOST_NAME =
  /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * ALLOW_INSECURE_HTTP: `true` lets plain http:// reach any machine; `false` (unset) none but this
 * one; host names, comma-separated, those hosts alone (the compose file's demo names its
 * simulator, `simulator`, whose traffic stays on the Docker host's own network).
 */
export const insecureHttp = parsedOr<boolean | readonly string[]>(
  false,
  "must be true, false or host names, comma-separated (e.g. simulator)",
  (v) => {
    const lower = v.toLowerCase();
    const hosts = lower.split(",").map((h) => h.trim().replace(/\.$/, ""));
    return yesOrNo(lower) ?? (hosts.every((h) => HOST_NAME.test(h)) ? hosts : undefined);
  },
);

/**
 * Plain http:// to another machine is refused unless ALLOW_INSECURE_HTTP says so. Proxies are
 * not checked: an http:// proxy is the norm, and https:// traffic crosses it encrypted.
 */
type UrlSettings = { TASK_API_URL: string; SLACK_API_URL?: string | undefined };
export const insecureUrls = (
  v: UrlSettings & { ALLOW_INSECURE_HTTP: boolean | readonly string[] },
): string[] =>
  v.ALLOW_INSECURE_HTTP === true
    ? []
    : plainHttpProblems(
        {
          TASK_API_URL: [v.TASK_API_URL, "the service API key and your prompts"],
          SLACK_API_URL: [v.SLACK_API_URL, "the Slack bot token"],
        },
        "ALLOW_INSECURE_HTTP=true",
        v.ALLOW_INSECURE_HTTP === false ? [] : v.ALLOW_INSECURE_HTTP,
      );

/** One of `values` (any case); unset or empty is `fallback`. */
export const choice = <const T extends readonly [string, ...string[]]>(
  values: T,
  fallback: T[number],
) =>
  z
    .string()
    .trim()
    .toLowerCase()
    .optional()
    .transform((v) => (v === undefined || v === "" ? fallback : v))
    .pipe(z.enum(values, { error: `must be ${values.join(" or ")}` }));

/** An address or a host name to listen on (unset: undefined); `problem` says what is wanted. */
export const hostName = (problem: string) =>
  optionalString.refine((v) => v === undefined || /^[\w.:-]{1,253}$/.test(v), {
    message: problem,
  });

/** true/false (also 1/0, yes/no, on/off), or undefined for another word. */
function yesOrNo(v: string): boolean | undefined {
  if (["false", "0", "no", "off"].includes(v)) return false;
  return ["true", "1", "yes", "on"].includes(v) ? true : undefined;
}

/** true or false; unset is false. */
export const flag = parsedOr(false, "must be true or false", (v) => yesOrNo(v.toLowerCase()));

/** The non-empty items of a comma-separated list, trimmed. */
export const commaList = (v: string): string[] => v.split(",").flatMap((s) => s.trim() || []);

/** A comma-separated list of names (model or agent ids offered in the New task modal). */
export const nameList = z
  .string()
  .optional()
  .transform((v) => [...new Set(commaList(v ?? ""))])
  .pipe(
    z
      .array(z.string().max(150, "has a name longer than 150 characters"))
      .max(100, "lists more than 100 names (a Slack menu shows at most 100)"),
  );

/** A developer command's port setting (SIM_PORT…): the number, or the problem and exit 1. */
export function portSettingOrExit(name: string, value: string | undefined, fallback: number) {
  const parsed = intFrom(0, 65_535, fallback).safeParse(value);
  if (parsed.success) return parsed.data;
  process.stderr.write(`Invalid configuration: ${name} must be a whole number from 0 to 65535\n`);
  process.exit(1);
}
