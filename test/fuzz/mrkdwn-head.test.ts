/**
 * An excerpt or a notification converts only the head of an answer that it shows (and a line
 * of plain text only as far as needed), and a line's runs of plain characters are taken at
 * once: on any Markdown it must give exactly what converting all of it gave (oracle:
 * test/fuzz/mrkdwn-reference.ts, the converter before), and so must the whole conversion.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  inline as inlineNow,
  mrkdwnExcerpt,
  mrkdwnLabel,
  notificationText,
  toMrkdwn,
} from "../../src/view/mrkdwn.ts";
import { inline, markdown, MENTIONS, token } from "./arbitraries.ts";
import { fuzz } from "./fuzz.ts";
import { inline as inlineBefore } from "./mrkdwn-inline-reference.ts";
import {
  mrkdwnExcerptBefore,
  mrkdwnLabelBefore,
  notificationTextBefore,
  toMrkdwnBefore,
} from "./mrkdwn-reference.ts";

/** Plain text that turns into a mention, a link or markup only near a cut, and pages of it. */
const near = fc.constantFrom(
  "@everyone",
  "@here",
  " @channel",
  "<!",
  "<",
  "&",
  ">",
  "<https://a.test>",
  "<mailto:x@y.z>",
  "a",
  " ",
  "\n",
  "|",
  "-",
  ":",
  "😀",
  "\uD800",
  "[",
  "](",
  ")",
  "[](https://a.b)",
  "![](http://x)",
  "![",
  "<HTTP://a.b>",
  "\\*",
  "`",
  "*",
  "~~",
  "> ",
  "```",
  "|x\n",
  "`\n",
  "``x\n",
  "a```b\n",
  "\n| --- |\n",
  "\n===\n",
);
const plainish = fc
  .tuple(
    fc.array(fc.oneof(near, token, fc.constantFrom(...MENTIONS)), { maxLength: 30 }),
    fc.nat(60),
  )
  .map(([ts, n]) => ts.join("").repeat(1 + (n % 40)));
const text = fc.oneof(
  markdown,
  plainish,
  fc.tuple(markdown, plainish).map(([a, b]) => a + b),
);
const limit = fc.oneof(fc.integer({ min: 1, max: 120 }), fc.integer({ min: 120, max: 3_000 }));

describe("fuzz: the head of a conversion is what converting all of it gave", () => {
  it("reads table rows one by one, pages of short lines (of backticks too) before a heading, a table or a fence", () => {
    const texts = [
      `| a | b |\n| --- | --- |\n${"|x\n".repeat(50)}after`,
      `| a |\n|---|\n${"x|y\n".repeat(30)}\nnext`,
      `${"a\n".repeat(40)}Title\n=====\n${"b\n".repeat(40)}| h |\n|---|\n| c |`,
      `${"ab\n".repeat(200)}> quoted\n  indented\n1. item\n${"x &lt; y\n".repeat(5)}`,
      `${"`\n".repeat(40)}a\`\`\`b\n\`\`a\na\`b\`c\n\`\`\`\n${"`\n".repeat(9)}a \`\`\`\n\`\`\`\nz`,
    ];
    for (const md of texts) {
      expect(toMrkdwn(md)).toBe(toMrkdwnBefore(md));
      for (const max of [1, 50, 120, 300, 3000]) {
        expect(mrkdwnExcerpt(md, max)).toBe(mrkdwnExcerptBefore(md, max));
      }
    }
  });

  fuzz("mrkdwnExcerpt and notificationText: as converting the whole text", () =>
    fc.property(text, limit, (md, max) => {
      expect(mrkdwnExcerpt(md, max)).toBe(mrkdwnExcerptBefore(md, max));
      expect(notificationText(md, max)).toBe(notificationTextBefore(md, max));
      return true;
    }),
  );

  fuzz("inline: as before, plain runs taken at once", () =>
    fc.property(fc.oneof(inline, plainish), fc.boolean(), fc.boolean(), (line, strong, links) => {
      const one = line.replace(/\n/g, " ");
      expect(inlineNow(one, strong, links)).toBe(inlineBefore(one, strong, links));
      return true;
    }),
  );

  // Code spans of blanks kept as written, next to text, escapes and other spans: one slice.
  fuzz("inline: as before on lines of code spans, blank or not", () =>
    fc.property(
      fc.array(fc.constantFrom("`", "``", " ", "\r", "\t", "\u00a0", "a", "\\`", "*", "<", "&"), {
        maxLength: 40,
      }),
      fc.boolean(),
      (pieces, strong) => {
        const line = pieces.join("");
        expect(inlineNow(line, strong)).toBe(inlineBefore(line, strong, true));
        return true;
      },
    ),
  );

  fuzz("toMrkdwn and mrkdwnLabel: as before", () =>
    fc.property(text, fc.integer({ min: 1, max: 200 }), (md, max) => {
      expect(toMrkdwn(md)).toBe(toMrkdwnBefore(md));
      expect(mrkdwnLabel(md, max)).toBe(mrkdwnLabelBefore(md, max));
      return true;
    }),
  );
});
