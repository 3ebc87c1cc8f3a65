/** Who created a channel, from Slack's conversations.info: its manager for `/task settings`. */
import type { WebClient } from "@slack/web-api";
import type { ChannelDirectory } from "../relay/preferences.ts";
import type { BotTokens } from "./workspace-tokens.ts";

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
