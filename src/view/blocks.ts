/** The small pieces of Block Kit every view is built from. Pure. */
import type { z } from "zod";
import { truncate } from "./sanitize.ts";

export type Block = Record<string, unknown>;

export const plain = (text: string) => ({ type: "plain_text", text, emoji: true });
const mrkdwn = (text: string) => ({ type: "mrkdwn" as const, text });

/** Slack's limit on a section's text (Block Kit reference: section block, 3000 characters). */
const SECTION_MAX = 3000;

/** A section (or context) block: a Block, and a KnownBlock of @slack/types for the messages. */
export const section = (text: string, blockId?: string) => ({
  type: "section" as const,
  ...(blockId === undefined ? {} : { block_id: blockId }),
  text: mrkdwn(truncate(text, SECTION_MAX)),
});

/** A context block; its text, like a section's, holds at most 3,000 characters. */
export const context = (text: string) => ({
  type: "context" as const,
  elements: [mrkdwn(truncate(text, SECTION_MAX))],
});

export const button = (actionId: string, text: string, more?: Block): Block => ({
  type: "button",
  action_id: actionId,
  text: plain(text),
  ...more,
});

export const actions = (blockId: string, elements: Block[]): Block => ({
  type: "actions",
  block_id: blockId,
  elements,
});

/** An input block; every form here reads its element's value under the action id `value`. */
export const input = (blockId: string, label: string, element: Block, more?: Block): Block => ({
  type: "input",
  block_id: blockId,
  label: plain(label),
  ...more,
  element: { action_id: "value", ...element },
});

export const form = (
  callbackId: string,
  title: string,
  submit: string,
  blocks: Block[],
  more?: Block,
): Block => ({
  type: "modal",
  callback_id: callbackId,
  title: plain(title),
  submit: plain(submit),
  close: plain("Cancel"),
  ...more,
  blocks,
});

/** Every line of a text quoted (`> `), as Markdown and mrkdwn both read a quote. */
export const quoteLines = (text: string): string =>
  text
    .split("\n")
    .map((l) => `> ${l}`)
    .join("\n");

/** A button's value or a view's private_metadata as JSON that `schema` reads, or undefined. */
export function readValue<T>(value: string | undefined, schema: z.ZodType<T>): T | undefined {
  try {
    return schema.safeParse(JSON.parse(value ?? "")).data;
  } catch {
    return undefined; // not ours
  }
}

/** A date Slack shows in each reader's own time zone (the fallback, UTC), with the time or not. */
export function slackDate(ms: number, time = true): string {
  const iso = new Date(ms).toISOString();
  const fallback = time ? `${iso.slice(0, 16).replace("T", " ")} UTC` : iso.slice(0, 10);
  return `<!date^${Math.floor(ms / 1000)}^{date_short_pretty}${time ? " {time}" : ""}|${fallback}>`;
}

/** A modal that only shows something, closed with Close. */
export const modal = (title: string, blocks: Block[], more?: Block): Block => ({
  type: "modal",
  title: plain(title),
  close: plain("Close"),
  ...more,
  blocks,
});

/** A modal that only tells something: a form or shortcut of theirs that cannot be handled. */
export const noticeModal = (text: string): Block => modal("Task Agent", [section(text)]);

/** A menu's option; Slack shows at most 75 characters of its text. */
export const option = (value: string, text = value) => ({
  text: plain(truncate(text, 75)),
  value,
});
export const options = (values: readonly string[]) => values.map((v) => option(v));
