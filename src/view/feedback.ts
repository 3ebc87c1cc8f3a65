/** The feedback buttons under a finished answer (Slack's `context_actions` block with a
 * `feedback_buttons` element, as in Slack's Block Kit reference: a positive and a negative button,
 * each with a `text` and a `value`), and what the person is told once a click counted. Pure. */
import type { KnownBlock } from "@slack/types";
import { z } from "zod";
import { readValue } from "./blocks.ts";

export const FEEDBACK_ACTION_ID = "task_feedback";
export const FEEDBACK_BLOCK_ID = "task_feedback";

export type FeedbackKind = "positive" | "negative";

/** Which run's answer a click is about. */
export interface FeedbackRef {
  readonly runId: string;
  readonly channelId: string;
  readonly threadTs: string;
}

export const encodeFeedbackValue = (kind: FeedbackKind, ref: FeedbackRef): string =>
  JSON.stringify({ k: kind, r: ref.runId, c: ref.channelId, t: ref.threadTs });

const Id = z.string().min(1).max(199);
const FeedbackValue = z.object({ k: z.enum(["positive", "negative"]), r: Id, c: Id, t: Id });

export function decodeFeedbackValue(
  value: string | undefined,
): { kind: FeedbackKind; ref: FeedbackRef } | undefined {
  const v = readValue(value, FeedbackValue);
  return v && { kind: v.k, ref: { runId: v.r, channelId: v.c, threadTs: v.t } };
}

/** 👍 / 👎 under the answer; the labels are read out by screen readers. */
export function feedbackBlock(ref: FeedbackRef): KnownBlock {
  const button = (kind: FeedbackKind, emoji: string, label: string) => ({
    text: { type: "plain_text" as const, text: emoji, emoji: true },
    accessibility_label: label,
    value: encodeFeedbackValue(kind, ref),
  });
  return {
    type: "context_actions",
    block_id: FEEDBACK_BLOCK_ID,
    elements: [
      {
        type: "feedback_buttons",
        action_id: FEEDBACK_ACTION_ID,
        positive_button: button("positive", "👍", "Good answer"),
        negative_button: button("negative", "👎", "Bad answer"),
      },
    ],
  };
}

/** The private note that tells the person their click counted. */
export function feedbackThanks(kind: FeedbackKind, changed: boolean): string {
  const what = kind === "positive" ? ":thumbsup: helpful" : ":thumbsdown: not helpful";
  return changed
    ? `Thanks: your feedback (${what}) is recorded for this answer.`
    : `Your feedback (${what}) was already recorded for this answer.`;
}
