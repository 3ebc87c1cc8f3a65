import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  countMarkerParities,
  countMarkers,
  dropUnpairedTick,
  isSpace,
  type MarkerCounts,
  nextFenceLine,
  readShortLines,
} from "../../src/view/markdown-scan.ts";

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

  /**
   * What the native stream did to each line `readShortLines` reads (its general path, one
   * line at a time): the same stopping rules, then `countMarkers` and a balance check.
   */
  function lineByLine(text: string, counts: MarkerCounts) {
    let at = 0;
    let balancedAt = -1;
    while (at < text.length) {
      const c0 = text.charCodeAt(at);
      const nl = text.indexOf("\n", at);
      const fence = /^(?:`{3}|~{3})/.test(text.slice(at));
      if (nl < 0 || c0 === 124 || isSpace(c0) || fence || nl - at >= 64) break;
      countMarkers(text, at, nl, counts);
      at = nl + 1;
      if (counts.ticks % 2 === 0 && counts.strong % 2 === 0 && counts.strike % 2 === 0) {
        balancedAt = at;
      }
    }
    return { stop: at, balancedAt };
  }

  it("reads short lines in one loop as countMarkers read them one by one (property)", () => {
    const piece = fc.constantFrom("`", "``", "*", "**", "~", "~~", "_", "__", "a", " ", "|");
    const line = fc.oneof(
      fc.array(piece, { maxLength: 12 }).map((p) => p.join("")),
      fc.constantFrom("```", "~~~", "", " x", "\t", "\u00a0", "\r", "|a", "a".repeat(63)),
      fc.string({ maxLength: 70 }).map((s) => s.replace(/\n/g, "")),
    );
    const counts = fc.record({
      ticks: fc.nat(3),
      strong: fc.nat(3),
      strike: fc.nat(3),
      under: fc.nat(3),
    });
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), counts, (lines, start) => {
        const text = lines.map((l) => `${l}\n`).join("");
        const expected = { ...start };
        const got = { ...start };
        expect(readShortLines(text, 0, text.length, got)).toEqual(lineByLine(text, expected));
        // The backticks of lines without other markers count by their parity.
        expect({ ...got, ticks: got.ticks % 2 }).toEqual({
          ...expected,
          ticks: expected.ticks % 2,
        });
      }),
      { numRuns: 2000 },
    );
  });

  it("gives the parities countMarkers gives, a line of code spans in pairs at once (property)", () => {
    const piece = fc.constantFrom("`", "``", "*", "**", "~~", "_", "a", " ", "\r", "\\");
    const line = fc.array(piece, { maxLength: 30 }).map((p) => p.join(""));
    const parities = (c: MarkerCounts) => [c.ticks, c.strong, c.strike, c.under].map((n) => n % 2);
    fc.assert(
      fc.property(line, line, fc.boolean(), (a, next, alone) => {
        const text = alone ? a : `${a}\n${next}`;
        const got = countMarkerParities(text, 0, a.length);
        expect(parities(got)).toEqual(parities(countMarkers(text, 0, a.length)));
      }),
      { numRuns: 2000 },
    );
  });

  it("leaves a line of 64 characters or more to the general path, counts untouched", () => {
    const text = `a **b**\n${"*".repeat(64)}\n`;
    const counts = { ticks: 0, strong: 0, strike: 0, under: 0 };
    expect(readShortLines(text, 0, text.length, counts)).toEqual({ stop: 8, balancedAt: 8 });
    expect(counts).toEqual({ ticks: 0, strong: 2, strike: 0, under: 0 });
  });

  it("counts a line without its unpaired last backtick as counting it again did (property)", () => {
    const piece = fc.constantFrom("`", "``", "*", "**", "~", "~~", "_", "__", "a", " ", "\r");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), (pieces) => {
        const line = pieces.join("");
        const counts = countMarkers(line, 0, line.length);
        fc.pre(counts.ticks % 2 === 1);
        const last = line.lastIndexOf("`");
        const without = line.slice(0, last) + line.slice(last + 1);
        dropUnpairedTick(line, last, counts);
        expect(counts).toEqual(countMarkers(without, 0, without.length));
      }),
      { numRuns: 3000 },
    );
  });
});
