// chat.postMessage, chat.update, chat.delete, chat.postEphemeral, chat.getPermalink: messages the bot
// writes, validated against Slack's limits before they are stored.
import { validateMessageContent } from "../block-kit.ts";
import { ApiFailure, check } from "../errors.ts";
import type { StoredMessage } from "../state.ts";
import type { SlackArgs, SlackEphemeral } from "../types.ts";
import { clone, nonEmpty, str } from "../util.ts";
import type { Caller } from "../tenancy.ts";
import type { MethodContext, MethodFamily } from "./registry.ts";

const CHAT_WRITE = ["chat:write"];

function postMessage(
  args: SlackArgs,
  { state, codes }: MethodContext,
  _team: string,
  caller?: Caller,
): Record<string, unknown> {
  const channel = state.channel(args.channel);
  state.requireMember(channel);
  check(validateMessageContent(args, codes));
  const threadTs = nonEmpty(args.thread_ts);
  const markdownText = str(args.markdown_text);
  const message = state.storeBotMessage(channel, str(args.text) ?? markdownText ?? "", caller?.bot);
  if (threadTs !== undefined) message.thread_ts = threadTs;
  if (markdownText !== undefined) message.markdown_text = markdownText;
  if (Array.isArray(args.blocks)) message.blocks = clone(args.blocks);
  if (args.metadata !== undefined) message.metadata = clone(args.metadata);
  if (str(args.reply_broadcast) === "true") message.reply_broadcast = true;
  state.clearStatus(channel, threadTs);
  return { channel, ts: message.ts, message: state.wire(message) };
}

/** The new content of an updated message, as Slack applies it. */
function applyUpdate(message: StoredMessage, args: SlackArgs): void {
  const markdownText = str(args.markdown_text);
  if (markdownText !== undefined) {
    message.text = markdownText;
    message.markdown_text = markdownText;
    delete message.blocks;
    return;
  }
  const text = str(args.text);
  if (text !== undefined) message.text = text;
  delete message.markdown_text;
  // Slack keeps the previous blocks when `blocks` is omitted; an empty array removes them.
  if (Array.isArray(args.blocks)) {
    if (args.blocks.length === 0) delete message.blocks;
    else message.blocks = clone(args.blocks);
  }
}

function update(
  args: SlackArgs,
  { state, codes }: MethodContext,
  _team: string,
  caller?: Caller,
): Record<string, unknown> {
  const channel = state.channel(args.channel);
  const bot = caller?.bot.userId ?? state.botUserId;
  const message = state.ownMessage(channel, args.ts, "cant_update_message", bot);
  check(validateMessageContent(args, codes));
  applyUpdate(message, args);
  if (args.metadata !== undefined) message.metadata = clone(args.metadata);
  message.edited = { user: bot, ts: state.nextTs() };
  return { channel, ts: message.ts, text: message.text, message: state.wire(message) };
}

function postEphemeral(args: SlackArgs, { state, codes }: MethodContext): Record<string, unknown> {
  const channel = state.channel(args.channel);
  const user = nonEmpty(args.user);
  if (user === undefined) throw new ApiFailure("user_not_found");
  state.requireMember(channel);
  check(validateMessageContent(args, codes));
  const markdownText = str(args.markdown_text);
  const ephemeral: SlackEphemeral = {
    channel,
    user,
    message_ts: state.nextTs(),
    text: str(args.text) ?? markdownText ?? "",
  };
  const threadTs = nonEmpty(args.thread_ts);
  if (threadTs !== undefined) ephemeral.thread_ts = threadTs;
  if (markdownText !== undefined) ephemeral.markdown_text = markdownText;
  if (Array.isArray(args.blocks)) ephemeral.blocks = clone(args.blocks);
  state.ephemerals.push(ephemeral);
  return { message_ts: ephemeral.message_ts };
}

function getPermalink(args: SlackArgs, { state }: MethodContext): Record<string, unknown> {
  const channel = state.channel(args.channel);
  const ts = nonEmpty(args.message_ts);
  if (ts === undefined) throw new ApiFailure("message_not_found");
  const message = state.messages.get(channel)?.get(ts);
  if (message?.deleted) throw new ApiFailure("message_not_found");
  const p = `p${ts.replace(".", "")}`;
  const thread =
    message?.thread_ts !== undefined && message.thread_ts !== ts
      ? `?thread_ts=${message.thread_ts}&cid=${channel}`
      : "";
  return { channel, permalink: `${state.teamUrl}archives/${channel}/${p}${thread}` };
}

export const chatMethods: MethodFamily = {
  "chat.postMessage": { scopes: CHAT_WRITE, handle: postMessage },
  "chat.update": { scopes: CHAT_WRITE, handle: update },
  "chat.delete": {
    scopes: CHAT_WRITE,
    handle: (args, { state }, _team, caller) => {
      const channel = state.channel(args.channel);
      const bot = caller?.bot.userId ?? state.botUserId;
      const message = state.ownMessage(channel, args.ts, "cant_delete_message", bot);
      message.deleted = true;
      return { channel, ts: message.ts };
    },
  },
  "chat.postEphemeral": { scopes: CHAT_WRITE, handle: postEphemeral },
  "chat.getPermalink": { handle: getPermalink },
};
