/**
 * Input validation of the simulator (zod), with errors shaped like the real service's
 * FastAPI/pydantic answers: 422 `{"detail":[{"loc":[...],"msg":"...","type":"..."}]}`.
 */
import { z } from "zod";

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

const MESSAGE_TYPES: readonly [RegExp, string][] = [
  [/^Field required/, "missing"],
  [/valid boolean/, "bool_parsing"],
  [/valid integer/, "int_parsing"],
  [/greater than or equal/, "greater_than_equal"],
  [/less than or equal/, "less_than_equal"],
  [/^String should have at most/, "string_too_long"],
  [/^String should have at least/, "string_too_short"],
  [/^Input should be '/, "enum"],
  [/JSON/, "json_invalid"],
];

function typeOf(message: string): string {
  for (const [re, type] of MESSAGE_TYPES) if (re.test(message)) return type;
  return "value_error";
}

export function issuesOf(error: z.ZodError, where: "query" | "body"): ValidationIssue[] {
  return error.issues.map((issue) => ({
    loc: [where, ...issue.path.map((p) => (typeof p === "number" ? p : String(p)))],
    msg: issue.message,
    type: typeOf(issue.message),
  }));
}

const TRUE = new Set(["true", "1", "yes", "on", "t", "y"]);
const FALSE = new Set(["false", "0", "no", "off", "f", "n"]);

/** A boolean sent as text ("true"/"false", also 1/0, yes/no, on/off like pydantic). */
export const boolText = (fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return fallback;
      const low = v.trim().toLowerCase();
      if (TRUE.has(low)) return true;
      if (FALSE.has(low)) return false;
      ctx.addIssue({ code: "custom", message: "Input should be a valid boolean" });
      return z.NEVER;
    });

/** An integer sent as text, within [min, max]. */
export const intText = (min: number, max: number | undefined, fallback: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return fallback;
      if (!/^\s*[+-]?\d+\s*$/.test(v)) {
        ctx.addIssue({
          code: "custom",
          message: "Input should be a valid integer, unable to parse string as an integer",
        });
        return z.NEVER;
      }
      const n = Number(v);
      if (n < min) {
        ctx.addIssue({
          code: "custom",
          message: `Input should be greater than or equal to ${min}`,
        });
        return z.NEVER;
      }
      if (max !== undefined && n > max) {
        ctx.addIssue({ code: "custom", message: `Input should be less than or equal to ${max}` });
        return z.NEVER;
      }
      return n;
    });

const page = intText(1, undefined, 1);
const pageSize = intText(1, 1000, 100);

export const resultQuery = z.object({
  timeout: intText(0, 600, 300),
  realtime: boolText(false),
  include_file_content: boolText(false),
  page,
  page_size: pageSize,
});

export const historyQuery = z.object({
  page,
  page_size: pageSize,
  include_file_content: boolText(false),
  include_status_messages: boolText(false),
  compact: boolText(false),
});

export const filesQuery = z.object({ page, page_size: pageSize });

/** Length in characters as the service (Python) counts them: code points. */
export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

const prompt = z
  .string()
  .optional()
  .superRefine((v, ctx) => {
    if (v === undefined) return;
    const n = codePoints(v);
    if (n < 1) ctx.addIssue({ code: "custom", message: "String should have at least 1 character" });
    if (n > 5000) {
      ctx.addIssue({ code: "custom", message: "String should have at most 5000 characters" });
    }
  });

const metadata = z
  .string()
  .optional()
  .transform((v, ctx): unknown => {
    if (v === undefined) return undefined;
    try {
      return JSON.parse(v);
    } catch {
      ctx.addIssue({ code: "custom", message: "Invalid JSON: metadata must be a JSON string" });
      return z.NEVER;
    }
  });

export const createForm = z.object({
  prompt,
  agent_id: z.string().optional(),
  model_name: z.string().optional(),
  enable_thinking: boolText(false),
  reasoning_effort: z
    .enum(["low", "medium", "high"], { error: "Input should be 'low', 'medium' or 'high'" })
    .default("low"),
  enable_context_manager: boolText(false),
  source: z
    .enum(["web", "mobile", "widget"], { error: "Input should be 'web', 'mobile' or 'widget'" })
    .optional(),
  metadata,
  show_in_recent_tasks: boolText(true),
});

export type CreateForm = z.infer<typeof createForm>;

export const continueForm = z.object({ prompt });

/** Query parameters as a plain record (the last value of a repeated name wins). */
export function queryRecord(params: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of params) out[k] = v;
  return out;
}
