/**
 * Whether the app is in a channel, asked of Slack (the local double, a real WebClient) with the
 * workspace's token: a burst shares one question, a channel it is in is remembered for ten
 * minutes, one it is not in is asked again each time (an invitation shows at once), and
 * Slack's refusal is passed on.
 */
import { WebClient } from "@slack/web-api";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { slackBotMembership } from "../../src/slack/channel-directory.ts";
import { type LocalSlack, startLocalSlack } from "../../tools/local-slack/index.ts";
import { silentLogger } from "../support/silent-logger.ts";

let slack: LocalSlack;
let client: WebClient;
beforeEach(async () => {
  slack = await startLocalSlack({
    teamId: "T0001",
    notInChannel: ["C0OUT"],
    unknownChannels: ["C0GONE"],
  });
  client = new WebClient(undefined, {
    slackApiUrl: slack.apiUrl,
    logger: silentLogger,
    retryConfig: { retries: 0 },
  });
});
afterEach(() => slack.close());

const asked = () => slack.calls.filter((c) => c.method === "conversations.info");

describe("whether the app is in a channel", () => {
  it("is remembered for ten minutes once it is, and asked each time while it is not", async () => {
    let now = 1_800_000_000_000;
    const tokenFor = async () => slack.botToken;
    const inChannel = slackBotMembership({ client, tokenFor, now: () => now });
    // A burst shares one question.
    const burst = await Promise.all([1, 2, 3].map(() => inChannel("T0001", "C0GENERAL")));
    expect(burst).toEqual([true, true, true]);
    expect(await inChannel("T0001", "C0GENERAL")).toBe(true);
    expect(await inChannel("T0001", "C0OUT")).toBe(false);
    expect(await inChannel("T0001", "C0OUT")).toBe(false);
    expect(asked().map((c) => [c.args.channel, c.token])).toEqual([
      ["C0GENERAL", slack.botToken],
      ["C0OUT", slack.botToken],
      ["C0OUT", slack.botToken],
    ]);
    // Invited: the next question says so.
    slack.notInChannel.delete("C0OUT");
    expect(await inChannel("T0001", "C0OUT")).toBe(true);
    // Removed from a channel it was in: known only after the ten minutes (a post says it before).
    slack.notInChannel.add("C0GENERAL");
    now += 9 * 60_000;
    expect(await inChannel("T0001", "C0GENERAL")).toBe(true);
    now += 2 * 60_000;
    expect(await inChannel("T0001", "C0GENERAL")).toBe(false);
  });

  it("passes Slack's refusal on (the caller lets the post say what is wrong)", async () => {
    const inChannel = slackBotMembership({ client, tokenFor: async () => slack.botToken });
    await expect(inChannel("T0001", "C0GONE")).rejects.toThrow(/channel_not_found/);
  });
});
