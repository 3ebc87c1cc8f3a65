/**
 * Strings that hold no more than their characters: a piece of a long string that lets the long
 * one go, and a text grown one character at a time that does not become a tree of its pieces.
 * (Their memory is V8's business: bench:memory measures it; here, that they stay the same text.)
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GrowingText, owned } from "../../src/util/text.ts";

describe("owned", () => {
  it("is the same text, short or long", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (s) => {
        expect(owned(s)).toBe(s);
      }),
    );
    const long = "x".repeat(10_000);
    expect(owned(long.slice(100, 5000))).toBe(long.slice(100, 5000));
  });
});

describe("GrowingText", () => {
  it("is every piece appended, in order, however many and however small", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 3 }), { maxLength: 5000 }),
        fc.string(),
        (pieces, start) => {
          const text = new GrowingText(start);
          for (const p of pieces) text.append(p);
          expect(text.text).toBe(start + pieces.join(""));
          expect(text.length).toBe(text.text.length);
        },
      ),
      { numRuns: 50 },
    );
  });

  it("stays one text through many flattenings (100,000 one-character pieces)", () => {
    const text = new GrowingText();
    for (let i = 0; i < 100_000; i++) text.append(String(i % 10));
    expect(text.length).toBe(100_000);
    expect(text.text.slice(0, 12)).toBe("012345678901");
    expect(text.text.slice(-3)).toBe("789");
  });
});
