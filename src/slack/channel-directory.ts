/**
 * What Slack says of a channel: who created it (conversations.info), its manager for `/task
 * settings`; and whether a person is in it (conversations.members), before a task is posted there.
 */
import type { WebClient } from "@slack/web-api";
import type { ChannelDirectory } from "../threads/preferences.ts";
import type { BotTokens } from "./workspace-tokens.ts";
import { slackErrorCode } from "../view/errors.ts";

export function slackChannelDirectory(
  client: Pick<WebClient, "conversations">,
  tokens: Pick<BotTokens, "botToken">,
): ChannelDirectory {
  return {
    async channelCreator(teamId, channelId) {
      const token = await tokens.botToken(teamId);
      const res = await client.conversations.info({ token, channel: channelId });
      const creator = (res.channel as { creator?: unknown } | undefined)?.creator;
      return typeof creator === "string" && creator !== "" ? creator : undefined;
    },
  };
}

/** Members asked for per page, and pages read, before the app gives up (20,000 members). */
const MEMBERS_PAGE = 1000;
const MEMBER_PAGES = 20;

/**
 * Whether `userId` is a member of `channelId`, from Slack's conversations.members (paged):
 * "not-found" when the bot cannot see the channel (a private one it is not in: posting there
 * says what to do), "unknown" past 20,000 members. Only the member ids are read.
 */
export async function channelMembership(
  client: Pick<WebClient, "conversations">,
  channelId: string,
  userId: string,
): Promise<"member" | "not-member" | "not-found" | "unknown"> {
  let cursor: string | undefined;
  for (let page = 0; page < MEMBER_PAGES; page++) {
    let res: Awaited<ReturnType<WebClient["conversations"]["members"]>>;
    try {
      res = await client.conversations.members({
        channel: channelId,
        limit: MEMBERS_PAGE,
        ...(cursor ? { cursor } : {}),
      });
    } catch (err) {
      if (slackErrorCode(err) === "channel_not_found") return "not-found";
      throw err;
    }
    if (res.members?.includes(userId)) return "member";
    cursor = res.response_metadata?.next_cursor || undefined;
    if (cursor === undefined) return "not-member";
  }
  return "unknown";
}
