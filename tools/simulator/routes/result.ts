/** GET threads/{id}/response: the result, long-polled or streamed (realtime). */
import { type ServerResponse } from "node:http";
import type { z } from "zod";
import { type Directives } from "../directives.ts";
import { type CodeBlockOut, nowMs, type Run, type Thread } from "../engine.ts";
import type { GeneratedFile } from "../files.ts";
import { issuesOf, queryRecord, resultQuery } from "../validation.ts";
import type { SimContext } from "../context.ts";
import { failIfDirected, hold } from "../context.ts";
import { gone, iso, paginate, sendDetail, sendJson, DOWNLOAD_PREFIX } from "../http.ts";

/**
 * A file's entry in a result. A file sent inline whatever its size (`bigfiles`) is given a
 * mark in place of its content when `later` is given: its content is written as it is sent.
 */
export function fileEntry(
  ctx: SimContext,
  file: GeneratedFile,
  inline: boolean,
  base: string,
  later?: Map<string, GeneratedFile>,
) {
  const big = file.alwaysInline !== true && file.content.length >= ctx.o.inlineLimitBytes;
  const entry: Record<string, unknown> = {
    file_id: file.fileId,
    file_name: file.name,
    file_path: file.path,
    file_type: file.type,
    file_size: file.content.length,
    included_inline: inline && !big,
  };
  if (inline && !big) {
    if (file.alwaysInline === true && later !== undefined) {
      const mark = `@@sim-content-${later.size}@@`;
      later.set(mark, file);
      entry.content = mark;
    } else {
      entry.content = file.text ? file.content.toString("utf8") : file.content.toString("base64");
    }
    entry.encoding = file.text ? "utf-8" : "base64";
  }
  if (big) {
    let link = ctx.links.get(file);
    if (link === undefined || link.expiresAt - Date.now() < ctx.o.downloadTtlMs / 2) {
      link = ctx.engine.downloadToken(file, ctx.o.downloadTtlMs);
      ctx.links.set(file, link);
    }
    entry.download_url = `${base}${DOWNLOAD_PREFIX}${link.token}/${encodeURIComponent(file.name)}?expires=${Math.floor(link.expiresAt / 1000)}`;
  }
  return entry;
}

export function resultBody(
  ctx: SimContext,
  thread: Thread,
  run: Run | undefined,
  q: z.infer<typeof resultQuery>,
  waitedMs: number,
  base: string,
  later?: Map<string, GeneratedFile>,
) {
  const common = {
    success: true,
    thread_id: thread.id,
    project_id: thread.project.id,
    waited_seconds: Math.round(waitedMs) / 1000,
  };
  if (run === undefined) {
    return {
      ...common,
      agent_run_id: null,
      status: "no_run",
      response: null,
      has_code: false,
      has_files: false,
      code_blocks: [],
      files: [],
      pagination: paginate([], q.page, q.page_size).pagination,
      message: "No agent run found for this thread",
    };
  }
  const completed = run.status === "completed";
  const files = completed ? run.files : [];
  const codeBlocks: CodeBlockOut[] = completed ? run.codeBlocks : [];
  const page = paginate(files, q.page, q.page_size);
  return {
    ...common,
    agent_run_id: run.id,
    status: run.status,
    response: {
      role: "assistant",
      content: run.content(),
      message_id: run.messageId,
      created_at: iso(run.createdAt),
      metadata: { agent_run_id: run.id, model: run.request.modelName ?? "sim-default" },
    },
    has_code: codeBlocks.length > 0,
    has_files: files.length > 0,
    code_blocks: codeBlocks,
    files: page.items.map((file) => fileEntry(ctx, file, q.include_file_content, base, later)),
    pagination: page.pagination,
    ...(run.error === undefined ? {} : { error: run.error }),
  };
}

export async function result(
  ctx: SimContext,
  res: ServerResponse,
  url: URL,
  thread: Thread,
  base: string,
): Promise<void> {
  const parsed = resultQuery.safeParse(queryRecord(url.searchParams));
  if (!parsed.success) {
    sendDetail(res, 422, issuesOf(parsed.error, "query"));
    return;
  }
  const q = parsed.data;
  const run = ctx.engine.latestRun(thread);
  if (run !== undefined && run.directives.failPoll !== undefined) {
    if (failIfDirected(ctx, res, run.directives.failPoll, `poll:${run.id}`)) return;
  }
  const directives: Directives = run?.directives ?? thread.sticky;
  if (q.realtime && directives.norealtime === "refuse") {
    sendDetail(res, 400, "Realtime streaming is not available");
    return;
  }
  if (q.realtime && directives.abuse === "json") {
    endlessJson(res);
    return;
  }
  if (q.realtime && directives.norealtime !== "json") {
    res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache, no-transform",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    });
    res.flushHeaders();
    if (run === undefined) {
      res.end(`data: ${JSON.stringify({ type: "status", status: "no_run" })}\n\n`);
      return;
    }
    run.openStream(res);
    return;
  }
  const started = nowMs();
  if (run !== undefined && run.status === "running" && q.timeout > 0) {
    await hold(ctx, q.timeout * 1000, res, run.waiters);
  }
  if (gone(res) || ctx.closing) return;
  const later = new Map<string, GeneratedFile>();
  const body = resultBody(ctx, thread, run, q, nowMs() - started, base, later);
  if (later.size === 0) sendJson(res, 200, body);
  else await sendWithContent(res, JSON.stringify(body), later);
}

/** `abuse=json`: the stream answered as a JSON result whose text never ends. */
function endlessJson(res: ServerResponse): void {
  res.writeHead(200, { "Content-Type": "application/json" });
  res.write('{"success":true,"status":"running","response":{"role":"assistant","content":"');
  const piece = "x".repeat(64 * 1024);
  const write = (): void => {
    while (!res.destroyed && res.write(piece));
  };
  res.on("drain", write);
  res.on("error", () => {});
  write();
}

/** Slices of a file's bytes written as base64 at once: a multiple of 3, so the pieces join. */
const BASE64_SLICE = 3 * 1024 * 1024;

/**
 * A JSON answer whose files' marks are replaced by their content as it is written, a slice at
 * a time: a page of files of hundreds of MB is never one string.
 */
async function sendWithContent(
  res: ServerResponse,
  text: string,
  later: ReadonlyMap<string, GeneratedFile>,
): Promise<void> {
  res.writeHead(200, { "Content-Type": "application/json" });
  res.on("error", () => {});
  const write = async (piece: string): Promise<boolean> => {
    if (res.destroyed) return false;
    if (!res.write(piece)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          res.off("drain", done).off("close", done);
          resolve();
        };
        res.on("drain", done).on("close", done);
      });
    }
    return !res.destroyed;
  };
  let at = 0;
  for (const [mark, file] of later) {
    const found = text.indexOf(mark, at);
    if (found < 0) continue;
    if (!(await write(text.slice(at, found)))) return;
    for (let i = 0; i < file.content.length; i += BASE64_SLICE) {
      const slice = file.content.subarray(i, i + BASE64_SLICE);
      // `bigfiles` are binary: base64, whose slices of whole 3-byte groups join.
      if (!(await write(slice.toString("base64")))) return;
    }
    at = found + mark.length;
  }
  if (await write(text.slice(at))) res.end();
}
