import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { countMarkers, nextFenceLine } from "../../src/view/markdown-scan.ts";

/** The expression `nextFenceLine` stands for. */
const FENCE_START = /^ {0,3}(?:`{3}|~{3})/gm;

describe("the scanners behind code blocks and emphasis", () => {
  it("finds the line a fence may start, from any position, as the expression did (property)", () => {
    const piece = fc.constantFrom(" ", "  ", "    ", "`", "```", "~~~", "a", "\n", "\r", "\u2028");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        const text = pieces.join("");
        for (let from = 0; from <= text.length; from++) {
          FENCE_START.lastIndex = from;
          const expected = FENCE_START.exec(text)?.index ?? text.length;
          expect(nextFenceLine(text, from)).toBe(expected);
        }
      }),
    );
  });

  it("finds a fence after a page of spaces and a line with ``` inside it", () => {
    const text = `${" ".repeat(5000)}\nsay \`\`\` here\n  ~~~ts\n`;
    expect(nextFenceLine(text, 0)).toBe(text.indexOf("  ~~~"));
  });

  it("counts the pairs in long runs of *, ~ and _, with code spans taken out", () => {
    const line = `${"*".repeat(1001)}\`x\`*${"~".repeat(6)}_a__`;
    // 1,001 stars and one more after the code span: one run of 1,002.
    expect(countMarkers(line, 0, line.length)).toEqual({
      ticks: 2,
      strong: 501,
      strike: 3,
      under: 1,
    });
  });
});
