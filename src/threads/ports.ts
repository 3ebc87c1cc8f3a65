/**
 * What the threads need from the outside beyond the ports of runs (which it re-exports):
 * attached files from Slack's file host, App Home refreshes, a thread's history, whether the
 * app is in a channel.
 */
import type { SlackFileRef } from "../store/types.ts";

export * from "../runs/ports.ts";

/** Whether the app's bot is a member of a channel; throws when Slack cannot say. */
export type BotMembership = (teamId: string, channelId: string) => Promise<boolean>;

/** The id of a person's DM with the app (opened if need be); throws when Slack cannot open it. */
export type DirectMessages = (teamId: string, userId: string) => Promise<string>;

/** Shows a person their tasks again (App Home) after one changed; may wait and coalesce. */
export interface HomeRefresher {
  taskChanged(teamId: string, userId: string): void;
}

/** Reads a Slack thread back, for a task asked inside it (its contract: thread-context/). */
export type { ThreadHistory, ThreadMessage } from "../thread-context/history.ts";

/** A file's bytes as Slack's file host started to send them. */
export interface OpenedFile {
  /** Exact size in bytes (the response's Content-Length, or Slack's metadata). */
  readonly size: number;
  readonly contentType?: string | undefined;
  /** The bytes, read once, as the upload to the service sends them. */
  readonly body: AsyncIterable<Uint8Array>;
  /** Drops the download (when the file is not sent after all). */
  cancel(): void;
}

/** Where attached files are read from: Slack's file host, with the workspace's bot token. */
export interface SlackFileSource {
  /**
   * A file with the details an event may leave out (only its id given): its name, size and
   * download address, from Slack. Throws `FileUnavailableError` when Slack would not say.
   */
  describe(teamId: string, file: SlackFileRef): Promise<SlackFileRef>;
  /**
   * Opens a file's download. Throws `FileUnavailableError` (whose message is the reason shown
   * to the person) when it cannot be read.
   */
  open(teamId: string, file: SlackFileRef): Promise<OpenedFile>;
}

/** A file that cannot be read from Slack; the message says why, in words for the person. */
export class FileUnavailableError extends Error {
  override readonly name = "FileUnavailableError";
}
