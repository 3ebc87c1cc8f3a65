/** What the thread context needs of Slack (implemented in src/slack/thread-history.ts). */

/** A message of a Slack thread, as the agent is shown it. */
export interface ThreadMessage {
  readonly ts: string;
  readonly author: string; // a display name (the user id when Slack would not say)
  readonly text: string;
  readonly fileNames: readonly string[];
}

/** Reads a Slack thread back (conversations.replies, within its rate budget). */
export interface ThreadHistory {
  /** The newest `limit` messages before `beforeTs` (the message that starts the task), oldest
   * first, and how many were left out. */
  read(
    teamId: string,
    thread: { readonly channelId: string; readonly threadTs: string; readonly beforeTs: string },
    limit: number,
  ): Promise<{ readonly messages: readonly ThreadMessage[]; readonly omitted: number }>;
}
