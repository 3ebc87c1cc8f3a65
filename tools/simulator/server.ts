/**
 * A local simulator of the Task Execution Service: a real HTTP server implementing the six
 * public endpoints under `/api/v1/public` (one module per endpoint in routes/), scriptable by
 * prompt directives (directives.ts) and by `Simulator.injectFault`, with the behaviours the
 * deployed service has shown (three stream formats, `{detail}` errors, long polls).
 *
 * Several API keys may be accepted (`apiKeys`); each request records which one it carried.
 * Error statuses: 401 missing/invalid X-API-Key (every endpoint); 400 missing `project_id`,
 * unparsable multipart body, realtime refused (`[sim:norealtime]`), stop without a running
 * run ("No running agent for this thread"); 403 project does not own the thread; 404 unknown
 * thread, unknown project, unknown route or download; 405 known path, wrong method;
 * 409 follow-up while a run is running; 422 validation (list `detail`); 402/429/500/...
 * only when injected.
 */
import { EventEmitter, once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { SimContext } from "./context.ts";
import {
  Engine,
  type RequestRecord,
  type RunInfo,
  type SimulatorEvents,
  type ThreadInfo,
} from "./engine.ts";
import { DEFAULT_LIMITS } from "./uploads/uploads.ts";
import { handle } from "./handle.ts";
import { sendDetail } from "./http.ts";
import { type FaultSpec, optionsSchema, type SimulatorOptions } from "./options.ts";

export type { FaultEndpoint, FaultSpec, SimulatorOptions } from "./options.ts";
export type {
  GeneratedFileInfo,
  RequestInfo,
  RequestRecord,
  RunInfo,
  RunStatus,
  SimulatorEvents,
  ThreadInfo,
} from "./engine.ts";

export interface Simulator {
  /** Base URL (`base_url`): endpoints are at `url + "/api/v1/public/..."`. */
  url: string;
  /** The first accepted API key. */
  apiKey: string;
  apiKeys: readonly string[];
  /** Every request received, oldest first (capped by `maxRequestLog`); never the API key. */
  requests: RequestRecord[];
  /** The requests (of `requests`) that carried this accepted key. */
  requestsWithKey(key: string): RequestRecord[];
  runs(): RunInfo[];
  run(runId: string): RunInfo | undefined;
  threads(): ThreadInfo[];
  thread(threadId: string): ThreadInfo | undefined;
  /** Open `realtime=true` connections. */
  openStreams(): number;
  /** Long polls currently held. */
  pendingPolls(): number;
  injectFault(fault: FaultSpec): void;
  clearFaults(): void;
  /** Resolves once the run is no longer running (rejects after `timeoutMs`, default 10 s). */
  waitForRun(runId: string, timeoutMs?: number): Promise<RunInfo>;
  events: EventEmitter<SimulatorEvents>;
  /** Stops every run, stream, long poll and timer, and the server. */
  close(): Promise<void>;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const o = optionsSchema.parse(options);
  const ctx = createContext(o);
  const { engine, events, faults } = ctx;
  const server = createServer((req, res) => {
    handle(ctx, req, res).catch((error: unknown) => {
      ctx.log(`internal error on ${req.method} ${req.url}: ${String(error)}`);
      if (!res.headersSent) sendDetail(res, 500, "Internal server error");
      else res.destroy();
    });
  });
  server.listen(o.port, o.host);
  await once(server, "listening");
  const address = server.address() as AddressInfo;

  const sim: Simulator = {
    url: `http://${urlHost(o.host)}:${address.port}`,
    apiKey: o.apiKeys[0] ?? "",
    apiKeys: o.apiKeys,
    requests: ctx.requests,
    requestsWithKey: (key) => {
      const index = o.apiKeys.indexOf(key);
      return index < 0 ? [] : ctx.requests.filter((r) => r.keyIndex === index);
    },
    events,
    runs: () => [...engine.runsById.values()].map((r) => engine.runInfo(r)),
    run: (id) => {
      const run = engine.runsById.get(id);
      return run === undefined ? undefined : engine.runInfo(run);
    },
    threads: () => [...engine.threads.values()].map((t) => engine.threadInfo(t)),
    thread: (id) => {
      const thread = engine.threads.get(id);
      return thread === undefined ? undefined : engine.threadInfo(thread);
    },
    openStreams: () => engine.openStreams(),
    pendingPolls: () => engine.pendingPolls(),
    injectFault(fault) {
      faults.push({ spec: fault, left: fault.times ?? 1 });
    },
    clearFaults() {
      faults.length = 0;
    },
    waitForRun: (runId, timeoutMs = 10_000) => waitForRun(ctx, runId, timeoutMs),
    close: () => closeSimulator(ctx, server),
  };
  ctx.url = sim.url;
  return sim;
}

/** The engine and the state every request handler shares (the URL is set once listening). */
function createContext(o: SimContext["o"]): SimContext {
  const log = o.logger ?? (() => {});
  const events = new EventEmitter<SimulatorEvents>();
  events.setMaxListeners(0);
  const engine = new Engine({
    chunkDelayMs: o.chunkDelayMs,
    chunkChars: o.chunkChars,
    answerLength: o.answerLength,
    streamFormat: o.streamFormat,
    reconnect: o.reconnect,
    keepAliveMs: o.keepAliveMs,
    inlineLimitBytes: o.inlineLimitBytes,
    maxThreads: o.maxThreads,
    onChunk: o.onChunk,
    log,
    events,
  });
  return {
    o,
    limits: { ...DEFAULT_LIMITS, ...o.limits },
    log,
    events,
    engine,
    apiKeys: new Set(o.apiKeys),
    requests: [] as RequestRecord[],
    faults: [],
    timers: new Set(),
    links: new WeakMap(),
    url: "",
    closing: false,
  };
}

/** The host as a URL names it: a wildcard address becomes loopback, IPv6 goes in brackets. */
function urlHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

function waitForRun(ctx: SimContext, runId: string, timeoutMs: number): Promise<RunInfo> {
  const { engine, events } = ctx;
  const run = engine.runsById.get(runId);
  if (run === undefined) return Promise.reject(new Error(`unknown run ${runId}`));
  if (run.status !== "running") return Promise.resolve(engine.runInfo(run));
  return new Promise((resolve, reject) => {
    const onEnd = (info: RunInfo) => {
      if (info.id !== runId) return;
      clearTimeout(timer);
      events.off("runEnd", onEnd);
      resolve(info);
    };
    const timer = setTimeout(() => {
      events.off("runEnd", onEnd);
      reject(new Error(`run ${runId} still running after ${timeoutMs} ms`));
    }, timeoutMs);
    events.on("runEnd", onEnd);
  });
}

async function closeSimulator(ctx: SimContext, server: Server): Promise<void> {
  if (ctx.closing) return;
  ctx.closing = true;
  for (const timer of ctx.timers) clearTimeout(timer);
  ctx.timers.clear();
  ctx.engine.shutdown();
  const closed = once(server, "close");
  server.close();
  server.closeAllConnections();
  await closed;
}
