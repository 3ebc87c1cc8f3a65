/** Who created a channel, from Slack's conversations.info: its manager for `/task settings`. */
import type { WebClient } from "@slack/web-api";
import type { ChannelDirectory } from "../relay/preferences.ts";

export function slackChannelDirectory(client: Pick<WebClient, "conversations">): ChannelDirectory {
  return {
    async channelCreator(channelId) {
      const res = await client.conversations.info({ channel: channelId });
      const creator = (res.channel as { creator?: unknown } | undefined)?.creator;
      return typeof creator === "string" && creator !== "" ? creator : undefined;
    },
  };
}
