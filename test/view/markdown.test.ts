/**
 * How a streamed answer looks in Slack `markdown` blocks: a half-written answer renders
 * cleanly while it streams, and a long answer is split into messages Slack accepts without
 * breaking code blocks or losing a character.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { repairPartialMarkdown, splitMarkdown } from "../../src/view/markdown.ts";
import { MESSAGE_MARKDOWN_LIMIT } from "../../src/view/render.ts";

// ---------------------------------------------------------------------------------------
// Oracles, written from CommonMark rather than from the implementation.

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** The fence left open at the end of `md` (CommonMark fenced code blocks), if any. */
function openFence(md: string): string | undefined {
  let open: string | undefined;
  for (const raw of md.split("\n")) {
    const m = FENCE_LINE.exec(raw.replace(/\r$/, ""));
    if (!m) continue;
    const run = m[1] ?? "";
    const rest = m[2] ?? "";
    if (open === undefined) {
      // "If the info string comes after a backtick fence, it may not contain any backticks."
      if (run[0] === "`" && rest.includes("`")) continue;
      open = run;
    } else if (run[0] === open[0] && run.length >= open.length && rest.trim() === "") {
      open = undefined;
    }
  }
  return open;
}

const fenceLines = (md: string) =>
  md.split("\n").filter((l) => /^ {0,3}```/.test(l.replace(/\r$/, ""))).length;

const noSpace = (s: string) => s.replace(/\s+/g, "");

/**
 * Whether `parts` hold exactly the non-whitespace characters of `original`, in order, once
 * the fence lines the splitter adds at a cut (a closing marker at the end of one part and
 * the same marker with its info string at the start of the next) are taken out. A closing
 * and opening fence that were in the original are kept, so both readings are tried.
 */
function sameContent(original: string, parts: readonly string[]): boolean {
  const target = noSpace(original);
  const memo = new Map<string, boolean>();
  const added = (prev: string, next: string) => {
    const close = /(?:^|\n)(`{3,}|~{3,})$/.exec(prev)?.[1];
    const reopen = /^(`{3,}|~{3,})([^\n]*)(?:\n|$)/.exec(next);
    return close !== undefined && reopen?.[1] === close
      ? { close: close.length, reopen: reopen[0].length }
      : undefined;
  };
  const match = (i: number, pos: number, skipReopen: number): boolean => {
    if (i === parts.length) return pos === target.length;
    const key = `${i}:${pos}:${skipReopen}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    const part = (parts[i] ?? "").slice(skipReopen);
    const pair = i + 1 < parts.length ? added(parts[i] ?? "", parts[i + 1] ?? "") : undefined;
    const attempt = (body: string, nextSkip: number) => {
      const chars = noSpace(body);
      return target.startsWith(chars, pos) && match(i + 1, pos + chars.length, nextSkip);
    };
    const ok =
      (pair !== undefined && attempt(part.slice(0, part.length - pair.close), pair.reopen)) ||
      attempt(part, 0);
    memo.set(key, ok);
    return ok;
  };
  return match(0, 0, 0);
}

// ---------------------------------------------------------------------------------------
// Markdown-ish answers: paragraphs, lists, fences with languages, long lines, emoji and
// surrogate pairs, CRLF line ends. Prose never starts a line with ``` or ~~~, so the only
// fences are the ones generated as such.

const VOCABULARY = [
  "the",
  "answer",
  "is",
  "Slack",
  "deploy",
  "**bold**",
  "`npm test`",
  "~~old~~",
  "__under__",
  "[docs](https://example.com/a_b)",
  "😀",
  "👩🏽‍💻",
  "👨‍👩‍👧",
  "日本語",
  "naïve",
  "<!channel>",
  "@here",
  "<@U024BE7LH>",
  "a&b",
  "x<y>z",
  "#1",
  "-",
  "1.",
  "|",
  "\t",
];

const word = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...VOCABULARY) },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: "grapheme", minLength: 1, maxLength: 8 })
      .map((s) => s.replace(/[\s`~]/g, "x")),
  },
);

const line = fc
  .array(word, { minLength: 1, maxLength: 24 })
  .map((ws) => ws.join(" "))
  .chain((l) => fc.constantFrom(l, `- ${l}`, `## ${l}`, `> ${l}`, `   ${l}`));

const paragraph = fc.array(line, { minLength: 1, maxLength: 6 }).map((ls) => ls.join("\n"));

const longLine = fc.oneof(
  fc.integer({ min: 100, max: 15_000 }).map((n) => "x".repeat(n)),
  fc.integer({ min: 50, max: 6_000 }).map((n) => "😀".repeat(n)),
  fc.integer({ min: 20, max: 2_000 }).map((n) => "lorem ipsum ".repeat(n).trim()),
  fc.array(word, { minLength: 50, maxLength: 600 }).map((ws) => ws.join(" ")),
);

const codeLine = fc.oneof(
  { weight: 6, arbitrary: line.map((l) => `  ${l}`) },
  { weight: 1, arbitrary: fc.constant("") },
  { weight: 1, arbitrary: longLine.map((l) => l.slice(0, 600)) },
);

const fence = (closed: boolean) =>
  fc
    .record({
      marker: fc.constantFrom("```", "```", "```", "~~~", "````"),
      lang: fc.constantFrom("", "ts", "python", "json", "c++", "shell session"),
      code: fc.array(codeLine, { maxLength: 250 }),
    })
    .map(
      ({ marker, lang, code }) =>
        `${marker}${lang}\n${code.join("\n")}${closed ? `${code.length > 0 ? "\n" : ""}${marker}` : ""}`,
    );

const markdownish = fc
  .record({
    blocks: fc.array(
      fc.oneof(
        { weight: 4, arbitrary: paragraph },
        { weight: 2, arbitrary: fence(true) },
        { weight: 1, arbitrary: longLine },
      ),
      { maxLength: 14 },
    ),
    separator: fc.constantFrom("\n\n", "\n", "\n\n\n", "\n \n"),
    unclosedTail: fc.option(fence(false), { nil: undefined }),
    crlf: fc.boolean(),
  })
  .map(({ blocks, separator, unclosedTail, crlf }) => {
    const text = [...blocks, ...(unclosedTail ? [unclosedTail] : [])].join(separator);
    return crlf ? text.replace(/\n/g, "\r\n") : text;
  });

/** Valid documents (every fence closed) for the streaming properties. */
const documents = fc
  .array(
    fc.oneof(
      paragraph.map((p) => p.slice(0, 300)),
      fc
        .record({
          marker: fc.constantFrom("```", "~~~", "````"),
          lang: fc.constantFrom("", "ts", "python"),
          code: fc.array(
            line.map((l) => l.slice(0, 60)),
            { maxLength: 5 },
          ),
          nested: fc.boolean(),
        })
        .map(({ marker, lang, code, nested }) => {
          const body = marker === "````" && nested ? ["```js", ...code, "```"] : code;
          return [`${marker}${lang}`, ...body, marker].join("\n");
        }),
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((blocks) => blocks.join("\n\n"));

const simpleDocuments = documents.filter((d) => !/^(~~~|````)/m.test(d));

const limits = fc.oneof(
  fc.integer({ min: 200, max: 1_000 }),
  fc.integer({ min: 200, max: 12_000 }),
);

// ---------------------------------------------------------------------------------------

describe("repairPartialMarkdown: a half-streamed answer renders cleanly", () => {
  it("closes a code block that is still being written", () => {
    expect(repairPartialMarkdown("Here you go:\n```ts\nconst a = 1;")).toBe(
      "Here you go:\n```ts\nconst a = 1;\n```",
    );
    expect(repairPartialMarkdown("```python\nprint(1)\n")).toBe("```python\nprint(1)\n```");
  });

  it("closes with the marker that opened the block (~~~, ````)", () => {
    expect(repairPartialMarkdown("~~~sh\nls")).toBe("~~~sh\nls\n~~~");
    expect(repairPartialMarkdown("````md\n```js\nx\n```\nmore")).toBe(
      "````md\n```js\nx\n```\nmore\n````",
    );
  });

  it("keeps a closing fence that has just arrived", () => {
    expect(repairPartialMarkdown("```ts\nconst a = 1;\n```")).toBe("```ts\nconst a = 1;\n```");
    expect(repairPartialMarkdown("~~~\nx\n~~~")).toBe("~~~\nx\n~~~");
  });

  it("closes a block whose opening line is still streaming", () => {
    expect(openFence(repairPartialMarkdown("Intro\n```"))).toBeUndefined();
    expect(openFence(repairPartialMarkdown("Intro\n```pyt"))).toBeUndefined();
  });

  it("closes a code block in an answer with CRLF line ends", () => {
    const repaired = repairPartialMarkdown("Intro\r\n```js\r\nconst a = 1;\r\n");
    expect(openFence(repaired)).toBeUndefined();
    expect(repaired).toBe("Intro\r\n```js\r\nconst a = 1;\r\n```");
  });

  it("leaves a finished answer exactly as it is", () => {
    const done =
      "# Title\n\nSome **bold** and `code` and [a link](https://example.com).\n\n```ts\nx\n```\n";
    expect(repairPartialMarkdown(done)).toBe(done);
    expect(repairPartialMarkdown("")).toBe("");
  });

  it("drops a **, ~~ or __ marker whose partner has not arrived yet", () => {
    expect(repairPartialMarkdown("This is **impor")).toBe("This is impor");
    expect(repairPartialMarkdown("This is ~~wro")).toBe("This is wro");
    expect(repairPartialMarkdown("This is __underl")).toBe("This is underl");
    expect(repairPartialMarkdown("**done** and **ha")).toBe("**done** and ha");
  });

  it("drops an inline code backtick whose partner has not arrived yet", () => {
    expect(repairPartialMarkdown("Run `npm i")).toBe("Run npm i");
    expect(repairPartialMarkdown("Run `npm i` then `npm t")).toBe("Run `npm i` then npm t");
  });

  it("does not count markers that sit inside inline code", () => {
    expect(repairPartialMarkdown("Use `a**b` to multiply")).toBe("Use `a**b` to multiply");
    expect(repairPartialMarkdown("Use `__init__` here")).toBe("Use `__init__` here");
  });

  it("only touches the line being written", () => {
    expect(repairPartialMarkdown("an odd ** on an earlier line\nand the **last")).toBe(
      "an odd ** on an earlier line\nand the last",
    );
    // Finished lines stay as posted: an earlier unfinished link or _ does not reach past them.
    expect(repairPartialMarkdown("a [b](https://x\n\nnext")).toBe("a [b](https://x\n\nnext");
    expect(repairPartialMarkdown("_x\n\n")).toBe("_x\n\n");
  });

  it("cuts a link or image whose target is still being written", () => {
    expect(repairPartialMarkdown("See [the docs](https://exa")).toBe("See ");
    expect(repairPartialMarkdown("See [the do")).toBe("See ");
    expect(repairPartialMarkdown("![diagram](https://example.com/d")).toBe("");
    expect(repairPartialMarkdown("[a](https://a.example) and [b](https://b.ex")).toBe(
      "[a](https://a.example) and ",
    );
  });

  it("keeps finished links and task-list boxes", () => {
    expect(repairPartialMarkdown("See [docs](https://example.com) now")).toBe(
      "See [docs](https://example.com) now",
    );
    expect(repairPartialMarkdown("- [ ] write tests")).toBe("- [ ] write tests");
  });

  it("treats ```inline``` at the start of a line as inline code, not as an open block", () => {
    // CommonMark: a backtick fence's info string may not contain backticks.
    const line = "```npm install``` and then run it";
    expect(repairPartialMarkdown(line)).toBe(line);
    expect(repairPartialMarkdown(`Intro\n${line}\nmore`)).toBe(`Intro\n${line}\nmore`);
  });

  it("never leaves an odd number of ``` fence lines, whatever prefix has streamed in", () => {
    fc.assert(
      fc.property(simpleDocuments, (doc) => {
        for (let end = 0; end <= doc.length; end++) {
          const shown = repairPartialMarkdown(doc.slice(0, end));
          if (fenceLines(shown) % 2 !== 0) return false;
        }
        return true;
      }),
      { numRuns: 40 },
    );
  });

  it("never leaves a code block open, whatever prefix has streamed in (nested fences, ~~~)", () => {
    fc.assert(
      fc.property(documents, fc.boolean(), (doc, crlf) => {
        const text = crlf ? doc.replace(/\n/g, "\r\n") : doc;
        for (let end = 0; end <= text.length; end++) {
          const prefix = text.slice(0, end);
          const shown = repairPartialMarkdown(prefix);
          if (openFence(shown) !== undefined) return false;
          // Repair only ever closes or trims what is being written.
          if (!shown.startsWith(prefix.slice(0, prefix.lastIndexOf("\n") + 1))) return false;
        }
        return true;
      }),
      { numRuns: 40 },
    );
  });
});

describe("splitMarkdown: long answers become messages Slack accepts", () => {
  it("keeps a short answer in one message", () => {
    expect(splitMarkdown("Hello **world**\n\n", 200)).toEqual(["Hello **world**"]);
    expect(splitMarkdown("", 200)).toEqual([""]);
  });

  it("refuses a limit too small to split sensibly", () => {
    expect(() => splitMarkdown("text", 199)).toThrow(RangeError);
  });

  it("splits a 60,000-character answer into messages of at most 10,000 characters", () => {
    const paragraphs = Array.from(
      { length: 300 },
      (_, i) => `Paragraph ${i}: ${"lorem ipsum dolor sit amet ".repeat(7).trim()}`,
    );
    const answer = paragraphs.join("\n\n");
    expect(answer.length).toBeGreaterThan(60_000);
    const parts = splitMarkdown(answer, MESSAGE_MARKDOWN_LIMIT);
    expect(parts.length).toBeGreaterThanOrEqual(7);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(MESSAGE_MARKDOWN_LIMIT);
    // Cut at paragraph breaks: every message starts with a whole paragraph.
    for (const part of parts) expect(part).toMatch(/^Paragraph \d+: lorem/);
    expect(parts.join("\n\n")).toBe(answer);
  });

  it("prefers a paragraph break, then a line end, then a space", () => {
    const para = `${"word ".repeat(30).trim()}\n${"next ".repeat(30).trim()}`;
    const atBreak = splitMarkdown(`${para}\n\n${para}\n\n${para}`, 400);
    expect(atBreak[0]).toBe(para);

    const lines = Array.from({ length: 20 }, (_, i) => `line ${i} ${"x".repeat(30)}`);
    const atLineEnd = splitMarkdown(lines.join("\n"), 300);
    for (const part of atLineEnd)
      expect(part.split("\n").every((l) => lines.includes(l))).toBe(true);

    const sentence = "alpha beta gamma delta ".repeat(40).trim();
    const atSpace = splitMarkdown(sentence, 300);
    for (const part of atSpace) expect(part).toMatch(/^(alpha|beta|gamma|delta)( \w+)*$/);
    expect(atSpace.join(" ")).toBe(sentence);
  });

  it("never splits inside a code block when a paragraph break is near", () => {
    const intro = `${"Some introduction text. ".repeat(12).trim()}\n\n`;
    const code = `\`\`\`ts\n${Array.from({ length: 12 }, (_, i) => `const v${i} = ${i};`).join("\n")}\n\`\`\``;
    const text = `${intro}${code}\n\nAfter the code.`;
    const limit = intro.length + 80; // the limit falls inside the code block
    const parts = splitMarkdown(text, limit);
    expect(parts).toEqual([intro.trim(), `${code}\n\nAfter the code.`]);
  });

  it("reopens a code block with its language when it must be cut", () => {
    const code = Array.from({ length: 400 }, (_, i) => `    print("line ${i}")`);
    const text = `Here is the script:\n\n\`\`\`python\n${code.join("\n")}\n\`\`\`\n\nDone.`;
    const parts = splitMarkdown(text, 2_000);
    expect(parts.length).toBeGreaterThan(3);
    for (const [i, part] of parts.entries()) {
      expect(part.length).toBeLessThanOrEqual(2_000);
      expect(openFence(part)).toBeUndefined();
      if (i > 0 && i < parts.length - 1) {
        expect(part.startsWith("```python\n")).toBe(true);
        expect(part.endsWith("\n```")).toBe(true);
      }
    }
    expect(parts.at(-1)).toMatch(/^```python\n[\s\S]*\n```\n\nDone\.$/);
    expect(sameContent(text, parts)).toBe(true);
    // Indentation inside the code survives the cut.
    for (const part of parts.slice(1)) expect(part.split("\n")[1]).toMatch(/^ {4}print/);
  });

  it("reopens ~~~ and ```` blocks with the same marker", () => {
    for (const marker of ["~~~", "````"]) {
      const body = Array.from({ length: 60 }, (_, i) => `row ${i} ${"=".repeat(20)}`).join("\n");
      const parts = splitMarkdown(`${marker}diff\n${body}\n${marker}`, 400);
      for (const part of parts) {
        expect(part.startsWith(`${marker}diff\n`)).toBe(true);
        expect(part.endsWith(`\n${marker}`)).toBe(true);
        expect(openFence(part)).toBeUndefined();
      }
    }
  });

  it("reopens a code block in an answer with CRLF line ends", () => {
    const code = Array.from({ length: 300 }, (_, i) => `print(${i})`).join("\r\n");
    const text = `Intro\r\n\r\n\`\`\`python\r\n${code}\r\n\`\`\`\r\n`;
    const parts = splitMarkdown(text, 1_000);
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts.slice(1)) expect(part.startsWith("```python\n")).toBe(true);
    for (const part of parts) expect(openFence(part)).toBeUndefined();
    expect(sameContent(text, parts)).toBe(true);
  });

  it("cuts a line without spaces anywhere, never between the halves of an emoji", () => {
    for (const text of ["x".repeat(25_000), "😀".repeat(12_345), `a ${"👩🏽‍💻".repeat(3_000)}`]) {
      const parts = splitMarkdown(text, 1_001);
      for (const part of parts) {
        expect(part.length).toBeLessThanOrEqual(1_001);
        expect(part.isWellFormed()).toBe(true);
      }
      expect(parts.join("").replace(/\s/g, "")).toBe(text.replace(/\s/g, ""));
    }
  });

  it("never sends an empty message for a run of spaces", () => {
    const parts = splitMarkdown(`start\n${" ".repeat(25_000)}end`, 10_000);
    expect(parts).not.toContain("");
    expect(noSpace(parts.join(""))).toBe("startend");
  });

  it("stays within the limit for a fence marker longer than four characters", () => {
    const text = `\`\`\`\`\`\`js\n${"x".repeat(30_000)}\n\`\`\`\`\`\``;
    for (const part of splitMarkdown(text, 10_000)) expect(part.length).toBeLessThanOrEqual(10_000);
  });

  it("finishes, within the limit, when a line that opens a fence runs on for pages", () => {
    // A runaway "info string" must not be repeated at the top of every following part (or,
    // when it nearly fills a part on its own, leave no room to make progress).
    const texts = [
      `\`\`\`${"z".repeat(191)}\n${"code line\n".repeat(3)}\`\`\``,
      `\`\`\`${"z".repeat(500)}\n${"code line\n".repeat(100)}\`\`\``,
      `\`\`\`${"{ 'a': 1 }".repeat(2_000)}\n\`\`\``,
      `${"`".repeat(12_000)}\ncode\n${"`".repeat(12_000)}`,
    ];
    for (const text of texts) {
      for (const limit of [200, 1_000, 10_000]) {
        const parts = splitMarkdown(text, limit);
        expect(parts.length).toBeLessThan(text.length);
        for (const part of parts) expect(part.length).toBeLessThanOrEqual(limit);
      }
    }
  });

  it("keeps every part within the limit and loses no character (property)", () => {
    fc.assert(
      fc.property(markdownish, limits, (text, limit) => {
        const parts = splitMarkdown(text, limit);
        for (const part of parts) {
          if (part.length > limit) return false;
          if (part === "" && parts.length > 1) return false;
        }
        return sameContent(text, parts);
      }),
      { numRuns: 150 },
    );
  });

  it("closes every code block it cuts, so each message renders on its own (property)", () => {
    fc.assert(
      fc.property(markdownish, limits, (text, limit) => {
        const parts = splitMarkdown(text, limit);
        // Every message but the last is balanced; the last is as open as the answer is.
        return parts.every((part, i) => i === parts.length - 1 || openFence(part) === undefined);
      }),
      { numRuns: 100 },
    );
  });

  describe("messages already posted stay the same while the answer grows", () => {
    it("gives the same leading parts for every prefix of an answer (property)", () => {
      fc.assert(
        fc.property(
          markdownish,
          limits,
          fc.double({ min: 0, max: 1, noNaN: true }),
          (text, limit, at) => {
            const prefix = text.slice(0, Math.floor(text.length * at));
            const whole = splitMarkdown(text, limit);
            const early = splitMarkdown(prefix, limit);
            expect(early.slice(0, -1)).toEqual(whole.slice(0, early.length - 1));
          },
        ),
        { numRuns: 150 },
      );
    });

    it("holds for the repaired text shown while streaming, once a line is complete", () => {
      fc.assert(
        fc.property(
          markdownish,
          limits,
          fc.double({ min: 0, max: 1, noNaN: true }),
          (text, limit, at) => {
            const cut = text.lastIndexOf("\n", Math.floor(text.length * at));
            const prefix = text.slice(0, cut + 1);
            // A code block still open gets its closing fence while it streams: those added
            // characters may move the last cut (the example below shows it).
            fc.pre(repairPartialMarkdown(prefix).length <= prefix.length);
            const whole = splitMarkdown(text, limit);
            const early = splitMarkdown(repairPartialMarkdown(prefix), limit);
            expect(early.slice(0, -1)).toEqual(whole.slice(0, early.length - 1));
          },
        ),
        { numRuns: 150 },
      );
    });

    it("can re-cut the last finished message while a code block is open", () => {
      // The repair closes the open block; its fence does not fit the message any more, so
      // the block moves to a message of its own until the answer goes on.
      const text = `${"x".repeat(180)}\n\n\`\`\`shell session\n`;
      const streamed = splitMarkdown(repairPartialMarkdown(text), 200);
      expect(streamed).toEqual(["x".repeat(180), "```shell session\n```"]);
      expect(splitMarkdown(text, 200)).toEqual([`${"x".repeat(180)}\n\n\`\`\`shell session`]);
    });

    it("can re-cut the last finished message while a line is half-written", () => {
      // Repair drops the unpaired "**" of the line being written; when that line is long
      // enough to be cut, the cut moves, so the earlier message is edited once more. The
      // relay re-renders every message on each edit, so nothing is lost, it only costs an
      // edit; the complete answer splits as before.
      const head = `**${"y".repeat(1_000)}`;
      const streamed = splitMarkdown(repairPartialMarkdown(head), 300);
      const grown = splitMarkdown(`${head}** done`, 300);
      expect(streamed[0]).not.toBe(grown[0]);
      expect(splitMarkdown(`${head}**`, 300)[0]).toBe(grown[0]);
    });
  });
});
