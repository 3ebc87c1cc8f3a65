/**
 * Deterministic Markdown answers for the simulator: the same prompt always gives the same
 * answer. Answers look like an agent's output (headings, lists, bold, inline code, links,
 * fenced code, tables, quotes) and deliberately contain what a Slack renderer must handle:
 * non-ASCII text and emoji, `<`, `>` and `&`, `*` and `_` inside code.
 */

/** 32-bit FNV-1a hash of a string. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** One step of mulberry32: returns the next state and a float in [0, 1). */
export function nextRandom(state: number): [number, number] {
  const next = (state + 0x6d2b79f5) | 0;
  let t = next;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return [next, ((t ^ (t >>> 14)) >>> 0) / 4294967296];
}

export type Random = () => number;

export function seededRandom(seed: number): Random {
  let state = seed | 0;
  return () => {
    const [next, value] = nextRandom(state);
    state = next;
    return value;
  };
}

function pick<T>(rnd: Random, items: readonly T[]): T {
  const item = items[Math.floor(rnd() * items.length)];
  if (item === undefined) throw new Error("pick from an empty list");
  return item;
}

function between(rnd: Random, min: number, max: number): number {
  return min + Math.floor(rnd() * (max - min + 1));
}

const NOUNS = [
  "cache layer",
  "API gateway",
  "retry policy",
  "rate limiter",
  "database index",
  "deployment pipeline",
  "feature flag",
  "message queue",
  "search index",
  "auth flow",
  "webhook handler",
  "landing page",
  "image pipeline",
  "billing service",
] as const;

const IDENTS = [
  "maxRetries",
  "timeout_ms",
  "use_cache",
  "retryAfter",
  "page_size",
  "__init__",
  "on_error",
  "batchSize",
] as const;

const SENTENCES: readonly ((n: string, rnd: Random) => string)[] = [
  (n, r) =>
    `The **${n}** should handle ${between(r, 20, 900)} requests per second without blocking.`,
  (n, r) => `Set \`${pick(r, IDENTS)}\` before you enable the ${n}; the default is rarely right.`,
  (n) =>
    `See [the ${n} guide](https://example.com/docs/${n.replace(/ /g, "-")}?ref=sim&lang=en) for the details.`,
  (n) => `A naïve approach would rebuild the ${n} on every call — cache it instead 🚀.`,
  (n) => `Remember that \`a < b && b > c\` only holds once the ${n} is warm.`,
  (n, r) => `Costs drop by about ${between(r, 5, 60)}% once the ${n} is tuned & monitored.`,
  (n) => `Names like “Café Ünïcode” and 日本語 must survive the round trip through the ${n}.`,
  (n) => `Keep the ${n} _simple_: fewer moving parts means fewer 3 a.m. pages ✅.`,
  (n, r) => `In our test run the ${n} answered in ${between(r, 2, 250)} ms at the 95th percentile.`,
  (n) => `Do not log secrets from the ${n}; mask them as \`***\` before they reach the logs.`,
  (n) => `The ${n} → worker → database path is where most of the latency hides.`,
  (n) => `Résumé of the trade-off: the ${n} is faster, but harder to reason about.`,
];

const CODE: readonly ((n: string, r: Random) => { language: string; code: string })[] = [
  (n, r) => ({
    language: "ts",
    code: [
      `export async function ${camel(n)}(input: string): Promise<number> {`,
      `  const items = input.split(",").filter((x) => x.length > 0 && x !== "*");`,
      `  // naïve on purpose: <${between(r, 2, 9)} items & no __dunder__ names`,
      `  return items.length * ${between(r, 2, 99)};`,
      "}",
    ].join("\n"),
  }),
  (n, r) => ({
    language: "python",
    code: [
      `def ${snake(n)}(rows: list[dict]) -> int:`,
      `    """Count rows whose score is > ${between(r, 1, 9)} and < 100."""`,
      "    return sum(1 for row in rows if 0 < row['score'] < 100 and row.get('__ok__'))",
    ].join("\n"),
  }),
  (n, r) => ({
    language: "bash",
    code: [
      `curl -sS "https://example.com/api/${snake(n)}?limit=${between(r, 1, 50)}&sort=desc" \\`,
      "  -H \"Accept: application/json\" | jq '.items[] | select(.size > 10)'",
    ].join("\n"),
  }),
  (n, r) => ({
    language: "json",
    code: JSON.stringify(
      { name: n, enabled: true, limit: between(r, 1, 500), tags: ["café", "🚀", "a<b"] },
      null,
      2,
    ),
  }),
  (n, r) => ({
    language: "sql",
    code: [
      `SELECT id, name FROM ${snake(n)}`,
      `WHERE score > ${between(r, 1, 90)} AND name <> '' -- skip *empty* names`,
      "ORDER BY score DESC LIMIT 10;",
    ].join("\n"),
  }),
];

function camel(n: string): string {
  return n
    .split(/[^a-zA-Z]+/)
    .filter(Boolean)
    .map((w, i) => (i === 0 ? w.toLowerCase() : w[0]?.toUpperCase() + w.slice(1).toLowerCase()))
    .join("");
}

function snake(n: string): string {
  return n.toLowerCase().replace(/[^a-z]+/g, "_");
}

function paragraph(rnd: Random, count: number): string {
  const parts: string[] = [];
  const used = new Set<number>();
  for (let i = 0; i < count; i++) {
    let k = Math.floor(rnd() * SENTENCES.length);
    while (used.has(k) && used.size < SENTENCES.length) k = (k + 1) % SENTENCES.length;
    used.add(k);
    if (used.size === SENTENCES.length) used.clear();
    parts.push((SENTENCES[k] ?? SENTENCES[0] ?? (() => ""))(pick(rnd, NOUNS), rnd));
  }
  return parts.join(" ");
}

function codeSection(rnd: Random): string {
  const noun = pick(rnd, NOUNS);
  const { language, code } = pick(rnd, CODE)(noun, rnd);
  return `### Example: ${noun}\n\n${paragraph(rnd, 1)}\n\n\`\`\`${language}\n${code}\n\`\`\``;
}

function bulletSection(rnd: Random): string {
  const items: string[] = [];
  const count = between(rnd, 3, 6);
  for (let i = 0; i < count; i++) {
    items.push(`- ${paragraph(rnd, 1)}`);
    if (rnd() < 0.25) items.push(`  - ${pick(rnd, SENTENCES)(pick(rnd, NOUNS), rnd)}`);
  }
  return `## ${pick(rnd, ["Key points", "What to check", "Risks", "Highlights"])}\n\n${items.join("\n")}`;
}

function numberedSection(rnd: Random): string {
  const count = between(rnd, 3, 5);
  const items: string[] = [];
  for (let i = 1; i <= count; i++) items.push(`${i}. ${paragraph(rnd, 1)}`);
  return `## ${pick(rnd, ["Steps", "Plan", "Next steps", "Rollout"])}\n\n${items.join("\n")}`;
}

function tableSection(rnd: Random): string {
  const rows: string[] = ["| Option | Latency | Notes |", "|---|---:|---|"];
  const count = between(rnd, 2, 4);
  for (let i = 0; i < count; i++) {
    rows.push(
      `| ${pick(rnd, NOUNS)} | ${between(rnd, 1, 400)} ms | ${pick(rnd, ["cheap", "fast", "risky", "naïve", "needs `tuning`", "p95 < 50 ms"])} |`,
    );
  }
  return `## Comparison\n\n${rows.join("\n")}`;
}

function quoteSection(rnd: Random): string {
  return `> **Note:** ${paragraph(rnd, between(rnd, 1, 2))}`;
}

function proseSection(rnd: Random): string {
  return `## ${pick(rnd, ["Overview", "Details", "Background", "Why it matters"])}\n\n${paragraph(rnd, between(rnd, 2, 4))}`;
}

const SECTIONS = [
  codeSection,
  bulletSection,
  numberedSection,
  tableSection,
  quoteSection,
  proseSection,
  proseSection,
] as const;

const MENTIONS =
  "Heads-up <!channel> and <!here> (and <!everyone>, <!subteam^S12345>): " +
  "please ask <@U12345> to review this in <#C12345> — or just @here.";

export interface AnswerOptions {
  /** The prompt text without directives. */
  prompt: string;
  /** Seed of the generator; the same seed gives the same answer. */
  seed: number;
  /** Wanted length in characters (UTF-16 code units). */
  length: number;
  /** 1 for the task, 2.. for its follow-ups. */
  turn: number;
  mention: boolean;
}

/** Shortens a text to at most `max` code units, never inside a surrogate pair. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (end > 0 && code >= 0xd800 && code <= 0xdbff) end--;
  return text.slice(0, end);
}

function quote(prompt: string, max = 160): string {
  const flat = prompt.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${cut(flat, max - 1)}…` : flat;
}

function titleOf(prompt: string): string {
  const words = prompt.replace(/\s+/g, " ").trim().split(" ").filter(Boolean).slice(0, 8);
  if (words.length === 0) return "Your task";
  const title = words.join(" ");
  return title[0]?.toUpperCase() + title.slice(1);
}

export function generateAnswer(options: AnswerOptions): string {
  const { length, prompt, turn } = options;
  const rnd = seededRandom(options.seed);
  const asked = prompt.trim() === "" ? "your task" : `“${quote(prompt)}”`;
  const intro =
    turn > 1
      ? `Following up on ${asked} (follow-up #${turn - 1}): here is what changes compared with the previous answer.`
      : `Here is my answer to ${asked}. ${paragraph(rnd, 1)}`;
  if (length < 300) {
    const short = `${intro} ${options.mention ? `${MENTIONS} ` : ""}${paragraph(rnd, 6)}`;
    let text = short;
    while (text.length < length) text += ` ${paragraph(rnd, 4)}`;
    return cut(text, length);
  }
  const closing = `\n\n---\n\nLet me know if you want me to go deeper on any of this ✅`;
  const parts: string[] = [`# ${titleOf(prompt)}`, intro];
  if (options.mention) parts.push(MENTIONS);
  let size = parts.reduce((n, p) => n + p.length + 2, 0);
  const budget = length - closing.length;
  let first = true;
  while (budget - size >= 60) {
    const remaining = budget - size;
    let section = first && remaining >= 250 ? codeSection(rnd) : pick(rnd, SECTIONS)(rnd);
    first = false;
    if (section.length > remaining + 40) {
      // Fill the rest with plain prose cut at a word boundary.
      const prose = paragraph(rnd, Math.ceil(remaining / 60) + 2);
      const trimmed = cut(prose, remaining);
      const space = trimmed.lastIndexOf(" ");
      section = `${space > remaining / 2 ? trimmed.slice(0, space) : trimmed}.`;
    }
    parts.push(section);
    size += section.length + 2;
  }
  return parts.join("\n\n") + closing;
}

const HIRAGANA = "あいうえおかきくけこさしすせそたちつてとなにぬねのは";
const KATAKANA = "アイウエオカキクケコサシスセソタチツテトナニヌネノハ";

/**
 * A `lang=ja` answer: each ASCII letter of the English one a kana. It keeps its length in
 * characters and its Markdown (headings, lists, tables, code fences: only letters change), and
 * takes about three times the UTF-8 bytes, as Japanese text does.
 */
export function inJapanese(text: string): string {
  return text.replace(/[a-zA-Z]/g, (c) => {
    const code = c.charCodeAt(0);
    return code >= 97 ? (HIRAGANA[code - 97] ?? c) : (KATAKANA[code - 65] ?? c);
  });
}

/** A `hostile=KIND` answer: the kind's unit repeated to exactly `length` characters. */
export function hostileAnswer(unit: string, length: number): string {
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

export interface CodeBlock {
  language: string;
  code: string;
}

/** The fenced code blocks of a Markdown text, in order. */
export function extractCodeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const fence = /^```([\w+-]*)[ \t]*\n([\s\S]*?)\n```[ \t]*$/gm;
  for (const m of markdown.matchAll(fence)) {
    blocks.push({ language: m[1] ?? "", code: m[2] ?? "" });
  }
  return blocks;
}
