/** GET threads/{id}/history: the conversation, paged. */
import { type ServerResponse } from "node:http";
import { type Thread } from "../engine.ts";
import { historyQuery, issuesOf, queryRecord } from "../validation.ts";
import type { SimContext } from "../context.ts";
import { fileEntry } from "./result.ts";
import { iso, paginate, sendDetail, sendJson } from "../http.ts";

export function history(
  ctx: SimContext,
  res: ServerResponse,
  url: URL,
  thread: Thread,
  base: string,
): void {
  const parsed = historyQuery.safeParse(queryRecord(url.searchParams));
  if (!parsed.success) {
    sendDetail(res, 422, issuesOf(parsed.error, "query"));
    return;
  }
  const q = parsed.data;
  const messages: Record<string, unknown>[] = [];
  if (thread.noRun) {
    messages.push({
      message_id: `msg_${thread.id}_prompt`,
      role: "user",
      content: thread.request.prompt ?? "",
      created_at: iso(thread.createdAt),
    });
  }
  for (const run of thread.runs) {
    messages.push({
      message_id: run.userMessageId,
      role: "user",
      content: run.prompt,
      created_at: iso(run.createdAt),
    });
    if (q.include_status_messages) {
      messages.push({
        message_id: `${run.messageId}_start`,
        role: "status",
        content: JSON.stringify({ status_type: "thread_run_start", agent_run_id: run.id }),
        created_at: iso(run.createdAt),
      });
    }
    if (run.pos > 0 || run.status !== "running") {
      const completed = run.status === "completed";
      messages.push({
        message_id: run.messageId,
        role: "assistant",
        content: run.content(),
        created_at: iso(run.createdAt + 1),
        has_code: completed && run.codeBlocks.length > 0,
        has_files: completed && run.files.length > 0,
        ...(q.include_file_content && completed && run.files.length > 0
          ? { files: run.files.map((f) => fileEntry(ctx, f, true, base)) }
          : {}),
      });
    }
    if (q.include_status_messages && run.status !== "running") {
      messages.push({
        message_id: `${run.messageId}_end`,
        role: "status",
        content: JSON.stringify({
          status_type: "thread_run_end",
          status: run.status,
          agent_run_id: run.id,
          ...(run.error === undefined ? {} : { error: run.error }),
        }),
        created_at: iso(run.endedAt ?? run.createdAt),
      });
    }
  }
  const listed = q.compact
    ? messages.map((m) => ({ message_id: m.message_id, role: m.role, content: m.content }))
    : messages;
  const page = paginate(listed, q.page, q.page_size);
  sendJson(res, 200, {
    success: true,
    thread_id: thread.id,
    messages: page.items,
    pagination: page.pagination,
  });
}
