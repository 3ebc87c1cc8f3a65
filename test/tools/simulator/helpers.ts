/** Plain-fetch helpers for the simulator's own tests (the real client lives in src/service). */
import { createParser } from "eventsource-parser";
import type { Simulator } from "../../../tools/simulator/server.ts";

export interface Upload {
  name: string;
  data: string | Uint8Array;
  type?: string;
}

export interface Api {
  base: string;
  headers: Record<string, string>;
  create(fields: Record<string, string>, files?: Upload[], init?: RequestInit): Promise<Response>;
  createOk(prompt: string, fields?: Record<string, string>): Promise<Created>;
  follow(created: Created, prompt: string, files?: Upload[]): Promise<Response>;
  get(path: string, query?: Record<string, string | number | boolean>): Promise<Response>;
  post(path: string, query?: Record<string, string | number | boolean>): Promise<Response>;
  result(created: Created, query?: Record<string, string | number | boolean>): Promise<ResultBody>;
}

export interface Created {
  project_id: string;
  thread_id: string;
  agent_run_id: string;
}

export interface ResultBody {
  status: string;
  agent_run_id: string | null;
  response: { role: string; content: string; message_id: string } | null;
  has_code: boolean;
  has_files: boolean;
  code_blocks: { language: string; code: string; file_path?: string }[];
  files: {
    file_id: string;
    file_name: string;
    file_path?: string;
    file_type: string;
    file_size: number;
    included_inline: boolean;
    content?: string;
    encoding?: string;
    download_url?: string;
  }[];
  waited_seconds: number;
  pagination: Record<string, number | boolean>;
  error?: string;
}

export function formOf(fields: Record<string, string>, files: Upload[] = []): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const f of files) {
    const bytes = typeof f.data === "string" ? new TextEncoder().encode(f.data) : f.data;
    form.append(
      "files",
      new Blob([bytes as Uint8Array<ArrayBuffer>], { type: f.type ?? "" }),
      f.name,
    );
  }
  return form;
}

function qs(query: Record<string, string | number | boolean>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) p.set(k, String(v));
  const s = p.toString();
  return s === "" ? "" : `?${s}`;
}

export function api(sim: Simulator, key = sim.apiKey): Api {
  const base = `${sim.url}/api/v1/public`;
  const headers = { "X-API-Key": key };
  const self: Api = {
    base,
    headers,
    create: (fields, files = [], init = {}) =>
      fetch(`${base}/quick-action`, {
        method: "POST",
        headers,
        body: formOf(fields, files),
        ...init,
      }),
    async createOk(prompt, fields = {}) {
      const res = await self.create({ prompt, ...fields });
      if (res.status !== 200) throw new Error(`create: ${res.status} ${await res.text()}`);
      return (await res.json()) as Created;
    },
    follow: (created, prompt, files = []) =>
      fetch(
        `${base}/threads/${created.thread_id}/response${qs({ project_id: created.project_id })}`,
        {
          method: "POST",
          headers,
          body: formOf({ prompt }, files),
        },
      ),
    get: (path, query = {}) => fetch(`${base}${path}${qs(query)}`, { headers }),
    post: (path, query = {}) => fetch(`${base}${path}${qs(query)}`, { method: "POST", headers }),
    async result(created, query = {}) {
      const res = await self.get(`/threads/${created.thread_id}/response`, {
        project_id: created.project_id,
        ...query,
      });
      if (res.status !== 200) throw new Error(`result: ${res.status} ${await res.text()}`);
      return (await res.json()) as ResultBody;
    },
  };
  return self;
}

export interface SseEvent {
  event: string | undefined;
  data: string;
}

export interface SseRead {
  events: SseEvent[];
  comments: string[];
  raw: string;
  /** Set when the connection ended abruptly instead of being closed normally. */
  error: unknown;
}

/** Reads a whole SSE response; `onEvent` may return true to stop reading (and abort). */
export async function readSse(
  res: Response,
  onEvent?: (e: SseEvent, count: number) => boolean | undefined,
): Promise<SseRead> {
  const out: SseRead = { events: [], comments: [], raw: "", error: undefined };
  let stop = false;
  const parser = createParser({
    onEvent(e) {
      out.events.push({ event: e.event, data: e.data });
      if (onEvent?.({ event: e.event, data: e.data }, out.events.length) === true) stop = true;
    },
    onComment(c) {
      out.comments.push(c);
    },
  });
  const body = res.body;
  if (body === null) return out;
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      out.raw += value;
      parser.feed(value);
      if (stop) {
        await reader.cancel();
        break;
      }
    }
  } catch (error) {
    out.error = error;
  }
  return out;
}

export function json(e: SseEvent): unknown {
  try {
    return JSON.parse(e.data);
  } catch {
    return undefined;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The user-visible delta of an event in any of the three formats, or undefined. */
export function deltaOf(e: SseEvent): string | undefined {
  const v = json(e);
  if (!isRecord(v)) return undefined;
  if (v.type === "content" && typeof v.content === "string") return v.content;
  if (v.type === "assistant" && typeof v.content === "string" && typeof v.metadata === "string") {
    const meta: unknown = JSON.parse(v.metadata);
    if (!isRecord(meta) || meta.stream_status !== "chunk") return undefined;
    const inner: unknown = JSON.parse(v.content);
    return isRecord(inner) && typeof inner.content === "string" ? inner.content : undefined;
  }
  if (v.type === undefined && v.role === "assistant" && typeof v.content === "string") {
    return v.content;
  }
  return undefined;
}

export function textOf(read: SseRead): string {
  return read.events.map(deltaOf).join("");
}

export function statusEvents(read: SseRead): Record<string, unknown>[] {
  return read.events
    .map(json)
    .filter(isRecord)
    .filter((v) => v.type === "status" || v.status_type !== undefined);
}

export function streamOf(api: Api, c: Created, query: Record<string, string> = {}) {
  return api.get(`/threads/${c.thread_id}/response`, {
    project_id: c.project_id,
    realtime: true,
    ...query,
  });
}

/** Waits for a condition the simulator reports (no fixed sleeps). */
export async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}
