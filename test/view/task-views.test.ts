/**
 * The History and Files views stay within Slack's view limits whatever the service returns:
 * a page of a thousand files, messages of any length, names full of Markdown.
 */
import { describe, expect, it } from "vitest";
import {
  decodeViewState,
  encodeViewState,
  renderFilesView,
  renderHistoryView,
} from "../../src/view/task-views.ts";
import { validateView } from "../../tools/local-slack/index.ts";

const state = { kind: "files" as const, channelId: "C1", threadTs: "1.2", page: 1 };

describe("task views within Slack's limits", () => {
  it("shows one page of files, however many the service returns", () => {
    const files = Array.from({ length: 1000 }, (_, i) => ({
      file_id: `file_${i}`,
      file_name: `${"very-long-name-".repeat(20)}${i}.csv`,
      file_size: i * 1000,
    }));
    const view = renderFilesView(state, files, { page: 1, hasNext: true, totalPages: 50 });
    expect(validateView(view)).toBeUndefined();
    expect((view.blocks as unknown[]).length).toBeLessThanOrEqual(100);
  });

  it("cuts long messages to a block's 3,000 characters and neutralises mentions", () => {
    const messages = Array.from({ length: 10 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: `<!channel> ${"word ".repeat(2000)}`,
      created_at: "2026-11-23T04:00:00Z",
    }));
    const view = renderHistoryView({ ...state, kind: "history" }, messages, {
      page: 2,
      hasNext: false,
    });
    expect(validateView(view)).toBeUndefined();
    expect(JSON.stringify(view)).not.toContain("<!channel>");
    expect(JSON.stringify(view)).toContain("task_view_page_previous");
  });

  it("names any role the service sends as it is, even one that is a JavaScript property name", () => {
    // Found by fuzzing: ROLE["constructor"] was Object's constructor, shown as its source text.
    const roles = ["__proto__", "constructor", "toString", "hasOwnProperty"];
    const messages = roles.map((role) => ({ role, content: "hi", created_at: null }));
    const view = renderHistoryView({ ...state, kind: "history" }, messages, {
      page: 1,
      hasNext: false,
    });
    expect(validateView(view)).toBeUndefined();
    const shown = JSON.stringify(view);
    for (const role of roles) expect(shown).toContain(`*${role}*`);
    expect(shown).not.toMatch(/\[object |\[native code\]|function /);
  });

  it("shows a message's time to the minute, and a time that is no date without half an emoji", () => {
    // Found by fuzzing: the 16 characters of a date could end in the first half of an emoji.
    const at = (created_at: string) => ({ role: "user", content: "hi", created_at });
    const view = renderHistoryView(
      { ...state, kind: "history" },
      [at("2026-11-23T04:05:06Z"), at("today, 😀😀😀😀😀")],
      { page: 1, hasNext: false },
    );
    const shown = JSON.stringify(view);
    expect(shown).toContain("*You asked* · 2026-11-23 04:05");
    expect(shown).toContain('*You asked* · today, 😀😀😀😀"');
    expect(shown.isWellFormed()).toBe(true);
  });

  it("keeps its paging state within private_metadata and reads back only what it wrote", () => {
    const encoded = encodeViewState({ ...state, page: 7, status: true });
    expect(encoded.length).toBeLessThan(3000);
    expect(decodeViewState(encoded)).toEqual({ ...state, page: 7, status: true });
    expect(decodeViewState('{"k":"files","c":"C1","t":"1.2","p":0}')).toBeUndefined();
    expect(decodeViewState("not json")).toBeUndefined();
  });
});

describe("a History message of any length", () => {
  it("shows what its head shows: the rest of a message is never converted", () => {
    const row = (i: number) => `| ${i} | ${"cell ".repeat(i % 7)} |\n`;
    const table = `| n | text |\n| --- | --- |\n${Array.from({ length: 100_000 }, (_, i) => row(i)).join("")}`;
    const view = (content: string) =>
      renderHistoryView(
        { ...state, kind: "history" },
        [{ role: "assistant", content, created_at: null, message_id: null }],
        { page: 1, hasNext: false },
      );
    expect(table.length).toBeGreaterThan(1_000_000);
    expect(JSON.stringify(view(table))).toBe(JSON.stringify(view(table.slice(0, 12_000))));
  });
});
