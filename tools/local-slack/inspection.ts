// The test-facing inspection API: waiting on conditions (re-checked on every call, response_url POST
// and state change; never polls), readable summaries of the recorded calls for assertion messages,
// the text a thread shows, and call counts per method and workspace.
import type { EventEmitter } from "node:events";
import type { LocalSlackEvents, RecordedCall, SlackMessage, WaitOptions } from "./types.ts";
import { isRecord, str, truncate } from "./util.ts";

export function summarizeCall(c: RecordedCall): string {
  const parts: string[] = [];
  for (const key of ["channel", "channel_id", "ts", "thread_ts", "user", "name", "filename"]) {
    const v = str(c.args[key]);
    if (v !== undefined) parts.push(`${key}=${v}`);
  }
  const text = str(c.args.text) ?? str(c.args.markdown_text);
  if (text !== undefined) parts.push(`text=${JSON.stringify(truncate(text, 60))}`);
  if (Array.isArray(c.args.blocks)) parts.push(`blocks=${c.args.blocks.length}`);
  const outcome = c.response.ok
    ? "ok"
    : `${c.response.error ?? "error"}${c.fault ? ` (${c.fault})` : ""}`;
  return `#${c.seq} ${c.method} ${parts.join(" ")} -> ${c.status} ${outcome}`;
}

/** A readable list of the last `n` calls. */
export function describeCalls(calls: readonly RecordedCall[], n: number): string {
  if (calls.length === 0) return "No Slack API calls were recorded.";
  const recent = calls.slice(-n);
  return `Last ${recent.length} of ${calls.length} Slack API calls:\n${recent.map((c) => `  ${summarizeCall(c)}`).join("\n")}`;
}

/** What waitFor needs from the double. */
export interface WaitSource {
  readonly events: EventEmitter<LocalSlackEvents>;
  readonly closeListeners: Set<(error: Error) => void>;
  isClosed(): boolean;
  /** Appended to a timeout error: what the double saw. */
  describe(): string;
}

/**
 * Resolves with the first value `check` returns that is not undefined/null/false, re-evaluating after
 * every event of `source`; rejects on timeout or when the double closes.
 */
export function waitFor<T>(
  source: WaitSource,
  check: () => T | undefined | null | false,
  options: WaitOptions & { timeoutMs: number },
): Promise<T> {
  const what = options.description ?? `waitFor(${truncate(check.toString(), 200)})`;
  const { events } = source;
  return new Promise<T>((resolve, reject) => {
    const evaluate = (): boolean => {
      let value: T | undefined | null | false;
      try {
        value = check();
      } catch (error) {
        cleanup();
        reject(error);
        return true;
      }
      if (value === undefined || value === null || value === false) return false;
      cleanup();
      resolve(value);
      return true;
    };
    const onEvent = (): void => {
      evaluate();
    };
    const onClose = (error: Error): void => {
      cleanup();
      reject(new Error(`${what} aborted: ${error.message}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${what} timed out after ${options.timeoutMs} ms.\n${source.describe()}`));
    }, options.timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      events.off("call", onEvent);
      events.off("response_url", onEvent);
      events.off("change", onEvent);
      source.closeListeners.delete(onClose);
    };
    events.on("call", onEvent);
    events.on("response_url", onEvent);
    events.on("change", onEvent);
    source.closeListeners.add(onClose);
    if (!evaluate() && source.isClosed()) onClose(new Error("LocalSlack is closed"));
  });
}

/** A message of a thread as a person reads it (LocalSlack.threadText). */
export interface ThreadLine {
  readonly ts: string;
  readonly user: string;
  /** Written by a bot (any workspace's). */
  readonly bot: boolean;
  /** The text shown: its markdown, section and header blocks, else its (streamed) text. */
  readonly text: string;
  /** For messages created by chat.startStream. */
  readonly streaming_state?: SlackMessage["streaming_state"];
}

const TEXT_BLOCKS = new Set(["markdown", "section", "header"]);

/**
 * The text a person reads in a message: the text of its markdown, section and header blocks
 * (context blocks, status lines, are left out), or, without such blocks, its `text` (for a
 * streamed message, everything streamed into it).
 */
export function visibleText(m: SlackMessage): string {
  const parts: string[] = [];
  for (const block of m.blocks ?? []) {
    if (!isRecord(block) || typeof block.type !== "string" || !TEXT_BLOCKS.has(block.type)) {
      continue;
    }
    const text = block.text;
    if (typeof text === "string") parts.push(text);
    else if (isRecord(text) && typeof text.text === "string") parts.push(text.text);
  }
  return parts.length > 0 ? parts.join("\n\n") : m.text;
}

/** One method's calls: all of them, those answered ok, those answered 429. */
export interface CallCount {
  total: number;
  ok: number;
  rateLimited: number;
}

/**
 * Calls per method, of one workspace (or organisation) when `team` is given (the one its token
 * belongs to), from `fromIndex` on.
 */
export function countCalls(
  calls: readonly RecordedCall[],
  options: { readonly team?: string; readonly fromIndex?: number } = {},
): Record<string, CallCount> {
  const counts: Record<string, CallCount> = {};
  for (let i = options.fromIndex ?? 0; i < calls.length; i++) {
    const c = calls[i];
    if (!c) continue;
    if (options.team !== undefined && (c.team ?? c.enterprise) !== options.team) continue;
    const count = (counts[c.method] ??= { total: 0, ok: 0, rateLimited: 0 });
    count.total += 1;
    if (c.status === 200 && c.response.ok) count.ok += 1;
    if (c.fault === "ratelimited" || c.status === 429) count.rateLimited += 1;
  }
  return counts;
}
