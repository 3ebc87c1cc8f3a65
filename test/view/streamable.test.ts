import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scanFences } from "../../src/view/markdown-scan.ts";
import { StreamablePrefix, streamablePrefix } from "../../src/view/markdown.ts";

describe("what native streaming may append", () => {
  it("appends whole lines only", () => {
    expect(streamablePrefix("Hello wor")).toBe("");
    expect(streamablePrefix("Hello world\nNext li")).toBe("Hello world\n");
  });

  it("holds back a table until a line after it shows it is complete", () => {
    const table = "Intro\n| a | b |\n|---|---|\n| 1 | 2 |\n";
    expect(streamablePrefix(table)).toBe("Intro\n");
    expect(streamablePrefix(`${table}After\n`)).toBe(`${table}After\n`);
  });

  it("holds back a paragraph with an unpaired ** until it pairs up", () => {
    expect(streamablePrefix("Some **bold\n")).toBe("");
    expect(streamablePrefix("Some **bold\nstill** bold\n")).toBe("Some **bold\nstill** bold\n");
  });

  it("appends finished lines of a code block that is still open", () => {
    expect(streamablePrefix("```ts\nconst a = 1;\nconst b")).toBe("```ts\nconst a = 1;\n");
  });

  it("only ever grows as the answer grows (property)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.constantFrom("text ", "**", "`", "~~", "\n", "\n\n", "| a |", "```ts\n", "```\n", "x"),
          { maxLength: 80 },
        ),
        (pieces) => {
          let previous = "";
          let text = "";
          for (const piece of pieces) {
            text += piece;
            const now = streamablePrefix(text);
            expect(now.startsWith(previous)).toBe(true);
            expect(text.startsWith(now)).toBe(true);
            previous = now;
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("sees a fence whose backticks arrive in pieces", () => {
    const growing = new StreamablePrefix();
    expect(growing.of("intro\n``")).toBe("intro\n");
    expect(growing.of("intro\n```ts\ncode **\n")).toBe("intro\n```ts\ncode **\n");
  });

  it("reads a growing answer once, with what a reading from scratch gives at every step (property)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.constantFrom(
            "text ",
            "**",
            "`",
            "~~",
            "\n",
            "\r\n",
            "\n\n",
            "| a |",
            "```ts\n",
            "```\n",
            "*",
            "``",
            "~",
            "\r",
            " ",
          ),
          { maxLength: 80 },
        ),
        (pieces) => {
          const growing = new StreamablePrefix();
          let text = "";
          for (const piece of pieces) {
            text += piece;
            expect(growing.of(text)).toBe(streamablePrefix(text));
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("says where a message may end outside code, and which code block is open where it ends", () => {
    const p = new StreamablePrefix();
    const code = "Intro\n```ts\nconst a = 1;\n";
    expect(p.of(`${code}const b`)).toBe(code);
    expect(p.outsideCode).toBe("Intro\n".length);
    expect(p.fence).toEqual({ open: "```", info: "ts" });
    const closed = `${code}\`\`\`\nAfter\n`;
    expect(p.of(`${closed}Some **bold\n`)).toBe(closed);
    expect(p.outsideCode).toBe(closed.length);
    expect(p.fence).toBeUndefined();
  });

  it("reads a text that starts inside a code block as code, until its fence closes", () => {
    const inCode = new StreamablePrefix({ open: "```", info: "ts" });
    expect(inCode.of("a ** b\nc\n")).toBe("a ** b\nc\n");
    expect(inCode.outsideCode).toBe(-1);
    expect(inCode.fence).toEqual({ open: "```", info: "ts" });
    expect(inCode.of("a ** b\nc\n```\nd **\n")).toBe("a ** b\nc\n```\n");
    expect(inCode.outsideCode).toBe("a ** b\nc\n```\n".length);
    expect(inCode.fence).toBeUndefined();
  });

  it("ends outside code only where a message can end, and knows the code block open at its end (property)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.constantFrom("text ", "**", "`", "\n", "\n\n", "| a |", "```ts\n", "```\n", "~~~\n"),
          { maxLength: 80 },
        ),
        (pieces) => {
          const growing = new StreamablePrefix();
          let text = "";
          for (const piece of pieces) {
            text += piece;
            const safe = growing.of(text);
            const outside = text.slice(0, growing.outsideCode);
            expect(growing.outsideCode).toBeLessThanOrEqual(safe.length);
            expect(streamablePrefix(outside)).toBe(outside);
            expect(scanFences(outside).open).toBeUndefined();
            expect(growing.fence?.open).toBe(scanFences(safe).open);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
