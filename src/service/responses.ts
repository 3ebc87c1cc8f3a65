/** The service's answers read: a refusal as a TaskServiceError, a 2xx JSON answer checked and capped. */
import { type Dispatcher, errors as undiciErrors } from "undici";
import type { z } from "zod";
import { formatBytes } from "../util/bytes.ts";
import type { ByteBudget } from "../util/byte-budget.ts";
import {
  kindForStatus,
  retryAfterFromHeaders,
  TaskServiceError,
  type ValidationIssue,
} from "./errors.ts";
import { ErrorBody } from "./schemas.ts";

const MAX_ERROR_BODY = 64 * 1024;

export function isAbort(err: unknown): boolean {
  return (
    err instanceof Error &&
    (err.name === "AbortError" || err instanceof undiciErrors.RequestAbortedError)
  );
}

function flattenDetail(detail: z.infer<typeof ErrorBody>["detail"]) {
  if (typeof detail === "string") return { text: detail, issues: [] };
  if (Array.isArray(detail)) {
    const issues = detail.map((d) => ({
      msg: d.msg,
      ...(d.loc ? { loc: d.loc } : {}),
      ...(d.type ? { type: d.type } : {}),
    }));
    const text = issues
      .map((i) => {
        const where = (i.loc ?? []).filter((p) => p !== "body" && p !== "query").join(".");
        return where ? `${where}: ${i.msg}` : i.msg;
      })
      .join("; ");
    return { text, issues };
  }
  const msg = detail.message ?? detail.msg ?? detail.error;
  return { text: typeof msg === "string" ? msg : JSON.stringify(detail), issues: [] };
}

/** A refusal (not 2xx) as a TaskServiceError: its `{detail}`, kind and Retry-After. */
export async function failure(res: Dispatcher.ResponseData, what: string) {
  // Its first 64 KiB at most: leaving the loop closes the body.
  const decoder = new TextDecoder("utf-8");
  let raw = "";
  for await (const chunk of res.body) {
    raw += decoder.decode(chunk as Buffer, { stream: true });
    if (raw.length >= MAX_ERROR_BODY) break;
  }
  let detail: string | undefined;
  let issues: ValidationIssue[] = [];
  try {
    const parsed = ErrorBody.safeParse(JSON.parse(raw));
    if (parsed.success) ({ text: detail, issues } = flattenDetail(parsed.data.detail));
  } catch {
    // not JSON: fall back to the status line
  }
  const kind = kindForStatus(res.statusCode);
  const retryAfterMs =
    kind === "rate_limited" || res.statusCode === 503
      ? retryAfterFromHeaders(res.headers)
      : undefined;
  return new TaskServiceError({
    kind,
    status: res.statusCode,
    message: `Task service refused ${what}: HTTP ${res.statusCode}${detail ? ` — ${detail}` : ""}`,
    detail,
    issues,
    retryAfterMs,
  });
}

/** The largest JSON answer read unless told (the app derives its own from TASK_ANSWER_MAX_MB). */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/** An answer past a bound (its bytes, or what it passed): nothing of it is kept. */
export function tooLarge(what: string, bound: number | string): TaskServiceError {
  const why = typeof bound === "number" ? `is larger than ${formatBytes(bound)}` : bound;
  const message = `Task service's answer to ${what} ${why}; it was not read.`;
  return new TaskServiceError({ kind: "too_large", message });
}

/** How an answer is read: at most `maxBytes`; past FREE_BYTES charged to `budget` as it comes. */
export interface AnswerRead {
  readonly maxBytes: number;
  readonly budget?: ByteBudget | undefined;
}

/** An answer this small is read without asking the budget (a create, a stop, a short poll). */
const FREE_BYTES = 1024 * 1024;
/** What a byte of a JSON answer takes while it is read and parsed, at most. */
const READ_MEMORY_FACTOR = 4;

/** A body as text, at most `read.maxBytes`, each chunk decoded as it arrives; adds to `charged`. */
async function readCapped(
  res: Dispatcher.ResponseData,
  read: AnswerRead,
  what: string,
  charged: { bytes: number },
): Promise<string> {
  const max = read.maxBytes;
  const declared = Number(res.headers["content-length"]);
  if (Number.isFinite(declared) && declared > max) {
    res.body.on("error", () => undefined);
    res.body.destroy();
    throw tooLarge(what, max);
  }
  const decoder = new TextDecoder("utf-8");
  let text = "";
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    // Leaving the loop closes the body (the async iterator destroys it).
    if (size > max) throw tooLarge(what, max);
    const due = Math.max(0, size - FREE_BYTES) * READ_MEMORY_FACTOR - charged.bytes;
    if (due > 0 && read.budget) {
      if (!read.budget.tryTake(due)) {
        // The process's budget has no room for this answer now: refused, the others go on.
        const why = "did not fit in what this app holds of the service's answers at once";
        throw tooLarge(what, why);
      }
      charged.bytes += due;
    }
    text += decoder.decode(chunk as Buffer, { stream: true });
  }
  return text + decoder.decode();
}

/**
 * The most values one JSON answer may hold: JSON.parse of 33 MB of `{},` takes over 1 GB; a page
 * of 1,000 history messages holds about 10,000.
 */
export const MAX_JSON_VALUES = 200_000;

/** About how many values JSON.parse would build of `text` (separators outside strings), up to `max`. */
export function jsonValues(text: string, max = MAX_JSON_VALUES): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // To the string's end: its characters are no values.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === COMMA || c === COLON || c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++n > max) return n;
    }
  }
  return n;
}

const [QUOTE, BACKSLASH, COMMA, COLON, OPEN_ARRAY, OPEN_OBJECT] = [34, 92, 44, 58, 91, 123];

/** A 2xx answer's JSON checked against the contract; anything else is a protocol error. */
export async function parseAnswer<S extends z.ZodType>(
  res: Dispatcher.ResponseData,
  what: string,
  schema: S,
  read: AnswerRead,
): Promise<z.infer<S>> {
  const charged = { bytes: 0 };
  try {
    const text = await readCapped(res, read, what, charged);
    if (jsonValues(text) > MAX_JSON_VALUES) {
      throw tooLarge(what, `holds more than ${MAX_JSON_VALUES.toLocaleString("en-US")} values`);
    }
    const parsed = schema.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
    throw new TaskServiceError({
      kind: "protocol",
      status: res.statusCode,
      message: `Task service answer to ${what} does not match the contract: ${parsed.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join(".") || "(root)"} ${i.message}`)
        .join("; ")}`,
    });
  } catch (err) {
    if (isAbort(err) || err instanceof TaskServiceError) throw err;
    throw new TaskServiceError({
      kind: "protocol",
      status: res.statusCode,
      message: `Task service sent an unreadable answer to ${what}.`,
      cause: err,
    });
  } finally {
    read.budget?.give(charged.bytes);
  }
}
