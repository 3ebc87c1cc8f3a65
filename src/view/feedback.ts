/** The feedback buttons under a finished answer (Slack's Block Kit reference: a `context_actions`
 * block with a `feedback_buttons` element), and what the person is told once a click counted. */
import type { KnownBlock } from "@slack/types";
import { z } from "zod";
import { readValue } from "./blocks.ts";
import type { TaskRef } from "./task-views.ts";

export const FEEDBACK_ACTION_ID = "task_feedback";

export type FeedbackKind = "positive" | "negative";

/** Which run's answer a click (or a Stop) is about. */
export type FeedbackRef = TaskRef & { readonly runId: string };

const Id = z.string().min(1).max(199);
const FeedbackValue = z.object({ k: z.enum(["positive", "negative"]), r: Id, c: Id, t: Id });

export function decodeFeedbackValue(value: string | undefined) {
  const v = readValue(value, FeedbackValue);
  return v && { kind: v.k, ref: { runId: v.r, channelId: v.c, threadTs: v.t } };
}

/** 👍 / 👎 under the answer; the labels are read out by screen readers. */
export function feedbackBlock(ref: FeedbackRef): KnownBlock {
  const button = (kind: FeedbackKind, emoji: string, label: string) => ({
    text: { type: "plain_text" as const, text: emoji, emoji: true },
    accessibility_label: label,
    value: JSON.stringify({ k: kind, r: ref.runId, c: ref.channelId, t: ref.threadTs }),
  });
  return {
    type: "context_actions",
    block_id: "task_feedback",
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

export function feedbackThanks(kind: FeedbackKind, changed: boolean): string {
  const what = kind === "positive" ? ":thumbsup: helpful" : ":thumbsdown: not helpful";
  return changed
    ? `Thanks: your feedback (${what}) is recorded for this answer.`
    : `Your feedback (${what}) was already recorded for this answer.`;
}
