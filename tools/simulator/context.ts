/** Helpers every route uses: waiting, injected faults, finding a thread, reading a form. */

import { type IncomingMessage, type ServerResponse } from "node:http";
import type { z } from "zod";
import { type FailSpec } from "./directives.ts";
import { type RequestRecord, type Thread } from "./engine.ts";
import { errorAnswer } from "./faults.ts";
import type { GeneratedFile } from "./files.ts";
import { readForm } from "./uploads/form.ts";
import { BadBodyError, ClientGoneError, type FormBody } from "./uploads/uploads.ts";
import type { continueForm, createForm } from "./validation.ts";
import { issuesOf } from "./validation.ts";
import { sendDetail, sendError } from "./http.ts";
import type { FaultEndpoint, FaultSpec, ParsedOptions } from "./options.ts";
import type { EventEmitter } from "node:events";
import type { Engine, SimulatorEvents } from "./engine.ts";
import type { DEFAULT_LIMITS } from "./uploads/uploads.ts";

type Limits = typeof DEFAULT_LIMITS;

/** What every route of one simulator shares: its options, engine, state and timers. */
export interface SimContext {
  readonly o: ParsedOptions;
  readonly limits: Limits;
  readonly log: (line: string) => void;
  readonly events: EventEmitter<SimulatorEvents>;
  readonly engine: Engine;
  readonly apiKeys: ReadonlySet<string>;
  readonly requests: RequestRecord[];
  readonly faults: { spec: FaultSpec; left: number }[];
  readonly timers: Set<NodeJS.Timeout>;
  readonly links: WeakMap<GeneratedFile, { token: string; expiresAt: number }>;
  /** The simulator's own base URL (when a request's Host header cannot be trusted). */
  url: string;
  closing: boolean;
}

export function hold(
  ctx: SimContext,
  ms: number,
  res: ServerResponse,
  wake?: Set<() => void>,
): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      ctx.timers.delete(timer);
      wake?.delete(done);
      res.off("close", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    ctx.timers.add(timer);
    wake?.add(done);
    res.on("close", done);
  });
}

export function takeFault(
  ctx: SimContext,
  endpoint: FaultEndpoint,
  threadId: string,
): FaultSpec | undefined {
  const i = ctx.faults.findIndex(
    (f) =>
      (f.spec.endpoint === "any" || f.spec.endpoint === endpoint) &&
      (f.spec.threadId === undefined || f.spec.threadId === threadId),
  );
  const fault = ctx.faults[i];
  if (fault === undefined) return undefined;
  if (--fault.left <= 0) ctx.faults.splice(i, 1);
  return fault.spec;
}

export function lookup(
  ctx: SimContext,
  res: ServerResponse,
  url: URL,
  threadId: string,
): Thread | undefined {
  const projectId = url.searchParams.get("project_id");
  if (projectId === null || projectId === "") {
    sendDetail(res, 400, "Missing required query parameter: project_id");
    return undefined;
  }
  const thread = ctx.engine.threads.get(threadId);
  if (thread === undefined) {
    sendDetail(res, 404, `Thread not found: ${threadId}`);
    return undefined;
  }
  if (thread.project.id !== projectId) {
    if (ctx.engine.projects.has(projectId)) {
      sendDetail(res, 403, "Access denied: the project does not own this thread");
    } else {
      sendDetail(res, 404, `Project not found: ${projectId}`);
    }
    return undefined;
  }
  return thread;
}

export function failIfDirected(
  ctx: SimContext,
  res: ServerResponse,
  spec: FailSpec | undefined,
  key: string,
): boolean {
  if (spec === undefined || !ctx.engine.shouldFail(spec, key)) return false;
  sendError(res, errorAnswer(spec.status));
  return true;
}

export async function readValidForm<S extends typeof createForm | typeof continueForm>(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
  schema: S,
): Promise<{ form: FormBody; fields: z.output<S> } | undefined> {
  let form: FormBody;
  try {
    form = await readForm(req, ctx.limits);
  } catch (error) {
    if (error instanceof BadBodyError) {
      sendDetail(res, 400, `There was an error parsing the body: ${error.message}`);
      return undefined;
    }
    if (error instanceof ClientGoneError) return undefined;
    throw error;
  }
  const raw = Object.fromEntries(form.fields);
  const parsed = schema.safeParse(raw);
  const issues = [...(parsed.success ? [] : issuesOf(parsed.error, "body")), ...form.issues];
  if (raw.prompt === undefined && form.files.length === 0 && form.issues.length === 0) {
    issues.unshift({
      loc: ["body", "prompt"],
      msg: "Field required: prompt is required when no files are sent",
      type: "missing",
    });
  }
  if (issues.length > 0 || !parsed.success) {
    sendDetail(res, 422, issues);
    return undefined;
  }
  return { form, fields: parsed.data as z.output<S> };
}

export function baseUrl(ctx: SimContext, req: IncomingMessage): string {
  const host = req.headers.host;
  return host === undefined || !/^[\w.:[\]-]+$/.test(host) ? ctx.url : `http://${host}`;
}

/** The API key a request carries (the first X-API-Key header), if any. */
export function givenKey(req: IncomingMessage): string | undefined {
  const key = req.headers["x-api-key"];
  return Array.isArray(key) ? key[0] : key;
}

/** Which accepted key a request carries: its position in `apiKeys` (never the key itself). */
export function keyIndexOf(ctx: SimContext, req: IncomingMessage): number | undefined {
  const index = ctx.o.apiKeys.indexOf(givenKey(req) ?? "");
  return index < 0 ? undefined : index;
}
