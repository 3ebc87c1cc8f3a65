/**
 * How an answer reads where Slack takes no `markdown` block (the History modal, context lines,
 * the Continue form's quote, notifications): Markdown turned into Slack mrkdwn, mentions
 * neutralised, in time linear in the answer's length.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mrkdwnExcerpt, mrkdwnLabel, toMrkdwn } from "../../src/view/mrkdwn.ts";
import { renderContinued, renderRun } from "../../src/view/render.ts";
import { renderHistoryView } from "../../src/view/task-views.ts";
import { markdown, rawMention } from "../fuzz/arbitraries.ts";
import { settledRatio } from "../support/linear-time.ts";
import { rawMarkdown } from "../support/mrkdwn-oracle.ts";

const ZWSP = "\u200B";

describe("toMrkdwn", () => {
  it("shows headings as bold lines and **bold** as *bold*", () => {
    expect(toMrkdwn("# Build a landing page\n\n### Example\n**Note:** it works")).toBe(
      "*Build a landing page*\n\n*Example*\n*Note:* it works",
    );
    expect(toMrkdwn("## **Already bold** heading ##")).toBe("*Already bold heading*");
    expect(toMrkdwn("Title\n=====\nbody")).toBe("*Title*\nbody");
  });

  it("turns italics, strikethrough and bold italics into mrkdwn's markers", () => {
    expect(toMrkdwn("*a* _b_ ~~c~~ ***d*** __e__")).toBe("_a_ _b_ ~c~ *_d_* *e*");
    // snake_case stays a word; a star between numbers stays a star.
    expect(toMrkdwn("snake_case_name and 2 * 3")).toBe("snake_case_name and 2 * 3");
  });

  it("writes links as <url|label>, escaping what Slack would read as markup", () => {
    expect(toMrkdwn('see [the docs](https://example.com/a?b=1&c=2 "Docs")')).toBe(
      "see <https://example.com/a?b=1&amp;c=2|the docs>",
    );
    expect(toMrkdwn("<https://example.com> ![chart](https://x.test/c.png)")).toBe(
      "<https://example.com> <https://x.test/c.png|chart>",
    );
    expect(toMrkdwn("[Go](https://en.wikipedia.org/wiki/Go_(game))")).toBe(
      "<https://en.wikipedia.org/wiki/Go_(game)|Go>",
    );
    // Not a web address: the label alone, never a javascript: link.
    expect(toMrkdwn("[click](javascript:alert(1))")).not.toContain("<javascript");
    expect(toMrkdwn("a < b && c > d")).toBe("a &lt; b &amp;&amp; c &gt; d");
  });

  it("shows lists as bullets, nested ones indented, task boxes ticked", () => {
    expect(toMrkdwn("- one\n  - two\n    - three\n1. first\n- [ ] todo\n- [x] done")).toBe(
      "• one\n    ◦ two\n        ▪ three\n1. first\n• ☐ todo\n• ☑ done",
    );
  });

  it("keeps block quotes (one level, as mrkdwn has) and fenced code as ``` blocks", () => {
    expect(toMrkdwn("> quoted **b**\n> > deeper")).toBe("> quoted *b*\n> deeper");
    expect(toMrkdwn("```python\n# comment\nx = 2 ** 3 < 9\n```")).toBe(
      "```\n# comment\nx = 2 ** 3 &lt; 9\n```",
    );
    // An unclosed fence is code to the end, and is closed.
    expect(toMrkdwn("```\nhalf")).toBe("```\nhalf\n```");
  });

  it("shows a pipe table as aligned columns in a code block, without its rule line", () => {
    const table = "| Name | Age |\n|------|----:|\n| **Alice** | 30 |\n| Bob \\| Jr | 4 |";
    expect(toMrkdwn(table)).toBe(
      ["```", "Name      Age", "--------  ---", "Alice     30", "Bob | Jr  4", "```"].join("\n"),
    );
  });

  it("neutralises mentions, as the answer's messages do", () => {
    const out = toMrkdwn("hi <@U123ABC> <!channel> <!subteam^S1> @here [x](https://a.test/@here)");
    expect(rawMention(out)).toBeUndefined();
    expect(out).toContain(`@${ZWSP}here`);
  });

  it("cuts a long answer at a line end, closing an open code block", () => {
    const md = `intro\n\n\`\`\`\n${"line of code\n".repeat(400)}\`\`\`\nafter`;
    const cut = mrkdwnExcerpt(md, 3000);
    expect(cut.length).toBeLessThanOrEqual(3000);
    expect(cut.endsWith("```\n…")).toBe(true);
    expect(mrkdwnExcerpt("short **one**", 3000)).toBe("short *one*");
    // One long line: never cut inside a link.
    const long = mrkdwnExcerpt(`${"word ".repeat(590)}[label](https://example.com/x)`, 3000);
    expect(long).not.toMatch(/<[^>]*$/);
  });

  it("gives a task's title for a link label: its first line, no markers, no links, no pipes", () => {
    expect(mrkdwnLabel("\n# Build a **landing** page\nmore", 200)).toBe("Build a landing page");
    expect(mrkdwnLabel("see [docs](https://x.test) | <@U1> @here", 200)).toBe(
      `see docs ¦ &lt;@U1&gt; @${ZWSP}here`,
    );
    expect(mrkdwnLabel("word ".repeat(100), 50).length).toBeLessThanOrEqual(50);
    expect(mrkdwnLabel("```js\nx", 200)).not.toContain("\n");
  });

  it("keeps an excerpt within its limit when guarding its last line lengthens it (found by the property below)", () => {
    // A cut in a line of asterisks that the whole answer showed as code, and the excerpt not.
    const md = `\`\`\`\n\`\`\`js\n\`\`\`\n\`\`\`${"*".repeat(2960)}\u{10000}\u{10000} עברית\u202Ctext \`\n**text`;
    const cut = mrkdwnExcerpt(md, 3000);
    expect(cut.length).toBeLessThanOrEqual(3000);
    expect(rawMarkdown(cut)).toBeUndefined();
    expect(cut.endsWith("\n…")).toBe(true);
  });

  it("lets no **, # heading or table rule line reach Slack, whatever the answer (property)", () => {
    fc.assert(
      fc.property(markdown, (md) => {
        const out = toMrkdwn(md);
        expect(rawMarkdown(out)).toBeUndefined();
        expect(rawMention(out)).toBeUndefined();
        const cut = mrkdwnExcerpt(md, 3000);
        expect(cut.length).toBeLessThanOrEqual(3000);
        expect(rawMarkdown(cut)).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });
});

/** Every mrkdwn text object of a payload (sections, contexts), and its notification `text`. */
function mrkdwnTexts(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(mrkdwnTexts);
  if (typeof value !== "object" || value === null) return [];
  const o = value as Record<string, unknown>;
  const own = o.type === "mrkdwn" && typeof o.text === "string" ? [o.text] : [];
  return [...own, ...Object.values(o).flatMap(mrkdwnTexts)];
}

describe("the app's mrkdwn surfaces", () => {
  const state = { kind: "history" as const, channelId: "C1", threadTs: "1.2", page: 1 };
  it("show an answer with no **, # heading or table rule line, whatever it is (property)", () => {
    fc.assert(
      fc.property(markdown, (md) => {
        const history = renderHistoryView(
          state,
          [{ role: "assistant", content: md, created_at: null, message_id: null }],
          { page: 1, hasNext: false },
        );
        const failed = renderRun({ text: "", state: "failed", elapsedMs: 1000, reason: md });
        const done = renderRun({ text: md, state: "completed", elapsedMs: 1000 });
        const texts = [
          ...mrkdwnTexts(history),
          ...mrkdwnTexts(renderContinued("U1", md, [])),
          ...failed.flatMap((p) => [p.text, ...mrkdwnTexts(p.blocks)]),
          ...done.map((p) => p.text),
        ];
        for (const text of texts) expect(rawMarkdown(text)).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });
});

/**
 * Hostile answers: the work grows with the text's length, not its square. Each input is
 * converted at n and 4n characters and the least CPU time of this thread over several
 * interleaved runs is compared: linear work costs about 4 times as much (up to 6 with the
 * collector's share), quadratic 16. CPU time of the thread, not the clock: other processes
 * on a busy machine do not count, and the minimum drops runs a collection happened to hit; a
 * ratio over the limit is measured twice more before it fails (superlinear work fails all).
 */
describe("toMrkdwn on hostile input", () => {
  const PATTERNS: Record<string, (n: number) => string> = {
    "unclosed links": (n) => "[a](".repeat(n / 4),
    "open brackets": (n) => "[".repeat(n),
    "backtick runs": (n) => "`a``b".repeat(n / 5),
    "emphasis soup": (n) => "*a **b _c __d ~~e ".repeat(n / 18),
    "nested quotes": (n) => "> ".repeat(n / 2),
    "angle brackets": (n) => "<https:".repeat(n / 7),
    escapes: (n) => "\\*".repeat(n / 2),
    "table rows": (n) => `|a|b|\n|-|-|\n${"|x|y|\n".repeat(n / 6)}`,
    "spaces in a table cell": (n) => `|a|b|\n|-|-|\n|${" ".repeat(n)}x|`,
    "brackets in a table cell": (n) => `|a|\n|-|\n|${"[".repeat(n)}|`,
    "a list item with a line separator": (n) => `- ${" ".repeat(n)}\u2028x`,
    "list lines": (n) =>
      Array.from({ length: n / 40 }, (_, i) => `${" ".repeat(i % 30)}- x`).join("\n"),
  };
  // Past the young generation of the heap at both sizes, so collections cost alike per character.
  const N = 200_000;

  const cpuMs = () => {
    const { user, system } = process.threadCpuUsage();
    return (user + system) / 1000;
  };
  function cheapest(input: string, runs: number): number {
    let best = Number.POSITIVE_INFINITY;
    for (let i = 0; i < runs; i++) {
      const t0 = cpuMs();
      toMrkdwn(input);
      best = Math.min(best, cpuMs() - t0);
    }
    return best;
  }

  for (const [name, make] of Object.entries(PATTERNS)) {
    it(`converts ${name} in linear time`, () => {
      const small = make(N);
      const large = make(4 * N);
      cheapest(large, 1); // warm up
      let smallMs = Number.POSITIVE_INFINITY;
      let largeMs = Number.POSITIVE_INFINITY;
      // A few milliseconds say little (a collection, a page fault, the thread's CPU clock
      // counting in scheduler ticks of a few ms): 5 ms is the floor. Quadratic work on 200,000
      // characters costs far more than that.
      const measure = () => {
        smallMs = Number.POSITIVE_INFINITY;
        largeMs = Number.POSITIVE_INFINITY;
        for (let round = 0; round < 3; round++) {
          smallMs = Math.min(smallMs, cheapest(small, 2));
          largeMs = Math.min(largeMs, cheapest(large, 1));
        }
        return largeMs / Math.max(smallMs, 5);
      };
      const ratio = settledRatio(measure, 10);
      expect(ratio, `${smallMs.toFixed(1)} ms → ${largeMs.toFixed(1)} ms`).toBeLessThan(10);
    });
  }
});
