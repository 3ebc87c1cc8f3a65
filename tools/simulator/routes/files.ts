/** GET threads/{id}/files (the list, paged) and the download links of large files. */
import { type ServerResponse } from "node:http";
import { type Thread } from "../engine.ts";
import { filesQuery, issuesOf, queryRecord } from "../validation.ts";
import type { SimContext } from "../context.ts";
import { iso, paginate, sendDetail, sendJson, DOWNLOAD_PREFIX } from "../http.ts";

export function files(ctx: SimContext, res: ServerResponse, url: URL, thread: Thread): void {
  const parsed = filesQuery.safeParse(queryRecord(url.searchParams));
  if (!parsed.success) {
    sendDetail(res, 422, issuesOf(parsed.error, "query"));
    return;
  }
  const page = paginate(thread.files, parsed.data.page, parsed.data.page_size);
  sendJson(res, 200, {
    success: true,
    thread_id: thread.id,
    files: page.items.map((f) => ({
      file_id: f.fileId,
      file_name: f.name,
      file_size: f.content.length,
      file_type: f.type,
      file_path: f.path,
      created_at: iso(f.createdAt),
    })),
    pagination: page.pagination,
  });
}

export function download(ctx: SimContext, res: ServerResponse, pathname: string): void {
  const token = pathname.slice(DOWNLOAD_PREFIX.length).split("/")[0] ?? "";
  const entry = ctx.engine.downloads.get(token);
  if (entry === undefined) {
    sendDetail(res, 404, "File not found");
    return;
  }
  if (entry.expiresAt < Date.now()) {
    sendDetail(res, 403, "Request has expired");
    return;
  }
  const { file } = entry;
  res.writeHead(200, {
    "Content-Type": file.type,
    "Content-Length": String(file.content.length),
    "Content-Disposition": `attachment; filename*=UTF-8''${encodeURIComponent(file.name)}`,
  });
  res.end(file.content);
}
