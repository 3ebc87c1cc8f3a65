// conversations.info, .join, .members, .replies, .history: channels, membership and reading
// threads back; conversations.open: a person's DM with the app.
import { ApiFailure } from "../errors.ts";
import type { SlackArgs } from "../types.ts";
import { channelKind, nonEmpty, str } from "../util.ts";
import { cursorPage } from "./paging.ts";
import type { MethodFamily } from "./registry.ts";

/** The read/history scope of the conversation type (channels:, groups:, im:). */
function scopeFor(suffix: "read" | "history"): (args: SlackArgs) => string[] {
  return (args) => [`${channelKind(str(args.channel) ?? str(args.channel_id) ?? "C")}:${suffix}`];
}

function lastPage(): Record<string, unknown> {
  return { has_more: false, response_metadata: { next_cursor: "" } };
}

export const conversationsMethods: MethodFamily = {
  "conversations.open": {
    // A DM with one person (the only kind the app opens); Slack also opens group DMs.
    scopes: ["im:write"],
    handle: (args, { state }) => {
      const users = (nonEmpty(args.users) ?? "").split(",").filter((u) => u !== "");
      const [user] = users;
      if (user === undefined) throw new ApiFailure("users_list_not_supplied");
      if (users.length > 1) throw new ApiFailure("method_not_supported_for_channel_type");
      if (!state.users.has(user)) throw new ApiFailure("user_not_found");
      return { channel: { id: state.channel(user) }, no_op: true, already_open: true };
    },
  },
  "conversations.info": {
    scopes: scopeFor("read"),
    handle: (args, { state }) => ({ channel: state.channelObject(state.channel(args.channel)) }),
  },
  "conversations.join": {
    scopes: ["channels:join"],
    handle: (args, { state }) => {
      const channel = state.channel(args.channel);
      if (channelKind(channel) !== "channels") {
        throw new ApiFailure("method_not_supported_for_channel_type");
      }
      const alreadyIn = !state.notInChannel.has(channel);
      state.notInChannel.delete(channel);
      return alreadyIn
        ? { channel: state.channelObject(channel), already_in_channel: true }
        : { channel: state.channelObject(channel) };
    },
  },
  "conversations.members": {
    scopes: scopeFor("read"),
    handle: (args, { state }) => {
      const channel = state.channel(args.channel);
      // A private conversation the bot is not in is not found, as in Slack.
      if (channelKind(channel) !== "channels" && state.notInChannel.has(channel)) {
        throw new ApiFailure("channel_not_found");
      }
      const members = state.channelMemberIds(channel);
      const limit = Math.min(Math.max(Number(str(args.limit) ?? 100) || 100, 1), 1000);
      const { page, next } = cursorPage(members, args.cursor, limit);
      return { members: page, response_metadata: { next_cursor: next } };
    },
  },
  "conversations.replies": {
    scopes: scopeFor("history"),
    handle: (args, { state }) => {
      const channel = state.channel(args.channel);
      state.requireMember(channel);
      const ts = nonEmpty(args.ts);
      const all = ts === undefined ? [] : state.threadMessages(channel, ts);
      if (all.length === 0) throw new ApiFailure("thread_not_found");
      // Like Slack: the parent first, then the replies, bounded by `latest`/`oldest`
      // (`inclusive` keeps the bounds), in pages of `limit` with an opaque cursor.
      const inclusive = str(args.inclusive) === "true" || args.inclusive === true;
      const within = (m: { ts: string }, bound: unknown, after: boolean) => {
        const b = nonEmpty(bound);
        if (b === undefined) return true;
        const d = Number(m.ts) - Number(b);
        return (after ? d > 0 : d < 0) || (inclusive && d === 0);
      };
      const messages = all.filter(
        (m) => within(m, args.latest, false) && within(m, args.oldest, true),
      );
      const limit = Math.min(1000, Math.max(1, Number(str(args.limit) ?? 1000) || 1000));
      const { page, next } = cursorPage(messages, args.cursor, limit);
      return {
        messages: page.map((m) => state.wire(m)),
        has_more: next !== "",
        response_metadata: { next_cursor: next },
      };
    },
  },
  "conversations.history": {
    scopes: scopeFor("history"),
    handle: (args, { state }) => {
      const channel = state.channel(args.channel);
      state.requireMember(channel);
      const messages = state.channelMessages(channel, false).reverse();
      return { messages: messages.map((m) => state.wire(m)), ...lastPage() };
    },
  },
};
