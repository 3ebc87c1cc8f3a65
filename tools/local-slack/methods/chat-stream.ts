// chat.startStream, chat.appendStream, chat.stopStream: Slack's native streamed messages, including
// the recipient rules outside DMs, the bytes one streamed message takes, and streams that Slack
// ends: after `streamLifetimeMs` (about five minutes on Slack) or when a person presses the stop
// control (LocalSlack.expireStream).
import { streamedTextBytes, validateBlocks, validateStreamContent } from "../block-kit.ts";
import { ApiFailure, check, invalid } from "../errors.ts";
import { SLACK_LIMITS } from "../limits.ts";
import type { StoredMessage, Workspace } from "../state.ts";
import type { SlackArgs } from "../types.ts";
import { clone, isRecord, nonEmpty, str } from "../util.ts";
import type { MethodContext, MethodFamily } from "./registry.ts";

const CHAT_WRITE = ["chat:write"];

/** The bot's message that is still streaming, or the error Slack gives once the stream ended. */
function streaming(state: Workspace, channel: string, ts: unknown): StoredMessage {
  const message = state.expireIfOld(state.ownMessage(channel, ts, "cant_update_message"));
  if (message.streaming_state !== "in_progress") {
    throw new ApiFailure(message.streamEndError ?? "message_not_in_streaming_state");
  }
  return message;
}

/**
 * Slack refuses a streamed message whose text passes about 10,600–11,300 UTF-8 bytes, task
 * updates included, with `msg_too_long` (measured against Slack by other projects; not
 * documented by Slack), whatever the characters: Japanese or emoji text reaches it at a third
 * of the characters Latin text needs. Nothing of a refused call is kept.
 */
function bytesAfter(message: StoredMessage | undefined, args: SlackArgs): number {
  const max = SLACK_LIMITS.streamMessageBytesMax;
  const bytes = (message?.streamBytes ?? 0) + streamedTextBytes(args);
  if (bytes > max) {
    check({
      error: "msg_too_long",
      message: `the streamed message would hold ${bytes} bytes of text; at most ${max} allowed`,
    });
  }
  return bytes;
}

/** Appends markdown_text and chunks to the streamed text, recording every chunk. */
function applyChunks(
  message: StoredMessage,
  markdownText: string | undefined,
  chunks: unknown,
): void {
  message.chunks ??= [];
  if (markdownText !== undefined) {
    message.text += markdownText;
    message.chunks.push({ type: "markdown_text", text: markdownText });
  }
  if (Array.isArray(chunks)) {
    for (const chunk of chunks) {
      message.chunks.push(clone(chunk));
      if (isRecord(chunk) && chunk.type === "markdown_text" && typeof chunk.text === "string") {
        message.text += chunk.text;
      }
    }
  }
  message.markdown_text = message.text;
}

function startStream(args: SlackArgs, { state, codes }: MethodContext): Record<string, unknown> {
  const channel = state.channel(args.channel);
  state.requireMember(channel);
  const threadTs = nonEmpty(args.thread_ts);
  if (threadTs === undefined) {
    throw invalid({
      error: "invalid_arguments",
      message: "missing required field: thread_ts",
      pointer: "/thread_ts",
    });
  }
  if (!channel.startsWith("D")) {
    if (nonEmpty(args.recipient_user_id) === undefined) {
      throw new ApiFailure("missing_recipient_user_id");
    }
    if (nonEmpty(args.recipient_team_id) === undefined) {
      throw new ApiFailure("missing_recipient_team_id");
    }
  }
  const markdownText = str(args.markdown_text);
  check(validateStreamContent(args, codes));
  const display = args.task_display_mode;
  if (display !== undefined && display !== "timeline" && display !== "plan") {
    throw invalid({
      error: "invalid_arguments",
      message: "task_display_mode must be timeline or plan",
      pointer: "/task_display_mode",
    });
  }
  const bytes = bytesAfter(undefined, args);
  const message = state.storeBotMessage(channel, "");
  if (display !== undefined) message.task_display_mode = display;
  message.streamBytes = bytes;
  message.thread_ts = threadTs;
  message.streaming_state = "in_progress";
  message.streamStartedAt = state.now();
  applyChunks(message, markdownText, args.chunks);
  state.clearStatus(channel, threadTs);
  return { channel, ts: message.ts };
}

function appendStream(args: SlackArgs, { state, codes }: MethodContext): Record<string, unknown> {
  const channel = state.channel(args.channel);
  const message = streaming(state, channel, args.ts);
  const markdownText = str(args.markdown_text);
  if (markdownText === undefined && !Array.isArray(args.chunks)) {
    throw invalid({ error: "no_text", message: "markdown_text or chunks is required" });
  }
  check(validateStreamContent(args, codes));
  message.streamBytes = bytesAfter(message, args);
  applyChunks(message, markdownText, args.chunks);
  return { channel, ts: message.ts };
}

function stopStream(args: SlackArgs, { state, codes }: MethodContext): Record<string, unknown> {
  const channel = state.channel(args.channel);
  const message = streaming(state, channel, args.ts);
  const markdownText = str(args.markdown_text);
  check(validateStreamContent(args, codes));
  if (args.blocks !== undefined) check(validateBlocks(args.blocks, "/blocks", codes));
  message.streamBytes = bytesAfter(message, args);
  applyChunks(message, markdownText, args.chunks);
  if (Array.isArray(args.blocks)) message.blocks = clone(args.blocks);
  if (args.metadata !== undefined) message.metadata = clone(args.metadata);
  message.streaming_state = "completed";
  return { channel, ts: message.ts, message: state.wire(message) };
}

export const chatStreamMethods: MethodFamily = {
  "chat.startStream": { scopes: CHAT_WRITE, handle: startStream },
  "chat.appendStream": { scopes: CHAT_WRITE, handle: appendStream },
  "chat.stopStream": { scopes: CHAT_WRITE, handle: stopStream },
};
