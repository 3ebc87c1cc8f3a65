/**
 * The local Slack refuses what Slack refuses in the newer message parts: a `context_actions`
 * block whose feedback buttons lack text or value, and message `metadata` without an
 * alphanumeric `event_type` or with payload values Slack does not take.
 */
import { describe, expect, it } from "vitest";
import { validateBlocks, validateMessageContent } from "../../../tools/local-slack/index.ts";
import { feedbackBlock } from "../../../src/view/feedback.ts";

const ref = { runId: "run-1", channelId: "C0CHANNEL1", threadTs: "1700000000.000100" };

describe("context_actions blocks", () => {
  it("accepts the app's feedback buttons", () => {
    expect(validateBlocks([feedbackBlock(ref)])).toBeUndefined();
  });

  it("refuses feedback buttons without a value, with a long label, or too many elements", () => {
    const block = feedbackBlock(ref) as unknown as {
      elements: Array<{ positive_button: { value?: string; text: { text: string } } }>;
    };
    const noValue = structuredClone(block);
    delete noValue.elements[0]?.positive_button.value;
    expect(validateBlocks([noValue])?.pointer).toBe("/blocks/0/elements/0/positive_button/value");
    const long = structuredClone(block);
    if (long.elements[0]) long.elements[0].positive_button.text.text = "x".repeat(76);
    expect(validateBlocks([long])?.error).toBe("invalid_blocks");
    const many = { ...block, elements: Array.from({ length: 6 }, () => block.elements[0]) };
    expect(validateBlocks([many])?.pointer).toBe("/blocks/0/elements");
    expect(validateBlocks([{ type: "context_actions", elements: [{ type: "button" }] }])).toEqual(
      expect.objectContaining({ error: "invalid_blocks" }),
    );
  });
});

describe("message metadata", () => {
  const message = (metadata: unknown) => validateMessageContent({ text: "done", metadata });

  it("accepts an event type and a payload of strings, numbers, booleans and objects", () => {
    expect(
      message({
        event_type: "task_completed",
        event_payload: { run_id: "r1", duration_ms: 1200, ok: true, service: { project: "p" } },
      }),
    ).toBeUndefined();
  });

  it("refuses metadata that is no object, a bad event type, or null values", () => {
    expect(message("task_completed")?.error).toBe("invalid_metadata_format");
    expect(message({ event_type: "task completed!", event_payload: {} })?.error).toBe(
      "invalid_metadata_format",
    );
    expect(message({ event_type: "task_completed", event_payload: { x: null } })?.error).toBe(
      "invalid_metadata_schema",
    );
  });
});
