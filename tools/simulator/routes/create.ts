/** POST quick-action (create a task) and POST threads/{id}/response (continue it). */
import { type IncomingMessage, type ServerResponse } from "node:http";
import { parseDirectives, pickSticky } from "../directives.ts";
import { newId, type RequestInfo, type Thread } from "../engine.ts";
import { errorAnswer } from "../faults.ts";
import { continueForm, createForm } from "../validation.ts";
import type { SimContext } from "../context.ts";
import { failIfDirected, keyIndexOf, readValidForm } from "../context.ts";
import { sendDetail, sendError, sendJson } from "../http.ts";

export async function create(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const valid = await readValidForm(ctx, req, res, createForm);
  if (valid === undefined) return;
  const f = valid.fields;
  const prompt = f.prompt ?? "";
  const parsed = { prompt, ...parseDirectives(prompt) };
  const d = parsed.directives;
  if (failIfDirected(ctx, res, d.failCreate, `create:${prompt}`)) return;
  const request: RequestInfo = {
    kind: "create",
    prompt: f.prompt,
    agentId: f.agent_id,
    modelName: f.model_name,
    enableThinking: f.enable_thinking,
    reasoningEffort: f.reasoning_effort,
    enableContextManager: f.enable_context_manager,
    source: f.source,
    metadata: f.metadata,
    showInRecentTasks: f.show_in_recent_tasks,
    files: valid.form.files,
    ignoredFileFields: valid.form.ignoredFileFields,
    rawFields: Object.fromEntries(valid.form.fields),
    keyIndex: keyIndexOf(ctx, req),
  };
  const thread = ctx.engine.createThread(request, pickSticky(d), d.norun === true);
  if (d.failContinue !== undefined) thread.failContinue = { spec: d.failContinue, used: 0 };
  const runId = d.norun === true ? newId("run") : ctx.engine.startRun(thread, parsed, request).id;
  sendJson(res, 200, {
    success: true,
    project_id: thread.project.id,
    thread_id: thread.id,
    agent_run_id: runId,
    message: "Task created successfully and execution started",
  });
}

export async function followUp(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
  thread: Thread,
): Promise<void> {
  const valid = await readValidForm(ctx, req, res, continueForm);
  if (valid === undefined) return;
  const latest = ctx.engine.latestRun(thread);
  if (latest?.status === "running") {
    sendDetail(
      res,
      409,
      `An agent run is already in progress for this thread (${latest.id}); wait for it to end or stop it`,
    );
    return;
  }
  const prompt = valid.form.fields.get("prompt") ?? "";
  const parsed = { prompt, ...parseDirectives(prompt) };
  if (failIfDirected(ctx, res, parsed.directives.failContinue, `continue:${thread.id}:${prompt}`)) {
    return;
  }
  const inherited = thread.failContinue;
  if (
    parsed.directives.failContinue === undefined &&
    inherited !== undefined &&
    (inherited.spec.times === undefined || inherited.used < inherited.spec.times)
  ) {
    inherited.used++;
    sendError(res, errorAnswer(inherited.spec.status));
    return;
  }
  const request: RequestInfo = {
    kind: "continue",
    prompt: valid.form.fields.get("prompt"),
    files: valid.form.files,
    ignoredFileFields: valid.form.ignoredFileFields,
    rawFields: Object.fromEntries(valid.form.fields),
    keyIndex: keyIndexOf(ctx, req),
  };
  const run = ctx.engine.startRun(thread, parsed, request);
  sendJson(res, 200, {
    success: true,
    agent_run_id: run.id,
    status: "running",
    message: "Follow-up message added and execution started",
  });
}
