/**
 * Task options typed inline ahead of a prompt, as one bracket group:
 * `[model=NAME, agent=ID, effort=low|medium|high, thinking, context=off] prompt…`. Pure.
 */
import type { CreateTaskInput, ReasoningEffort } from "../service/client.ts";

/** What a person can choose for a task; every field optional (the service has defaults). */
export interface TaskOptions {
  readonly model?: string;
  readonly agent?: string;
  readonly effort?: ReasoningEffort;
  readonly thinking?: boolean;
  readonly context?: boolean;
}

export type OptionKey = keyof TaskOptions;

/** What each key means, for help texts and error messages, in the order keys are listed. */
export const OPTION_HELP: Readonly<Record<OptionKey, string>> = {
  model: "model=NAME: the model to use",
  agent: "agent=ID: the agent to run",
  effort: "effort=low|medium|high: reasoning effort",
  thinking: "thinking (or thinking=off): extended thinking",
  context: "context (or context=off): the context manager",
};

export const OPTION_KEYS = Object.keys(OPTION_HELP) as readonly OptionKey[];
const VALID_KEYS = `Valid options: ${OPTION_KEYS.map((k) => `\`${k}\``).join(", ")}.`;

export type ParsedPrompt =
  | { readonly ok: true; readonly options: TaskOptions; readonly prompt: string }
  | { readonly ok: false; readonly error: string };

const EFFORTS: readonly ReasoningEffort[] = ["low", "medium", "high"];
const ON = new Set(["on", "true", "yes", "1"]);
const OFF = new Set(["off", "false", "no", "0"]);
/** Longest value accepted for a model or agent name; the service's own ids are far shorter. */
const MAX_NAME = 200;

/**
 * Splits a leading option group off a prompt. Text that does not start with `[`, or whose
 * bracket group has neither a `key=` nor only known keys in it (`[WIP] fix the page`), is
 * all prompt. A misspelled key or a bad value is an error that names the valid keys.
 */
export function parsePrompt(text: string): ParsedPrompt {
  const trimmed = text.trimStart();
  const group = /^\[([^\]\n]*)\]/.exec(trimmed);
  if (!group) return { ok: true, options: {}, prompt: text.trim() };
  const items = (group[1] ?? "").split(/[\s,]+/).filter((s) => s !== "");
  const known = (item: string) => (OPTION_KEYS as readonly string[]).includes(item.toLowerCase());
  if (!items.some((i) => i.includes("=")) && (items.length === 0 || !items.every(known))) {
    return { ok: true, options: {}, prompt: text.trim() };
  }
  const options: Record<string, string | boolean> = {};
  for (const item of items) {
    const eq = item.indexOf("=");
    const rawKey = (eq < 0 ? item : item.slice(0, eq)).toLowerCase();
    const value = eq < 0 ? undefined : item.slice(eq + 1);
    const key = OPTION_KEYS.find((k) => k === rawKey);
    if (!key) return { ok: false, error: unknownKey(rawKey) };
    if (key in options) return { ok: false, error: `\`${key}\` is given twice. ${VALID_KEYS}` };
    const parsed = parseValue(key, value);
    if (typeof parsed === "object") return { ok: false, error: parsed.error };
    options[key] = parsed;
  }
  const prompt = trimmed.slice(group[0].length).trim();
  return { ok: true, options: options as TaskOptions, prompt };
}

function parseValue(key: OptionKey, value: string | undefined) {
  if (key === "thinking" || key === "context") {
    if (value === undefined || ON.has(value.toLowerCase())) return true;
    if (OFF.has(value.toLowerCase())) return false;
    return { error: `\`${key}\` is on or off (got \`${value}\`).` };
  }
  if (value === undefined || value === "") {
    return { error: `\`${key}\` needs a value: ${OPTION_HELP[key]}.` };
  }
  if (key === "effort") {
    const effort = EFFORTS.find((e) => e === value.toLowerCase());
    return effort ?? { error: `\`effort\` is low, medium or high (got \`${value}\`).` };
  }
  if (value.length > MAX_NAME || [...value].some((c) => c < " " || c === "<" || c === ">")) {
    return { error: `\`${key}\` must be a plain name of at most ${MAX_NAME} characters.` };
  }
  return value;
}

function unknownKey(key: string): string {
  const closest = closestKey(key);
  const hint = closest ? ` Did you mean \`${closest}\`?` : "";
  return `Unknown option \`${key}\`.${hint} ${VALID_KEYS}`;
}

/** The valid key nearest to a misspelled one: a prefix of it, or at most two edits away. */
export function closestKey(key: string): OptionKey | undefined {
  const prefixed = OPTION_KEYS.find((k) => key.length >= 3 && k.startsWith(key));
  if (prefixed) return prefixed;
  let best: OptionKey | undefined;
  let bestDistance = 3;
  for (const k of OPTION_KEYS) {
    const d = editDistance(key, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best;
}

/** Levenshtein distance; the strings here are a few characters long. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/** Layers of options, strongest first (inline, then personal defaults, then channel defaults). */
export function mergeOptions(...layers: readonly (TaskOptions | undefined)[]): TaskOptions {
  const merged: Record<string, unknown> = {};
  for (const layer of [...layers].reverse()) {
    for (const key of OPTION_KEYS) if (layer?.[key] !== undefined) merged[key] = layer[key];
  }
  return merged as TaskOptions;
}

export function formatOptions(options: TaskOptions): string {
  const parts = OPTION_KEYS.flatMap((key) => {
    const value = options[key];
    if (value === undefined) return [];
    return typeof value === "boolean" ? (value ? key : `${key}=off`) : `${key}=${value}`;
  });
  return parts.length === 0 ? "" : `[${parts.join(", ")}]`;
}

export function toCreateInput(options: TaskOptions): Partial<CreateTaskInput> {
  return {
    ...(options.model !== undefined ? { modelName: options.model } : {}),
    ...(options.agent !== undefined ? { agentId: options.agent } : {}),
    ...(options.effort !== undefined ? { reasoningEffort: options.effort } : {}),
    ...(options.thinking !== undefined ? { enableThinking: options.thinking } : {}),
    ...(options.context !== undefined ? { enableContextManager: options.context } : {}),
  };
}

/** The keys given, none of which a follow-up can apply (the service's continue call takes none). */
export function notForFollowUps(options: TaskOptions): OptionKey[] {
  return OPTION_KEYS.filter((k) => options[k] !== undefined);
}
