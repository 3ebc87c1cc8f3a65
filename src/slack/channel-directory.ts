/** What Slack says of a channel (its creator, who is in it), and a person's DM with the app. */
import type { WebClient } from "@slack/web-api";
import type { ChannelDirectory } from "../threads/preferences.ts";
import type { BotMembership, DirectMessages } from "../threads/ports.ts";
import type { BotTokens } from "./workspace-tokens.ts";
import { slackErrorCode } from "../view/errors.ts";
import { remembered } from "./remembered.ts";

export function slackChannelDirectory(
  client: Pick<WebClient, "conversations">,
  tokens: Pick<BotTokens, "botToken">,
): ChannelDirectory {
  return {
    async channelCreator(teamId, channelId) {
      const token = await tokens.botToken(teamId);
      const res = await client.conversations.info({ token, channel: channelId });
      const creator: unknown = res.channel?.creator;
      return typeof creator === "string" && creator !== "" ? creator : undefined;
    },
  };
}

/**
 * Whether the app's bot is in a channel (`conversations.info`'s `is_member`). A yes is remembered
 * 10 minutes (it is rarely removed, and a post then says so); a no is asked again next time.
 */
export function slackBotMembership(options: {
  readonly client: Pick<WebClient, "conversations">;
  readonly tokenFor: (teamId: string) => Promise<string>;
  readonly now?: () => number;
}): BotMembership {
  const { client, tokenFor, now } = options;
  const known = remembered<boolean>({ ttlMs: 10 * 60_000, max: 10_000, now, keep: (m) => m });
  return (teamId, channelId) =>
    known(`${teamId}:${channelId}`, async () => {
      const token = await tokenFor(teamId);
      const res = await client.conversations.info({ token, channel: channelId });
      return res.channel?.is_member === true;
    });
}

/** A person's DM with the app (`conversations.open`, scope `im:write`). */
export function slackDirectMessages(options: {
  readonly client: Pick<WebClient, "conversations">;
  readonly tokenFor: (teamId: string) => Promise<string>;
}): DirectMessages {
  return async (teamId, userId) => {
    const token = await options.tokenFor(teamId);
    const res = await options.client.conversations.open({ token, users: userId });
    const id = res.channel?.id;
    if (!id) throw new Error("conversations.open returned no channel");
    return id;
  };
}

/** Members asked for per page, and pages read before the app gives up (20,000 members). */
const MEMBERS_PAGE = 1000;
const MEMBER_PAGES = 20;

/**
 * From conversations.members (paged): "not-found" when the bot cannot see the channel (a private
 * one it is not in: posting there says what to do), "unknown" past 20,000 members.
 */
export async function channelMembership(
  client: Pick<WebClient, "conversations">,
  channelId: string,
  userId: string,
): Promise<"member" | "not-member" | "not-found" | "unknown"> {
  let cursor: string | undefined;
  for (let page = 0; page < MEMBER_PAGES; page++) {
    const res = await client.conversations
      .members({ channel: channelId, limit: MEMBERS_PAGE, cursor })
      .catch((err: unknown) => {
        if (slackErrorCode(err) === "channel_not_found") return undefined;
        throw err;
      });
    if (!res) return "not-found";
    if (res.members?.includes(userId)) return "member";
    cursor = res.response_metadata?.next_cursor || undefined;
    if (cursor === undefined) return "not-member";
  }
  return "unknown";
}
