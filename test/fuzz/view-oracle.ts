/**
 * What the view fuzz targets share: the oracle every view is held to (Slack's own rules, as the
 * local Slack's validateView checks them, and nothing pings or leaks), and the configured
 * model and agent names that fill the menus.
 */
import fc from "fast-check";
import { expect } from "vitest";
import { validateView } from "../../tools/local-slack/index.ts";
import { NO_DEFAULT } from "../../src/view/defaults.ts";
import {
  inline,
  leaksJs,
  overlongTextObject,
  parsedTexts,
  rawMention,
  shownTexts,
} from "./arbitraries.ts";

/**
 * Slack accepts the view, no text object passes 3,000 characters, nothing pings (but the
 * `allowed` mentions the app writes on purpose), nothing shows a JavaScript value, and no
 * text has half an emoji unless its input did.
 */
export function expectGoodView(
  view: unknown,
  wellFormed: boolean,
  allowed: readonly string[] = [],
): void {
  expect(validateView(view)).toBeUndefined();
  expect(overlongTextObject(view)).toBeUndefined();
  for (const text of parsedTexts(view)) expect(rawMention(text, allowed)).toBeUndefined();
  for (const text of shownTexts(view)) {
    expect(leaksJs(text)).toBe(false);
    if (wellFormed) expect(text.isWellFormed()).toBe(true);
  }
}

/** Whether every text in a value is whole (no half of an emoji). */
export const allWellFormed = (v: unknown): boolean => shownTexts(v).every((t) => t.isWellFormed());

/**
 * Names as config.ts reads TASK_MODELS / TASK_AGENTS: trimmed, distinct, at most 150 characters,
 * at most 100 (and not the defaults menu's own "no default" value).
 */
export const configNames = fc.uniqueArray(
  fc
    .oneof(inline, fc.string({ unit: "grapheme", maxLength: 150 }))
    .map((s) => s.replace(/,/g, "").slice(0, 150).trim())
    .filter((s) => s !== "" && s.isWellFormed() && s !== NO_DEFAULT),
  { maxLength: 100 },
);
