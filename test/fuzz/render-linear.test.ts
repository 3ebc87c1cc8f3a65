/**
 * No answer may freeze the app: the renderings of a streamed answer (the interim and final
 * edits, native streaming's prefix) stay within a time budget per KiB on hostile text, and
 * the linear scanners that replaced backtracking regular expressions give exactly what those
 * expressions gave (test/fuzz/markdown-reference.ts keeps them as the oracle).
 *
 * The budget is about two orders of magnitude above what a linear pass takes and one below
 * what the quadratic expressions took on 16 KiB (a line of "[" took 0.3 s, 19 ms per KiB), so
 * a loaded machine cannot fail it and a quadratic path cannot pass it; an over-budget case is
 * timed twice more and judged by its fastest run (a GC pause is no complexity). The time is
 * the thread's CPU time, not the wall's: a process descheduled on a busy machine is no
 * complexity either (that clock counts in scheduler ticks of a few ms, far below the budget).
 */
import fc from "fast-check";
import { describe, expect } from "vitest";
import { cutDanglingLink } from "../../src/view/markdown-scan.ts";
import {
  repairPartial,
  repairPartialMarkdown,
  StreamablePrefix,
  splitMarkdown,
  streamablePrefix,
} from "../../src/view/markdown.ts";
import { renderRun } from "../../src/view/render.ts";
import { neutralizeMentions } from "../../src/view/sanitize.ts";
import { fill } from "../support/hostile-text.ts";
import { markdown } from "./arbitraries.ts";
import { fuzz } from "./fuzz.ts";
import {
  neutralizeBefore,
  repairBefore,
  splitBefore,
  streamableBefore,
} from "./markdown-reference.ts";

/** Milliseconds a case may take per KiB of answer. */
const BUDGET_MS_PER_KIB = 3;
const CASE_KIB = 16;

/** The characters Markdown and Slack give meaning to, and the ones that end or pad lines. */
const HOSTILE = [
  ..."[]()!`*_~<>|@#&\\-+=:. \t\r\n\u2028\u00a0\u200b😀".split(/(?:)/u),
  // Labels and targets of links that name another host (each tagged while rendering).
  "a.b",
  "https://c",
];

const unit = fc.array(fc.constantFrom(...HOSTILE), { minLength: 1, maxLength: 12 });

/** Milliseconds of CPU this thread has used (other processes on a busy machine do not count). */
function cpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}

/** The fastest of up to three timings of `fn`, stopping at the first within `budget`. */
function fastestWithin(fn: () => void, budget: number): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3 && best > budget; i++) {
    const started = cpuMs();
    fn();
    best = Math.min(best, cpuMs() - started);
  }
  return best;
}

const passes = (text: string) => () => {
  renderRun({ text, state: "running", elapsedMs: 1000, stopValue: "{}" });
  renderRun({ text, state: "completed", elapsedMs: 1000 });
  streamablePrefix(text);
};

describe("fuzz: rendering time", () => {
  fuzz("renderRun and streamablePrefix: within a few ms per KiB on any repeated hostile text", () =>
    fc.property(
      unit,
      fc.constantFrom("", "\n", "\n\n", " "),
      fc.string({ maxLength: 40 }),
      (chars, separator, tail) => {
        const text = fill(chars.join("") + separator, CASE_KIB * 1024) + tail;
        const budget = BUDGET_MS_PER_KIB * CASE_KIB;
        const ms = fastestWithin(passes(text), budget);
        if (ms > budget) throw new Error(`${ms.toFixed(0)} ms for ${JSON.stringify(chars)}`);
        return true;
      },
    ),
  );
});

describe("fuzz: the scanners give what the regular expressions gave", () => {
  const text = fc.oneof(
    markdown,
    fc
      .array(fc.constantFrom(...HOSTILE, "a", "```", "~~~", "**", "]("), { maxLength: 60 })
      .map((a) => a.join("")),
  );

  fuzz("repairPartialMarkdown, streamablePrefix, neutralizeMentions", () =>
    fc.property(text, (t) => {
      expect(repairPartialMarkdown(t)).toBe(repairBefore(t));
      expect(streamablePrefix(t)).toBe(streamableBefore(t));
      expect(neutralizeMentions(t)).toBe(neutralizeBefore(t));
      const line = t.replace(/\n/g, " ");
      expect(cutDanglingLink(line)).toBe(
        line.replace(/!?\[[^\]\n]*\]\([^)\s]*$/, "").replace(/!?\[[^\]\n]*$/, ""),
      );
      return true;
    }),
  );

  fuzz(
    "the interim edit neutralises what the repair keeps, and appends its closing fence as is",
    () =>
      fc.property(text, fc.constantFrom("", "\n", "```\n", "~~~~ ts\n"), (t, before) => {
        const source = before + t;
        const { kept, closing } = repairPartial(source);
        expect(kept + closing).toBe(repairBefore(source));
        expect(closing).toMatch(/^\n?(?:`{3,}|~{3,})?$/);
        expect(neutralizeMentions(kept) + closing).toBe(neutralizeBefore(repairBefore(source)));
        return true;
      }),
  );

  // A long text with a "<" in every few characters: mentions broken in one pass over its units.
  fuzz("neutralizeMentions on a page dense with openers", () =>
    fc.property(
      fc.array(
        fc.constantFrom(
          "<",
          "<!",
          "<@",
          "<#",
          "@here",
          "@channel",
          "a@everyone",
          "x",
          "\u200b",
          "😀",
          " ",
        ),
        {
          minLength: 1,
          maxLength: 12,
        },
      ),
      fc.string({ maxLength: 20 }),
      (pieces, tail) => {
        const unit = `<!${pieces.join("<")}`; // a "<" in every 11 characters at least
        const t = fill(unit, 65_536 + unit.length * 2) + tail;
        expect(neutralizeMentions(t)).toBe(neutralizeBefore(t));
        return true;
      },
    ),
  );

  // Pages of short lines of markers: what native streaming reads a character at a time.
  const shortLines = fc
    .array(
      fc.oneof(
        fc.array(fc.constantFrom("`", "*", "**", "~~", "_", "a", " ", "|", "\r"), { maxLength: 9 }),
        fc.constantFrom(["```"], ["~~~"], [""], ["\u00a0"], ["a".repeat(70)], [" ```"]),
      ),
      { maxLength: 40 },
    )
    .map((lines) => lines.map((l) => `${l.join("")}\n`).join(""));

  fuzz("streamablePrefix on short lines of markers, whole and as it grows", () =>
    fc.property(shortLines, fc.array(fc.nat(), { maxLength: 6 }), (t, cuts) => {
      expect(streamablePrefix(t)).toBe(streamableBefore(t));
      const growing = new StreamablePrefix();
      for (const end of [...cuts.map((c) => c % (t.length + 1)), t.length].sort((a, b) => a - b)) {
        expect(growing.of(t.slice(0, end))).toBe(streamableBefore(t.slice(0, end)));
      }
      return true;
    }),
  );

  fuzz("splitMarkdown", () =>
    fc.property(
      fc.array(text, { maxLength: 12 }).map((ts) => ts.join("\n")),
      fc.integer({ min: 200, max: 600 }),
      (t, limit) => {
        expect(splitMarkdown(t, limit)).toEqual(splitBefore(t, limit));
        return true;
      },
    ),
  );

  // Lines longer than a part: each window searched for a line end, a blank and a fence run.
  fuzz("splitMarkdown on lines of a few parts each", () =>
    fc.property(
      fc.array(fc.tuple(unit, fc.integer({ min: 1, max: 2000 })), { minLength: 1, maxLength: 4 }),
      fc.integer({ min: 200, max: 600 }),
      (lines, limit) => {
        const t = lines.map(([chars, n]) => fill(chars.join(""), n)).join("\n");
        expect(splitMarkdown(t, limit)).toEqual(splitBefore(t, limit));
        return true;
      },
    ),
  );
});
