/** What the threads need from outside beyond the ports of runs (re-exported). */
import type { SlackFileRef } from "../store/types.ts";

export * from "../runs/ports.ts";
export type { ThreadHistory, ThreadMessage } from "../thread-context/history.ts";

/** Whether the app's bot is a member of a channel; throws when Slack cannot say. */
export type BotMembership = (teamId: string, channelId: string) => Promise<boolean>;

/** The id of a person's DM with the app (opened if need be); throws when Slack cannot open it. */
export type DirectMessages = (teamId: string, userId: string) => Promise<string>;

/** Shows a person their tasks again (App Home) after one changed; may wait and coalesce. */
export interface HomeRefresher {
  taskChanged(teamId: string, userId: string): void;
}

/** A file's bytes as Slack's file host started to send them, read once by the upload. */
export interface OpenedFile {
  /** Exact size in bytes (the response's Content-Length, or Slack's metadata). */
  readonly size: number;
  readonly contentType?: string | undefined;
  readonly body: AsyncIterable<Uint8Array>;
  /** Drops the download (the file is not sent after all). */
  cancel(): void;
}

/** Slack's file host, with the workspace's bot token; throws `FileUnavailableError` when it cannot. */
export interface SlackFileSource {
  /** A file's name, size and download address, when an event gave only its id. */
  describe(teamId: string, file: SlackFileRef): Promise<SlackFileRef>;
  open(teamId: string, file: SlackFileRef): Promise<OpenedFile>;
}

/** A file that cannot be read from Slack; the message says why, in words for the person. */
export class FileUnavailableError extends Error {
  override readonly name = "FileUnavailableError";
}
