/**
 * Rendering a streamed answer is linear in its length, whatever the answer: each hostile
 * shape the benchmark times (`npm run bench:render`), and links whose labels look like other
 * hosts' addresses (each one tagged), is rendered at n and 4n characters, and 4n may take at
 * most 10 times as long as n (linear: about 4; quadratic: 16). Each size is
 * timed by its fastest of five runs, and anything under 2 ms counts as 2 ms: at these sizes a
 * linear pass takes well under that, so timer noise and a loaded machine cannot fail the
 * test, and the quadratic expressions this replaced (0.3 s for 16 KiB of "[") cannot pass it.
 * A ratio over 10 is measured twice more (the clock is the wall's: a process descheduled
 * through every run of one size is rare, through three measurements rarer still).
 */
import { describe, expect, it } from "vitest";
import { StreamablePrefix, streamablePrefix } from "../../src/view/markdown.ts";
import { renderRun } from "../../src/view/render.ts";
import { fill, HOSTILE_SHAPES, prose } from "../support/hostile-text.ts";
import { settledRatio } from "../support/linear-time.ts";

const N = 16 * 1024;
const FLOOR_MS = 2;

function fastest(fn: () => unknown): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    fn();
    best = Math.min(best, performance.now() - started);
  }
  return Math.max(best, FLOOR_MS);
}

const PASSES = {
  "the interim edit": (text: string) =>
    renderRun({ text, state: "running", elapsedMs: 1000, stopValue: "{}" }),
  "the final edit": (text: string) => renderRun({ text, state: "completed", elapsedMs: 1000 }),
  "native streaming": (text: string) => streamablePrefix(`${text}\n`),
  // Native streaming reads the answer at every delta (here 64 characters each).
  "native streaming, delta by delta": (text: string) => {
    const growing = new StreamablePrefix();
    for (let end = 64; end < text.length + 64; end += 64) growing.of(text.slice(0, end));
  },
};

/** Links whose labels look like other hosts' addresses: each label is read, and tagged. */
const LINK_SHAPES = [
  { name: "links labelled with another host", make: (n: number) => fill("[a.b](https://c.d) ", n) },
  { name: "short labels in labels", make: (n: number) => fill("[[a.b](http://c)](http://d)", n) },
  { name: "a line of link openers", make: (n: number) => `${fill("[a.b", n - 14)}](https://c.d)` },
];

describe.each(Object.entries(PASSES))("%s of an answer", (_name, pass) => {
  it.each([{ name: "prose", make: prose }, ...HOSTILE_SHAPES, ...LINK_SHAPES])(
    "takes linear time on $name",
    ({ make }) => {
      const small = make(N);
      const large = make(4 * N);
      pass(small); // warm-up
      const ratio = settledRatio(() => fastest(() => pass(large)) / fastest(() => pass(small)), 10);
      expect(ratio).toBeLessThanOrEqual(10);
    },
  );
});
