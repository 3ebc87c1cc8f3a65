// agents.sessions.setStatus: the lifecycle of an agent session scoped to a thread (active,
// processing, suspended, closed), with the title a new session takes (at most 200 characters).
import { ApiFailure, invalid } from "../errors.ts";
import type { SlackArgs } from "../types.ts";
import { nonEmpty, str } from "../util.ts";
import type { MethodContext, MethodFamily } from "./registry.ts";

const STATUSES = new Set(["active", "processing", "suspended", "closed"]);
const TITLE_MAX = 200;

function setStatus(args: SlackArgs, { state, now }: MethodContext): Record<string, unknown> {
  const channel = state.channel(args.channel_id);
  const threadTs = nonEmpty(args.thread_ts);
  if (threadTs === undefined) throw new ApiFailure("invalid_thread_ts");
  const status = str(args.status) ?? "";
  if (!STATUSES.has(status)) {
    throw invalid({
      error: "invalid_arguments",
      message: "status must be one of active, processing, suspended, closed",
      pointer: "/status",
    });
  }
  const title = str(args.title);
  if (title !== undefined && title.length > TITLE_MAX) {
    throw invalid({
      error: "invalid_arguments",
      message: `must be less than ${TITLE_MAX + 1} characters`,
      pointer: "/title",
    });
  }
  const key = `${channel}/${threadTs}`;
  const session = state.sessions.get(key);
  // The title is taken when the session is created only.
  const kept = session?.title ?? title ?? "";
  state.sessions.set(key, { channel, thread_ts: threadTs, status, title: kept, at: now() });
  state.sessionHistory.push({ channel, thread_ts: threadTs, status, title: kept, at: now() });
  return { status, title: kept };
}

export const agentsMethods: MethodFamily = {
  "agents.sessions.setStatus": { scopes: ["assistant:write", "chat:write"], handle: setStatus },
};
