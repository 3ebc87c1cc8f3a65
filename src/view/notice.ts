/**
 * A modal that only tells something (no input, a Close button): what a person sees when a form
 * or shortcut of theirs cannot be handled (an older version's, or a workspace the app does not
 * serve). Pure.
 */
import { truncate } from "./sanitize.ts";

/** Slack's limit on a section's text (Block Kit reference: section block, 3000 characters). */
const SECTION_MAX = 3000;

export function noticeModal(text: string): Record<string, unknown> {
  return {
    type: "modal",
    title: { type: "plain_text", text: "Task Agent" },
    close: { type: "plain_text", text: "Close" },
    blocks: [{ type: "section", text: { type: "mrkdwn", text: truncate(text, SECTION_MAX) } }],
  };
}
