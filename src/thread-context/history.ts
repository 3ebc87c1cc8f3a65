/**
 * What the thread context needs of Slack: a thread read back (the port the Slack layer
 * implements in src/slack/thread-history/; the relay passes it on).
 */

/** A message of a Slack thread, as the agent is shown it. */
export interface ThreadMessage {
  readonly ts: string;
  /** The author's display name (their user id when Slack would not say). */
  readonly author: string;
  readonly text: string;
  readonly fileNames: readonly string[];
}

/** Reads a Slack thread back (conversations.replies, within its rate budget). */
export interface ThreadHistory {
  /**
   * The thread's messages before `beforeTs`, oldest first, at most `limit` of the newest ones,
   * and how many older ones were left out. Rejects when Slack (or its budget) refused.
   */
  read(
    teamId: string,
    thread: { readonly channelId: string; readonly threadTs: string; readonly beforeTs: string },
    limit: number,
  ): Promise<{ readonly messages: readonly ThreadMessage[]; readonly omitted: number }>;
}
