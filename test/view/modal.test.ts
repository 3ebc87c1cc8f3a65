/**
 * The New task modal as Slack would take it: every variant passes the local Slack's view rules
 * (Slack's "Reference: views" limits), and those rules refuse what Slack refuses.
 */
import { describe, expect, it } from "vitest";
import { quotePrompt, renderNewTaskModal } from "../../src/view/modal.ts";
import { validateView } from "../../tools/local-slack/index.ts";

const names = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

describe("the New task modal", () => {
  it("is a view Slack accepts, with menus or free text, from a channel or from nowhere", () => {
    for (const choices of [
      { models: [], agents: [] },
      { models: names(100, "model"), agents: names(3, "agent") },
      { models: ["a".repeat(150)], agents: [] },
    ]) {
      expect(validateView(renderNewTaskModal({ choices }))).toBeUndefined();
      expect(validateView(renderNewTaskModal({ choices, channelId: "C1" }))).toBeUndefined();
    }
  });

  it("quotes a long message within the prompt field's 3,000 characters", () => {
    const prompt = quotePrompt("line\n".repeat(2000));
    expect(prompt.length).toBeLessThanOrEqual(3000);
    const view = renderNewTaskModal({ prompt, choices: { models: [], agents: [] } });
    expect(validateView(view)).toBeUndefined();
  });

  it("cuts a long quoted message of emoji between two emoji, never inside one", () => {
    // Found by fuzzing: "> " and 1,497 emoji put the cut after the first half of one.
    const prompt = quotePrompt("😀".repeat(2000));
    expect(prompt.length).toBeLessThanOrEqual(3000);
    expect(prompt.isWellFormed()).toBe(true);
    expect(prompt).toMatch(/^> (😀)+…\n\n$/);
  });
});

describe("the local Slack's view rules", () => {
  const modal = renderNewTaskModal({ choices: { models: [], agents: [] } });

  it("refuses a title over 24 characters", () => {
    const view = {
      ...modal,
      title: { type: "plain_text", text: "A title far too long for Slack" },
    };
    expect(validateView(view)).toMatchObject({ pointer: "/view/title/text" });
  });

  it("refuses input blocks without a submit button", () => {
    const { submit: _submit, ...view } = modal;
    expect(validateView(view)).toMatchObject({ pointer: "/view/submit" });
  });

  it("refuses a menu of more than 100 options, and a repeated block id", () => {
    const tooMany = renderNewTaskModal({ choices: { models: names(101, "m"), agents: [] } });
    expect(validateView(tooMany)?.message).toContain("less than 101 items");
    const blocks = modal.blocks as unknown[];
    expect(validateView({ ...modal, blocks: [...blocks, blocks[0]] })?.message).toBe(
      "block_id must be unique",
    );
  });
});
