// assistant.threads.*: the status line ("is thinking…") under an assistant thread.
import { ApiFailure, invalid } from "../errors.ts";
import { SLACK_LIMITS } from "../limits.ts";
import type { AssistantStatus, SlackArgs } from "../types.ts";
import { clone, isRecord, nonEmpty, str } from "../util.ts";
import type { MethodContext, MethodFamily } from "./registry.ts";

function setStatus(args: SlackArgs, { state, now }: MethodContext): Record<string, unknown> {
  const channel = state.channel(args.channel_id);
  const threadTs = nonEmpty(args.thread_ts);
  if (threadTs === undefined) throw new ApiFailure("invalid_thread_ts");
  const status = str(args.status);
  if (status === undefined) {
    throw invalid({
      error: "invalid_arguments",
      message: "missing required field: status",
      pointer: "/status",
    });
  }
  const loading = args.loading_messages;
  if (loading !== undefined) {
    if (!Array.isArray(loading) || loading.length > SLACK_LIMITS.loadingMessagesMax) {
      throw invalid({
        error: "invalid_arguments",
        message: `loading_messages must be an array of at most ${SLACK_LIMITS.loadingMessagesMax} items`,
        pointer: "/loading_messages",
      });
    }
  }
  const record: AssistantStatus = { channel, thread_ts: threadTs, status, at: now() };
  if (Array.isArray(loading)) record.loading_messages = clone(loading);
  state.assistantStatuses.push(record);
  if (status === "") state.currentStatus.delete(`${channel}/${threadTs}`);
  else state.currentStatus.set(`${channel}/${threadTs}`, status);
  return {};
}

/** assistant.threads.setTitle: the title the agent view lists a thread by. */
function setTitle(args: SlackArgs, { state }: MethodContext): Record<string, unknown> {
  const channel = state.channel(args.channel_id);
  const threadTs = nonEmpty(args.thread_ts);
  if (threadTs === undefined) throw new ApiFailure("invalid_thread_ts");
  const title = str(args.title);
  if (title === undefined || title === "") {
    throw invalid({
      error: "invalid_arguments",
      message: "missing required field: title",
      pointer: "/title",
    });
  }
  state.threadTitles.set(`${channel}/${threadTs}`, title);
  return {};
}

/**
 * assistant.threads.setSuggestedPrompts: the prompts the agent view offers (at most 4, each a
 * title and a message). In Slack's agent view it needs no `thread_ts` (the DM's own prompts).
 */
function setSuggestedPrompts(args: SlackArgs, { state }: MethodContext): Record<string, unknown> {
  const channel = state.channel(args.channel_id);
  const prompts = args.prompts;
  const good =
    Array.isArray(prompts) &&
    prompts.length >= 1 &&
    prompts.length <= 4 &&
    prompts.every(
      (p) =>
        nonEmpty(isRecord(p) ? p.title : undefined) &&
        nonEmpty(isRecord(p) ? p.message : undefined),
    );
  if (!good) {
    throw invalid({
      error: "invalid_arguments",
      message: "prompts must be 1 to 4 objects with a title and a message",
      pointer: "/prompts",
    });
  }
  const threadTs = nonEmpty(args.thread_ts);
  const title = nonEmpty(args.title);
  state.suggestedPrompts.push({
    channel,
    prompts: clone(prompts as Array<{ title: string; message: string }>),
    ...(threadTs ? { thread_ts: threadTs } : {}),
    ...(title ? { title } : {}),
  });
  return {};
}

export const assistantMethods: MethodFamily = {
  "assistant.threads.setSuggestedPrompts": {
    scopes: ["assistant:write"],
    handle: setSuggestedPrompts,
  },
  "assistant.threads.setTitle": { scopes: ["assistant:write"], handle: setTitle },
  // Since 2026-03 either scope is accepted (docs.slack.dev changelog "set status scope update").
  "assistant.threads.setStatus": { scopes: ["chat:write", "assistant:write"], handle: setStatus },
};
