/**
 * Generators shared by the fuzz targets: hostile Markdown (nested fences, tables, lists, emoji,
 * RTL and zero-width characters, Slack mentions in every position), Slack ids, and the oracle
 * that says whether a text would still ping someone.
 */
import fc from "fast-check";

/** Every way a text can ping in Slack, and fragments that could join into one. */
export const MENTIONS = [
  "<!channel>",
  "<!here>",
  "<!everyone>",
  "<!here|here>",
  "<!channel|@channel>",
  "<@U024BE7LH>",
  "<@W0123ABCD|bob>",
  "<#C024BE7LR>",
  "<#C024BE7LR|general>",
  "<!subteam^S0123ABCD>",
  "<!subteam^S0123ABCD|@devs>",
  "<!date^1392734382^{date_short}|Feb 18>",
  "@channel",
  "@here",
  "@everyone",
  "@Channel",
  "@HERE",
  "<",
  "<!",
  "<@",
  "<#",
  "!channel>",
  "@",
  "!",
  "#",
  "&lt;!channel&gt;",
] as const;

const ZERO_WIDTH = ["\u200B", "\u200C", "\u200D", "\u2060", "\uFEFF", "\u00AD"];
const BIDI = [
  "\u200E",
  "\u200F",
  "\u202A",
  "\u202B",
  "\u202C",
  "\u202D",
  "\u202E",
  "\u2066",
  "\u2069",
];
const EMOJI = ["😀", "👩‍👩‍👧‍👦", "🇫🇷", "👍🏽", "❤️", ":tada:", "🏳️‍🌈", "e\u0301"];
const RTL = ["שלום עולם", "مرحبا بالعالم", "עברית\u202Ctext", "سلام"];
const WORDS = [
  "text",
  "Build",
  "the",
  "page",
  "日本語",
  "naïve",
  "a&b",
  "x<y>z",
  "1.",
  "-",
  "lorem",
];
const MARKUP = [
  "**",
  "__",
  "~~",
  "`",
  "``",
  "```",
  "~~~",
  "*",
  "_",
  "[",
  "]",
  "](",
  ")",
  "![",
  "[link](https://example.com)",
  // Labels that look like another host's address, and one of the target's own host.
  "[https://sso.corp](https://evil.example)",
  "[sso.corp](http://evil.example/login)",
  "[www.example.com](https://example.com)",
  "|",
  ">",
  "&",
  "&amp;",
  "\\",
  "#",
  "\t",
  " ",
  "  ",
  "\r",
];

/** One token of a line: mostly words and markup, often a mention, sometimes anything at all. */
export const token: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...WORDS) },
  { weight: 3, arbitrary: fc.constantFrom(...MENTIONS) },
  { weight: 3, arbitrary: fc.constantFrom(...MARKUP) },
  { weight: 1, arbitrary: fc.constantFrom(...ZERO_WIDTH, ...BIDI) },
  { weight: 1, arbitrary: fc.constantFrom(...EMOJI, ...RTL) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 4 }) },
);

/** A line: tokens glued together or spaced, so that fragments meet in every combination. */
export const inline: fc.Arbitrary<string> = fc
  .tuple(fc.array(token, { maxLength: 14 }), fc.constantFrom("", " ", " ", " "))
  .map(([ts, sep]) => ts.join(sep));

const prefixed = (prefixes: readonly string[]) =>
  fc.tuple(fc.constantFrom(...prefixes), inline).map(([p, l]) => `${p}${l}`);

const lines = (arb: fc.Arbitrary<string>, max: number) =>
  fc.array(arb, { minLength: 1, maxLength: max }).map((ls) => ls.join("\n"));

const paragraph = lines(inline, 6);
const list = lines(prefixed(["- ", "* ", "1. ", "10) ", "  - ", "    1. ", "- [ ] ", "- [x] "]), 8);
const heading = prefixed(["# ", "## ", "###### ", "#"]);
const quote = lines(prefixed(["> ", ">", "> > ", "> - "]), 5);
const table = fc
  .array(
    fc.array(
      inline.map((c) => c.replace(/\n/g, " ")),
      { minLength: 1, maxLength: 4 },
    ),
    {
      minLength: 1,
      maxLength: 6,
    },
  )
  .map((rows) => {
    const [head, ...body] = rows.map((cells) => `| ${cells.join(" | ")} |`);
    return [head, "| --- | :-: |", ...body].join("\n");
  });

const fenceMarker = fc.constantFrom("```", "```", "~~~", "````", "`````", "   ```", "    ```");
const fence: fc.Arbitrary<string> = fc
  .record({
    marker: fenceMarker,
    info: fc.oneof(fc.constantFrom("", "ts", "python", "c++", "shell session"), inline),
    body: fc.array(
      fc.oneof({ weight: 5, arbitrary: inline }, { weight: 1, arbitrary: fenceMarker }),
      {
        maxLength: 12,
      },
    ),
    nested: fc.boolean(),
    closed: fc.constantFrom(true, true, true, false),
  })
  .map(({ marker, info, body, nested, closed }) => {
    const inner = nested ? ["```js", ...body, "```"] : body;
    return [`${marker}${info}`, ...inner, ...(closed ? [marker.trim()] : [])].join("\n");
  });

/** Lines far longer than a message, of one repeated token (so splits fall inside them). */
const longLine = fc
  .tuple(
    fc.constantFrom("x", "😀", "lorem ipsum ", "<!channel>", "@here ", "**", "a\u200B", "עב "),
    fc.integer({ min: 50, max: 4_000 }),
  )
  .map(([t, n]) => t.repeat(n));

const block = fc.oneof(
  { weight: 4, arbitrary: paragraph },
  { weight: 2, arbitrary: list },
  { weight: 1, arbitrary: heading },
  { weight: 1, arbitrary: quote },
  { weight: 2, arbitrary: table },
  { weight: 3, arbitrary: fence },
  { weight: 1, arbitrary: longLine },
);

/** A Markdown answer as a model might write it, hostile in every place it can be. */
export const markdown: fc.Arbitrary<string> = fc
  .tuple(
    fc.array(block, { maxLength: 12 }),
    fc.constantFrom("\n\n", "\n", "\n\n\n", "\n \n", "\r\n\r\n", "\r\n", ""),
  )
  .map(([blocks, sep]) => blocks.join(sep));

/** Slack ids as Slack sends them. */
export const userId = fc.stringMatching(/^[UW][A-Z0-9]{8,10}$/);
export const channelId = fc.stringMatching(/^[CDG][A-Z0-9]{8,10}$/);
export const teamId = fc.stringMatching(/^T[A-Z0-9]{8,10}$/);
export const ts = fc
  .tuple(
    fc.integer({ min: 1_000_000_000, max: 2_000_000_000 }),
    fc.integer({ min: 0, max: 999_999 }),
  )
  .map(([s, us]) => `${s}.${String(us).padStart(6, "0")}`);

/** A text that would still ping someone: `<!…>`, `<@…>`, `<#…>`, or a bare @channel/@here/@everyone. */
const RAW_MENTION = /<[!@#]|(?:^|[^\w])@(?:channel|here|everyone)\b/i;

/**
 * The first raw mention in `text`, or undefined. `allowed` are the mentions the app writes on
 * purpose (who asked, who pressed Stop), removed before looking.
 */
export function rawMention(text: string, allowed: readonly string[] = []): string | undefined {
  let rest = text;
  for (const a of allowed) rest = rest.split(a).join("");
  // An @ inside a link's URL (`<https://host/@here|label>`) is part of the address, not a word.
  rest = rest.replace(/<https?:\/\/[^|>]*/g, (url) => url.replace(/@/g, "%40"));
  const m = RAW_MENTION.exec(rest);
  return m ? rest.slice(Math.max(0, m.index - 10), m.index + 20) : undefined;
}

const NOT_SHOWN = ["action_id", "block_id", "value", "style", "type", "url", "callback_id"];
/**
 * Shown, but as the text of an input box that the person edits, not as a message: Slack
 * resolves no mention there (what they submit is neutralised when it is posted).
 */
const NOT_PARSED = ["initial_value"];

function walkTexts(value: unknown, key: string, plain: boolean): string[] {
  if (!plain && (isPlainText(value) || NOT_PARSED.includes(key))) return [];
  if (typeof value === "string") return NOT_SHOWN.includes(key) ? [] : [value];
  if (Array.isArray(value)) return value.flatMap((v) => walkTexts(v, key, plain));
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).flatMap(([k, v]) => walkTexts(v, k, plain));
  }
  return [];
}

/** Every string in a Slack payload that Slack shows (not ids, values or styles). */
export const shownTexts = (value: unknown): string[] => walkTexts(value, "", true);

/**
 * The shown strings Slack parses for mentions: not `plain_text` objects (labels, buttons,
 * menu options), which Slack shows as they are, nor the initial text of an input.
 */
export const parsedTexts = (value: unknown): string[] => walkTexts(value, "", false);

const isPlainText = (v: unknown): boolean =>
  typeof v === "object" && v !== null && (v as { type?: unknown }).type === "plain_text";

/** Text objects (section, context, button labels) that pass Slack's 3,000 characters. */
export function overlongTextObject(value: unknown): string | undefined {
  if (Array.isArray(value)) {
    for (const v of value) {
      const found = overlongTextObject(v);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const obj = value as Record<string, unknown>;
  if (
    (obj.type === "mrkdwn" || obj.type === "plain_text") &&
    typeof obj.text === "string" &&
    obj.text.length > 3000
  ) {
    return `${obj.type} text of ${obj.text.length} characters`;
  }
  for (const v of Object.values(obj)) {
    const found = overlongTextObject(v);
    if (found) return found;
  }
  return undefined;
}

/** A leak of a JavaScript value's default string form into Slack ("[object Object]"). */
export const leaksJs = (text: string): boolean =>
  text.includes("[object ") || text.includes("[native code]");
