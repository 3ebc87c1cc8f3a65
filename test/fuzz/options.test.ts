/**
 * Fuzzing the inline options (`[model=…, effort=high, thinking] prompt`): any text parses
 * without throwing, to options and a prompt that is the end of the text, or to an error that
 * names the valid keys or the key it is about; formatted options read back the same.
 */
import fc from "fast-check";
import { describe, expect } from "vitest";
import {
  formatOptions,
  OPTION_KEYS,
  parsePrompt,
  type TaskOptions,
} from "../../src/threads/options.ts";
import { inline } from "./arbitraries.ts";
import { fuzz } from "./fuzz.ts";

const VALID_KEYS = `Valid options: ${OPTION_KEYS.map((k) => `\`${k}\``).join(", ")}.`;

const keyish = fc.oneof(
  fc.constantFrom(...OPTION_KEYS, "Model", "EFFORT", "modle", "mod", "efort", "thinkin", "ctx", ""),
  fc.string({ maxLength: 8 }),
);
const valueish = fc.oneof(
  fc.constantFrom("low", "HIGH", "max", "on", "off", "yes", "0", "", "a=b", "<@U1>", "\u0007"),
  fc.string({ unit: "grapheme", maxLength: 10 }),
  fc.integer({ min: 190, max: 210 }).map((n) => "m".repeat(n)),
);
const item = fc.oneof(
  keyish,
  fc.tuple(keyish, valueish).map(([k, v]) => `${k}=${v}`),
);
/** A text that opens with an option group, a near miss of one, or anything at all. */
const promptText = fc.oneof(
  fc
    .record({
      lead: fc.constantFrom("", " ", "\n", "\t "),
      items: fc.array(item, { maxLength: 6 }),
      sep: fc.constantFrom(", ", ",", " ", " ,  "),
      close: fc.constantFrom("]", "]", "", "\n]"),
      rest: fc.oneof(inline, fc.constantFrom("", " [model=x] again", "]")),
    })
    .map(({ lead, items, sep, close, rest }) => `${lead}[${items.join(sep)}${close} ${rest}`),
  fc.string({ maxLength: 60 }),
  inline,
);

/**
 * A model or agent name an option group can carry: at most 200 characters, none of them a
 * space, a comma, `]`, `<`, `>` or a control character.
 */
const name = fc
  .oneof(fc.string({ unit: "grapheme", minLength: 1, maxLength: 200 }), keyish, valueish)
  .map((s) =>
    [...s]
      .filter((c) => c >= " " && !/[\s,\]<>]/.test(c))
      .join("")
      .slice(0, 200),
  )
  .filter((s) => s !== "" && s.isWellFormed());
const options: fc.Arbitrary<TaskOptions> = fc
  .record(
    {
      model: name,
      agent: name,
      effort: fc.constantFrom("low" as const, "medium" as const, "high" as const),
      thinking: fc.boolean(),
      context: fc.boolean(),
    },
    { requiredKeys: [] },
  )
  .filter((o) => Object.keys(o).length > 0);

describe("fuzz: parsePrompt", () => {
  fuzz("parsePrompt: never throws; a prompt that ends the text, or an error naming the keys", () =>
    fc.property(promptText, (text) => {
      const parsed = parsePrompt(text);
      if (parsed.ok) {
        expect(text.trim().endsWith(parsed.prompt)).toBe(true);
        expect(parsed.prompt).toBe(parsed.prompt.trim());
        if (Object.keys(parsed.options).length > 0) {
          expect(text.trimStart().startsWith("[")).toBe(true);
          // What was read is what formatOptions writes back.
          const again = parsePrompt(`${formatOptions(parsed.options)} ${parsed.prompt}`);
          expect(again).toEqual(parsed);
        }
      } else {
        const aboutAKey = OPTION_KEYS.some((k) => parsed.error.startsWith(`\`${k}\``));
        expect(aboutAKey || parsed.error.includes(VALID_KEYS)).toBe(true);
      }
    }),
  );

  fuzz("formatOptions: any options read back the same, the prompt untouched", () =>
    fc.property(options, fc.oneof(inline, fc.string({ maxLength: 100 })), (opts, prompt) => {
      const parsed = parsePrompt(`${formatOptions(opts)} ${prompt}`);
      expect(parsed).toEqual({ ok: true, options: opts, prompt: prompt.trim() });
    }),
  );
});
