/** The small pieces of Block Kit every view is built from. Pure. */
import { truncate } from "./sanitize.ts";

export type Block = Record<string, unknown>;

export const plain = (text: string) => ({ type: "plain_text", text, emoji: true });
export const mrkdwn = (text: string) => ({ type: "mrkdwn", text });

/** Slack's limit on a section's text (Block Kit reference: section block, 3000 characters). */
const SECTION_MAX = 3000;

export const section = (text: string, blockId?: string): Block => ({
  type: "section",
  ...(blockId === undefined ? {} : { block_id: blockId }),
  text: mrkdwn(truncate(text, SECTION_MAX)),
});

/** A date Slack shows in each reader's own time zone (the fallback, UTC), with the time or not. */
export function slackDate(ms: number, time = true): string {
  const iso = new Date(ms).toISOString();
  const fallback = time ? `${iso.slice(0, 16).replace("T", " ")} UTC` : iso.slice(0, 10);
  return `<!date^${Math.floor(ms / 1000)}^{date_short_pretty}${time ? " {time}" : ""}|${fallback}>`;
}

/**
 * A modal that only tells something (no input, a Close button): what a person sees when a form
 * or shortcut of theirs cannot be handled (an older version's, or a workspace the app does not
 * serve).
 */
export function noticeModal(text: string): Block {
  return {
    type: "modal",
    title: { type: "plain_text", text: "Task Agent" },
    close: { type: "plain_text", text: "Close" },
    blocks: [section(text)],
  };
}
