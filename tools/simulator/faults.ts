/** Realistic error answers for injected failures (directives and `Simulator.injectFault`). */
import type { ValidationIssue } from "./validation.ts";

export interface ErrorAnswer {
  status: number;
  detail: string | ValidationIssue[];
  headers: Record<string, string>;
}

const RETRY_AFTER_SECONDS = 7;

const DETAILS: Record<number, string> = {
  400: "Bad request: the request could not be processed",
  401: "Invalid API key",
  402: "Insufficient credits: your balance is 0. Add credits in the billing settings to continue.",
  403: "Forbidden: this API key is not allowed to perform this action",
  404: "Not found",
  409: "Conflict: the resource changed, try again",
  429: `Rate limit exceeded: too many requests. Retry after ${RETRY_AFTER_SECONDS} seconds.`,
  500: "Internal server error",
  502: "Bad gateway",
  503: "Service temporarily unavailable",
  504: "Gateway timeout",
};

export function errorAnswer(status: number, detail?: string, nowMs = Date.now()): ErrorAnswer {
  const headers: Record<string, string> = {};
  if (status === 429) {
    headers["Retry-After"] = String(RETRY_AFTER_SECONDS);
    headers["X-RateLimit-Limit"] = "60";
    headers["X-RateLimit-Remaining"] = "0";
    headers["X-RateLimit-Reset"] = String(Math.ceil(nowMs / 1000) + RETRY_AFTER_SECONDS);
  } else if (status === 503) {
    headers["Retry-After"] = String(RETRY_AFTER_SECONDS);
  }
  if (status === 422) {
    return {
      status,
      headers,
      detail: [
        {
          loc: ["body", "prompt"],
          msg: detail ?? "Value error, the prompt was rejected by the content policy",
          type: "value_error",
        },
      ],
    };
  }
  return { status, headers, detail: detail ?? DETAILS[status] ?? `HTTP ${status}` };
}
