/**
 * Answers written to hurt a renderer, and plain prose of the same size to compare them with:
 * what the hostile-render benchmark times and the render complexity tests and fuzz target use.
 * Each shape gives exactly `size` characters.
 */

/** `unit` repeated to exactly `size` characters. */
export const fill = (unit: string, size: number): string =>
  unit.repeat(Math.ceil(size / unit.length)).slice(0, size);

const SENTENCES = [
  "The service streams the answer while the agent works, one small piece at a time.",
  "Each message holds at most ten thousand characters, so a long answer spans several.",
  "A person can stop the run from the thread, and the answer keeps what it had so far.",
  "Files the agent wrote are attached below the answer, with a link when they are large.",
  "Nothing here is special: words, commas, full stops and the odd number like 42.",
];

/** Paragraphs of ordinary sentences, lines of about 80 characters, blank lines between. */
export function prose(size: number): string {
  const out: string[] = [];
  let n = 0;
  for (let i = 0; n < size; i++) {
    const line = SENTENCES[i % SENTENCES.length] ?? "";
    const sep = i % 4 === 3 ? "\n\n" : "\n";
    out.push(line, sep);
    n += line.length + sep.length;
  }
  return out.join("").slice(0, size);
}

export interface HostileShape {
  readonly name: string;
  readonly make: (size: number) => string;
}

export const HOSTILE_SHAPES: readonly HostileShape[] = [
  { name: "one line of brackets", make: (n) => fill("[", n) },
  { name: "brackets, closed at the end", make: (n) => `${fill("[", n - 1)}]` },
  { name: "link targets", make: (n) => `${fill("[](", n - 1)})` },
  { name: "image labels", make: (n) => fill("![", n) },
  { name: "one line of backticks", make: (n) => fill("`", n) },
  { name: "one line of asterisks", make: (n) => fill("*", n) },
  { name: "one line of underscores", make: (n) => fill("_", n) },
  { name: "one line of tildes", make: (n) => fill("~", n) },
  { name: "one line of mention starts", make: (n) => fill("<!", n) },
  { name: "one line of pipes", make: (n) => fill("|", n) },
  { name: "deep quote and list nesting", make: (n) => fill("> - [", n) },
  { name: "nested brackets", make: (n) => `${fill("[", n >> 1)}${fill("]", n - (n >> 1))}` },
  { name: "one huge word", make: (n) => fill("a", n) },
  { name: "spaces between words", make: (n) => fill(`x${" ".repeat(4095)}`, n) },
  { name: "a fence, then backticks and CRs", make: (n) => `\`\`\`${fill("`\r", n - 3)}` },
  { name: "tiny lines", make: (n) => fill("a\n", n) },
  { name: "tiny lines of backticks", make: (n) => fill("`\n", n) },
  { name: "tiny table rows", make: (n) => fill("|\n", n) },
  { name: "blank lines", make: (n) => fill("\n", n) },
];
