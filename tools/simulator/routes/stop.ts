/** POST threads/{id}/agent/stop: stop the running agent. */
import { type ServerResponse } from "node:http";
import { type Thread } from "../engine.ts";
import type { SimContext } from "../context.ts";
import { sendDetail, sendJson } from "../http.ts";

export function stop(ctx: SimContext, res: ServerResponse, thread: Thread): void {
  const run = ctx.engine.latestRun(thread);
  if (run === undefined || run.status !== "running") {
    sendDetail(res, 400, "No running agent for this thread");
    return;
  }
  run.finish("stopped", undefined);
  sendJson(res, 200, {
    success: true,
    agent_run_id: run.id,
    status: "stopped",
    message: "Agent run stopped",
  });
}
