/** The simulator's records: requests, runs and threads as tests and the routes see them. */
import { randomBytes } from "node:crypto";
import type { EventEmitter } from "node:events";
import { performance } from "node:perf_hooks";
import { type Directives, type ReconnectMode, type StreamFormat } from "./directives.ts";
import type { UploadedFile } from "./uploads/uploads.ts";
import { type FinalStatus } from "./stream/sse.ts";

export type RunStatus = "running" | FinalStatus;

export interface EngineOptions {
  chunkDelayMs: number;
  chunkChars: number;
  answerLength: number;
  streamFormat: StreamFormat;
  reconnect: ReconnectMode;
  keepAliveMs: number;
  inlineLimitBytes: number;
  maxThreads: number;
  onChunk: ((runId: string, chunk: string, atMs: number) => void) | undefined;
  log: (line: string) => void;
  events: EventEmitter<SimulatorEvents>;
}

/** One request the simulator received (the API key is never recorded). */
export interface RequestRecord {
  method: string;
  path: string;
  /** Query parameters; values of names that look like secrets are redacted. */
  query: Record<string, string>;
  /** Epoch milliseconds when the request arrived. */
  at: number;
  /** HTTP status answered (set when the response is over). */
  status?: number;
  durationMs?: number;
  /**
   * Which accepted key it carried: its position in `apiKeys` (the key itself is never kept);
   * undefined for a request with no key or an unknown one.
   */
  keyIndex?: number;
  /** The W3C trace context it carried (`traceparent`), when the client traces its requests. */
  traceparent?: string;
}

/** Events of `Simulator.events`. */
export interface SimulatorEvents {
  /** A request was answered (or its connection closed). */
  request: [record: RequestRecord];
  /** A run started (task or follow-up). */
  run: [info: RunInfo];
  /** A content chunk was produced; `atMs` is epoch milliseconds with sub-ms precision. */
  chunk: [runId: string, chunk: string, atMs: number];
  /** A run ended (completed, failed or stopped). */
  runEnd: [info: RunInfo];
  /** A stream connection opened / closed (for any reason). */
  streamOpen: [runId: string];
  streamClose: [runId: string, reason: "ended" | "client" | "dropped" | "shutdown"];
}

/** The parsed body of a Create Task or Continue Conversation request. */
export interface RequestInfo {
  kind: "create" | "continue";
  prompt: string | undefined;
  agentId?: string | undefined;
  modelName?: string | undefined;
  enableThinking?: boolean;
  reasoningEffort?: "low" | "medium" | "high";
  enableContextManager?: boolean;
  source?: "web" | "mobile" | "widget" | undefined;
  /** The parsed `metadata` JSON. */
  metadata?: unknown;
  showInRecentTasks?: boolean;
  files: UploadedFile[];
  /** Names of file parts not named `files` (ignored). */
  ignoredFileFields: string[];
  /** Every text field as received. */
  rawFields: Record<string, string>;
  /** Which accepted API key it was sent with: its position in `apiKeys` (never the key). */
  keyIndex?: number | undefined;
}

export interface GeneratedFileInfo {
  fileId: string;
  name: string;
  path: string;
  type: string;
  size: number;
}

export interface RunInfo {
  id: string;
  threadId: string;
  projectId: string;
  /** 1 for the task's run, 2.. for follow-ups. */
  turn: number;
  followUp: boolean;
  status: RunStatus;
  /** The prompt as received (directives included). */
  prompt: string;
  /** The prompt without `[sim:...]` directives. */
  promptText: string;
  directives: Directives;
  directiveWarnings: string[];
  format: StreamFormat;
  reconnect: ReconnectMode;
  /** Content produced so far (the final answer once completed). */
  content: string;
  /** Length of the content the run will have produced when it ends normally. */
  finalLength: number;
  chunks: number;
  createdAt: number;
  endedAt: number | undefined;
  stoppedAt: number | undefined;
  error: string | undefined;
  request: RequestInfo;
  files: GeneratedFileInfo[];
  codeBlocks: number;
  streamsOpened: number;
  openStreams: number;
  pendingPolls: number;
}

export interface ThreadInfo {
  id: string;
  projectId: string;
  createdAt: number;
  runIds: string[];
  /** Created with `[sim:norun]`: the thread has no run. */
  noRun: boolean;
  request: RequestInfo;
  files: GeneratedFileInfo[];
}

export interface CodeBlockOut {
  language: string;
  code: string;
  file_path?: string;
}

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(9).toString("base64url")}`;
}

export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}
