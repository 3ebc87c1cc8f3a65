/** Errors of the Task Execution Service boundary: one typed error for everything the client throws. */

export type ServiceErrorKind =
  | "input" // refused by the client before any request (spec limits)
  | "bad_request" // 400
  | "auth" // 401: missing or invalid API key
  | "credits" // 402: out of credits
  | "forbidden" // 403: not the owner of the thread
  | "not_found" // 404: unknown thread / project / file
  | "validation" // 422
  | "rate_limited" // 429
  | "server" // 5xx
  | "network" // connection refused, reset, DNS, socket closed
  | "timeout" // no answer in time
  | "protocol" // an answer that does not match the contract
  | "too_large"; // an answer larger than the app reads (a budget of its memory)

export interface ValidationIssue {
  readonly loc?: readonly (string | number)[];
  readonly msg: string;
  readonly type?: string;
}

export type ServiceErrorInit = Pick<TaskServiceError, "kind" | "message"> &
  Partial<Pick<TaskServiceError, "status" | "detail" | "issues" | "retryAfterMs" | "limit">> & {
    cause?: unknown;
  };

const TRANSIENT = new Set<ServiceErrorKind>(["rate_limited", "server", "network", "timeout"]);

export class TaskServiceError extends Error {
  readonly kind: ServiceErrorKind;
  readonly status: number | undefined;
  /** The service's `detail`, flattened to one readable string. */
  readonly detail: string | undefined;
  readonly issues: readonly ValidationIssue[];
  /** How long to wait before retrying, from `Retry-After` or `X-RateLimit-Reset`. */
  readonly retryAfterMs: number | undefined;
  /** For input errors: which limit was hit, e.g. "prompt_length". */
  readonly limit: string | undefined;

  constructor(init: ServiceErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "TaskServiceError";
    this.kind = init.kind;
    this.status = init.status;
    this.detail = init.detail;
    this.issues = init.issues ?? [];
    this.retryAfterMs = init.retryAfterMs;
    this.limit = init.limit;
  }

  /** Whether repeating the same idempotent request may succeed. */
  get transient(): boolean {
    return TRANSIENT.has(this.kind);
  }
}

const KIND_OF_STATUS: Readonly<Record<number, ServiceErrorKind>> = {
  401: "auth",
  402: "credits",
  403: "forbidden",
  404: "not_found",
  422: "validation",
  429: "rate_limited",
};

export const kindForStatus = (status: number): ServiceErrorKind =>
  KIND_OF_STATUS[status] ?? (status >= 500 ? "server" : "bad_request");

/** `Retry-After` (seconds or HTTP date) first, then `X-RateLimit-Reset` (epoch seconds or delta). */
export function retryAfterFromHeaders(
  headers: Record<string, string | string[] | undefined>,
  now = Date.now(),
): number | undefined {
  const one = (name: string) => [headers[name]].flat()[0];
  const retryAfter = one("retry-after");
  if (retryAfter !== undefined && retryAfter.trim() !== "") {
    const secs = Number(retryAfter);
    if (Number.isFinite(secs) && secs >= 0) return Math.round(secs * 1000);
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const reset = one("x-ratelimit-reset");
  if (reset !== undefined && reset.trim() !== "") {
    const n = Number(reset);
    if (Number.isFinite(n) && n >= 0) {
      // Large values are epoch seconds; small ones are a delta in seconds.
      return n > 1_000_000_000 ? Math.max(0, n * 1000 - now) : Math.round(n * 1000);
    }
  }
  return undefined;
}

/** The workspace has no service API key, nor the app a default one: nothing was sent. */
export class ServiceKeyMissingError extends TaskServiceError {
  constructor() {
    super({ kind: "auth", message: "This workspace has no Task service API key." });
    this.name = "ServiceKeyMissingError";
  }
}

/** The workspace's stored key does not open (an unlisted encryption key, altered): set it again. */
export class ServiceKeyUnreadableError extends TaskServiceError {
  constructor() {
    super({ kind: "auth", message: "This workspace's Task service API key cannot be read." });
    this.name = "ServiceKeyUnreadableError";
  }
}
