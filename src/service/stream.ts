/**
 * The realtime stream of Get Task Results: server-sent events (eventsource-parser) in any of three
 * JSON shapes, as `StreamEvent`s; acknowledgements, comments, unknown events and bad lines dropped.
 */
import { createParser } from "eventsource-parser";
import { owned } from "../util/text.ts";
import { jsonValues } from "./responses.ts";
import { TaskServiceError } from "./errors.ts";

export type StreamEvent =
  /** `seq` when the service numbers chunks. */
  | { readonly type: "delta"; readonly text: string; readonly seq?: number }
  /** The whole text so far (agent-style `complete` repeats everything). */
  | { readonly type: "snapshot"; readonly text: string }
  | { readonly type: "status"; readonly status: string }
  /** The run is over, no status named (minimal shape's finish). */
  | { readonly type: "end"; readonly reason?: string }
  /** A tool the agent ran (its raw JSON arrived as content): progress, never text. */
  | { readonly type: "step"; readonly title: string };

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The most values one event's JSON may hold: JSON.parse of 1 MiB of `{},{},…` is many times that. */
const EVENT_VALUES_MAX = 20_000;

function parseJsonObject(text: string): Json | undefined {
  if (jsonValues(text, EVENT_VALUES_MAX) > EVENT_VALUES_MAX) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A field that is either an object or a JSON string of one. */
function objectField(v: unknown): Json | undefined {
  if (isObject(v)) return v;
  if (typeof v === "string" && v.trimStart().startsWith("{")) return parseJsonObject(v);
  return undefined;
}

const numeric = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isFinite(v) ? v : undefined;

const TOOL_ARGS = ["args", "arguments", "input", "parameters"] as const;
const TOOL_TARGETS = ["path", "file_path", "file", "filename", "url", "command", "query"] as const;

/** The step a tool call's raw JSON content stands for (`{"tool":"str_replace","args":{"path":…}}`). */
export function toolStep(text: string): string | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{") || !trimmed.endsWith("}")) return undefined;
  const obj = parseJsonObject(trimmed);
  if (obj === undefined) return undefined;
  const args = TOOL_ARGS.map((k) => objectField(obj[k])).find((a) => a !== undefined);
  const name = [obj.tool, obj.tool_name, args ? obj.name : undefined].find(
    (n): n is string => typeof n === "string" && n !== "",
  );
  if (name === undefined) return undefined;
  const target = TOOL_TARGETS.map((k) => args?.[k]).find(
    (t): t is string => typeof t === "string" && t !== "",
  );
  const shown =
    target === undefined ? "" : ` ${target.split("/").filter(Boolean).at(-1) ?? target}`;
  const title = `${name}${shown}`.replace(/\s+/g, " ");
  // Never cut an emoji in half; a string of its own (a slice would keep the event's text alive).
  return owned(
    title.length > 80 ? `${title.slice(0, 79).replace(/[\uD800-\uDBFF]$/, "")}…` : title,
  );
}

/** A content delta, or the step it stands for when it is a tool call's raw JSON. */
function contentEvent(text: string, seq: number | undefined): StreamEvent[] {
  if (text === "") return [];
  const step = toolStep(text);
  if (step !== undefined) return [{ type: "step", title: step }];
  return [{ type: "delta", text, ...(seq === undefined ? {} : { seq }) }];
}

/** One decoded JSON event; nothing for events with no user-visible meaning. */
export function normalizeObject(obj: Json): StreamEvent[] {
  const type = typeof obj.type === "string" ? obj.type : undefined;

  // 1. The contract's shape.
  if (type === "status" && typeof obj.status === "string") {
    return [{ type: "status", status: obj.status }];
  }
  if (type === "content" && typeof obj.content === "string") {
    return contentEvent(obj.content, numeric(obj.chunk_id) ?? numeric(obj.sequence));
  }

  // 2. Agent-framework shape: content and metadata are JSON strings.
  if (type === "assistant") {
    const metadata = objectField(obj.metadata) ?? {};
    if (metadata.is_acknowledgment === true || metadata.is_acknowledgement === true) return [];
    const text = (objectField(obj.content) ?? obj).content;
    if (typeof text !== "string") return [];
    if (metadata.stream_status === "complete") return [{ type: "snapshot", text }];
    return contentEvent(text, numeric(obj.sequence));
  }

  // 3. Minimal shape.
  if (type === undefined) {
    if (obj.role === "assistant" && typeof obj.content === "string") {
      return contentEvent(obj.content, undefined);
    }
    if (obj.status_type === "finish" || obj.status_type === "thread_run_end") {
      const reason = typeof obj.finish_reason === "string" ? obj.finish_reason : obj.status_type;
      return [{ type: "end", reason }];
    }
    if (typeof obj.status === "string" && Object.keys(obj).length <= 3) {
      return [{ type: "status", status: obj.status }];
    }
  }
  return [];
}

/** The `data` of one SSE message; tolerant of several `data:` lines glued together. */
export function normalizeData(data: string): StreamEvent[] {
  const trimmed = data.trim();
  if (trimmed === "" || trimmed === "[DONE]") return [];
  const obj = parseJsonObject(trimmed);
  if (obj !== undefined) return normalizeObject(obj);
  if (!trimmed.includes("\n")) return [];
  // Some servers omit the blank line between events: each line is then its own JSON object.
  return trimmed.split("\n").flatMap((line) => {
    const o = parseJsonObject(line.replace(/^data:\s?/, "").trim());
    return o === undefined ? [] : normalizeObject(o);
  });
}

/** The largest event the stream may carry (a chunk of text is a few hundred characters). */
const MAX_EVENT_CHARS = 1024 * 1024;

/**
 * An SSE byte stream (split anywhere; CRLF, LF or CR) as normalised events; a last event without
 * its blank line still counts. `maxBufferSize` bounds the event being read, comment lines
 * included: one past `maxEventChars` is a dropped connection (followed anew).
 */
export async function* parseSse(
  body: AsyncIterable<Uint8Array | string>,
  maxEventChars = MAX_EVENT_CHARS,
): AsyncGenerator<StreamEvent, void, undefined> {
  const pending: StreamEvent[] = [];
  let overflow = false;
  const parser = createParser({
    maxBufferSize: maxEventChars,
    onEvent: (message) => {
      for (const ev of normalizeData(message.data)) pending.push(ev);
    },
    onError: (err) => {
      if (err.type === "max-buffer-size-exceeded") overflow = true;
    },
  });
  const decoder = new TextDecoder("utf-8");
  for await (const chunk of body) {
    parser.feed(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
    if (pending.length > 0) yield* pending.splice(0);
    if (overflow) {
      throw new TaskServiceError({
        kind: "network",
        message: `A result stream event grew past ${maxEventChars.toLocaleString("en-US")} characters; the stream was dropped.`,
      });
    }
  }
  const tail = decoder.decode();
  if (tail !== "") parser.feed(tail);
  // Flush an event the server closed without terminating with a blank line.
  parser.feed("\n\n");
  parser.reset({ consume: true });
  if (pending.length > 0) yield* pending.splice(0);
}
