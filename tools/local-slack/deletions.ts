// Deleting in Slack, as a person or an admin does it in the client: a message is gone and the app
// is sent `message_deleted` (Slack's reference, "message_deleted message": `deleted_ts`, `hidden`,
// and the message as it was in `previous_message`); a channel is gone and the app is sent
// `channel_deleted`, or `group_deleted` for a private channel.
import type { EventInput } from "./slack-requests.ts";
import type { SlackMessage } from "./types.ts";
import { channelKind } from "./util.ts";

let seq = 0;
const stamp = () => `${Date.now().toString(36)}x${++seq}`;

/** The event Slack sends for `message` (its channel's kind decides `channel_type`). */
export function messageDeletedEvent(
  teamId: string,
  appId: string,
  message: SlackMessage,
  eventTs: string,
): EventInput {
  const kind = channelKind(message.channel);
  const previous: Record<string, unknown> = {
    type: "message",
    text: message.text,
    user: message.user,
    ts: message.ts,
    ...(message.thread_ts === undefined ? {} : { thread_ts: message.thread_ts }),
    ...(message.bot_id === undefined ? {} : { bot_id: message.bot_id }),
  };
  return {
    event_id: `EvDeleted${stamp()}`,
    team_id: teamId,
    api_app_id: appId,
    event: {
      type: "message",
      subtype: "message_deleted",
      hidden: true,
      channel: message.channel,
      channel_type: kind === "im" ? "im" : kind === "groups" ? "group" : "channel",
      ts: eventTs,
      deleted_ts: message.ts,
      event_ts: eventTs,
      previous_message: previous,
    },
  };
}

/** The event Slack sends when `channel` is deleted. */
export function channelDeletedEvent(teamId: string, appId: string, channel: string): EventInput {
  const type = channelKind(channel) === "groups" ? "group_deleted" : "channel_deleted";
  return {
    event_id: `EvChannelGone${stamp()}`,
    team_id: teamId,
    api_app_id: appId,
    event: { type, channel },
  };
}
