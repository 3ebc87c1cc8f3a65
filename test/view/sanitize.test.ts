/**
 * Model output and echoed prompts must never ping anyone: every mention form Slack resolves
 * is broken with a zero-width space, so it reads the same but notifies nobody.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { escapeShort, escapeText, neutralizeMentions, truncate } from "../../src/view/sanitize.ts";

const ZWSP = "\u200B";
/** A mention Slack would resolve: <!channel>, <!here>, <@U…>, <#C…>, or a bare @here word. */
const LIVE_MENTION = /<[!@#]|(^|[^\w])@(channel|here|everyone)\b/i;

describe("neutralizeMentions", () => {
  it.each([
    ["<!channel>", `<${ZWSP}!channel>`],
    ["<!here>", `<${ZWSP}!here>`],
    ["<!everyone>", `<${ZWSP}!everyone>`],
    ["<!here|here>", `<${ZWSP}!here|here>`],
    ["<!subteam^S0614TZR7|@engineers>", `<${ZWSP}!subteam^S0614TZR7|@engineers>`],
    ["<@U024BE7LH>", `<${ZWSP}@U024BE7LH>`],
    ["<@W0123ABC|alice>", `<${ZWSP}@W0123ABC|alice>`],
    ["<#C024BE7LR>", `<${ZWSP}#C024BE7LR>`],
    ["<#C024BE7LR|general>", `<${ZWSP}#C024BE7LR|general>`],
    ["@channel", `@${ZWSP}channel`],
    ["@here", `@${ZWSP}here`],
    ["@everyone", `@${ZWSP}everyone`],
    ["@CHANNEL", `@${ZWSP}CHANNEL`],
    ["Hey @here, look", `Hey @${ZWSP}here, look`],
    ["(@channel)", `(@${ZWSP}channel)`],
    ["*@everyone*", `*@${ZWSP}everyone*`],
    ["line one\n@here", `line one\n@${ZWSP}here`],
  ])("never pings from %j", (input, expected) => {
    const out = neutralizeMentions(input);
    expect(out).toBe(expected);
    expect(out).not.toMatch(LIVE_MENTION);
  });

  it("breaks every mention in a longer message, not just the first", () => {
    const out = neutralizeMentions("<!channel> <!channel> @here @here <@U1><@U2> <#C1><#C2>");
    expect(out).not.toMatch(LIVE_MENTION);
    expect(out.split(ZWSP)).toHaveLength(9);
  });

  it.each([
    "a < b and c > d",
    "x<y>z",
    "<https://example.com|the docs>",
    "<mailto:bob@example.com|Bob>",
    "write to bob@example.com",
    "bob@here.com",
    "@heretic and @channels and @everyoneelse",
    "3 @ 4",
    "",
  ])("leaves ordinary text alone: %j", (text) => {
    expect(neutralizeMentions(text)).toBe(text);
  });

  const fragments = fc.array(
    fc.oneof(
      fc.constantFrom(
        "<",
        "!",
        "@",
        "#",
        ">",
        "channel",
        "here",
        "everyone",
        "U024",
        " ",
        "\n",
        "_",
        "*",
      ),
      fc.string({ maxLength: 4 }),
    ),
    { maxLength: 40 },
  );
  const text = fragments.map((f) => f.join(""));

  it("leaves nothing Slack would resolve, whatever the text (property)", () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(neutralizeMentions(t)).not.toMatch(LIVE_MENTION);
      }),
      { numRuns: 500 },
    );
  });

  it("reads the same to a person: it only adds zero-width spaces (property)", () => {
    fc.assert(
      fc.property(text, (t) => {
        const out = neutralizeMentions(t);
        expect(out.replaceAll(ZWSP, "")).toBe(t.replaceAll(ZWSP, ""));
        expect(out.length).toBeGreaterThanOrEqual(t.length);
      }),
      { numRuns: 500 },
    );
  });

  it("is idempotent, so sanitising twice changes nothing (property)", () => {
    fc.assert(
      fc.property(text, (t) => {
        const once = neutralizeMentions(t);
        expect(neutralizeMentions(once)).toBe(once);
      }),
      { numRuns: 500 },
    );
  });
});

describe("neutralizeMentions on a long text full of mentions", () => {
  /** What it was: two replacements, whatever the text. */
  const replaced = (text: string) =>
    text
      .replace(/<(?=[!@#])/g, `<${ZWSP}`)
      .replace(/(?<!\w)@(?=(?:channel|here|everyone)\b)/gi, `@${ZWSP}`);

  it("breaks a page of <! like the replacements, and one at the very end", () => {
    const text = `${"<!".repeat(40_000)}<`;
    expect(neutralizeMentions(text)).toBe(replaced(text));
    expect(neutralizeMentions(`${text}#`).endsWith(`<${ZWSP}#`)).toBe(true);
  });

  it("gives what the replacements gave, on any long text (property)", () => {
    const unit = fc.oneof(
      fc.string({ unit: "binary", maxLength: 8 }), // lone surrogates too
      fc.constantFrom("<", "<!", "<@", "<#", "@here", "a@channel", "😀", "\uD800", "\uDC00"),
    );
    fc.assert(
      fc.property(fc.array(unit, { minLength: 1, maxLength: 20 }), fc.nat(40), (units, pad) => {
        const piece = units.join("");
        fc.pre(piece.length > 0);
        // Past the length below which replacing is cheap, and as dense in "<" as it may be.
        const text = `${"x".repeat(pad)}${piece.repeat(Math.ceil(70_000 / piece.length))}`;
        expect(neutralizeMentions(text)).toBe(replaced(text));
      }),
      { numRuns: 200 },
    );
  });
});

describe("escaping text for mrkdwn", () => {
  /** What it was: three replacements, whatever the text. */
  const replaced = (s: string) =>
    s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

  it("escapes a line full of mention starts, and a short one, like the replacements", () => {
    const line = "<\u200B!".repeat(270); // the longest that is copied a unit at a time
    for (const escape of [escapeText, escapeShort]) {
      expect(escape(line)).toBe(replaced(line));
      expect(escape(`${line}<`)).toBe(replaced(`${line}<`));
      expect(escape("a & b <c> d")).toBe("a &amp; b &lt;c&gt; d");
      expect(escape("<<&>")).toBe("&lt;&lt;&amp;&gt;");
    }
  });

  it("gives what the replacements gave, dense or not, short or long (property)", () => {
    const piece = fc.oneof(
      fc.constantFrom("&", "<", ">", "<!", "&amp;", ZWSP, "😀", "\uD800", "\uDC00", " "),
      fc.string({ unit: "binary", maxLength: 6 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), fc.nat(900), (pieces, pad) => {
        const head = pieces.join("");
        for (const t of [head, head + "x".repeat(pad), "x".repeat(pad) + head]) {
          expect(escapeShort(t)).toBe(replaced(t));
          expect(escapeText(t)).toBe(replaced(t));
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("cutting a text short", () => {
  it("never splits an emoji nor leaves a bare @here behind the ellipsis", () => {
    const cut = truncate(`${"a".repeat(8)}😀 tail`, 10);
    expect(cut).toBe(`${"a".repeat(8)}…`);
    expect(truncate("say @heretics are", 10)).toBe("say @…");
    expect(truncate("short", 10)).toBe("short");
  });
});
