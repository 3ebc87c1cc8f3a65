// Slack's documented message and Block Kit limits, and the error codes the double answers when one is exceeded.
// Source: Slack's method pages (docs.slack.dev/reference/methods/chat.postMessage, chat.update, chat.startStream)
// and the Block Kit reference (docs.slack.dev/reference/block-kit/blocks). One is measured, not documented: the
// bytes of a streamed message (`streamMessageBytesMax`).

/** Slack's documented limits enforced by the double (see the header of this file). */
export const SLACK_LIMITS = {
  /** `text` argument. Slack docs say "truncated" above 40k; chat.update documents msg_too_long. We reject. */
  textMax: 40_000,
  blocksMax: 50,
  blockIdMax: 255,
  sectionTextMax: 3_000,
  sectionFieldsMax: 10,
  sectionFieldTextMax: 2_000,
  headerTextMax: 150,
  contextElementsMax: 10,
  actionsElementsMax: 25,
  buttonTextMax: 75,
  buttonValueMax: 2_000,
  buttonUrlMax: 3_000,
  actionIdMax: 255,
  /** Total characters across all `markdown` blocks of one payload. */
  markdownBlocksTotalMax: 12_000,
  /** `markdown_text` argument (postMessage, postEphemeral, update, start/append/stopStream). */
  markdownTextMax: 12_000,
  /**
   * UTF-8 bytes of text one streamed message takes, over all its chat.startStream,
   * appendStream and stopStream calls: its markdown and its task updates' titles, details and
   * outputs. Past it Slack answers `msg_too_long` (on append or stop). Measured against Slack
   * by other projects at roughly 10,600–11,300 bytes; not documented by Slack. The double
   * refuses at the low end.
   */
  streamMessageBytesMax: 10_600,
  loadingMessagesMax: 10,
} as const;

/** Error codes for the limits where Slack's observed answer differs from (or is not in) its docs. */
export interface LimitErrorCodes {
  /**
   * More than 50 blocks. Default `invalid_blocks` (what Slack answers in practice, with the response_metadata
   * message "must be less than 50 items"); Slack's chat.postMessage method page also lists `msg_blocks_too_many`.
   */
  tooManyBlocks: string;
  /**
   * More than 12,000 characters across the `markdown` blocks of one payload. Default `msg_blocks_too_long`
   * (the code Slack returns for oversized markdown-block payloads, bolt-js#2509); some callers see `invalid_blocks`.
   */
  markdownBlocksTooLong: string;
}

export const DEFAULT_ERROR_CODES: LimitErrorCodes = {
  tooManyBlocks: "invalid_blocks",
  markdownBlocksTooLong: "msg_blocks_too_long",
};

/** Block types Slack accepts in messages (the KnownBlock union of @slack/types). */
export const KNOWN_BLOCK_TYPES = new Set([
  "actions",
  "alert",
  "card",
  "carousel",
  "container",
  "context",
  "context_actions",
  "data_table",
  "divider",
  "file",
  "header",
  "image",
  "input",
  "markdown",
  "plan",
  "rich_text",
  "section",
  "table",
  "task_card",
  "video",
]);
