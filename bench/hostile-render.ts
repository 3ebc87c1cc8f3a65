/**
 * `npm run bench:render [-- --sizes 64,1024 --repeat 7]`
 *
 * How long the renderings the app does on a streamed answer take on hostile text: the interim
 * edit (`renderRun` of a running answer, which repairs half-written Markdown), the final one
 * (`renderRun` of a finished answer) and native streaming's `streamablePrefix`. Each hostile
 * answer is timed against plain prose of the same size in the same run (the baseline). Every
 * figure is the fastest of `--repeat` runs after a warm-up (every pass on every shape, at
 * every measured size), so other load on the machine does not count. Targets: hostile ≤ 2× prose, and ≤ 50 ms at 1 MiB; the process exits 1 when
 * one is missed.
 */
import { parseArgs } from "node:util";
import { streamablePrefix } from "../src/view/markdown.ts";
import { renderRun } from "../src/view/render.ts";
import type { RunState } from "../src/store/types.ts";
import { HOSTILE_SHAPES, prose } from "../test/support/hostile-text.ts";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "64,1024" },
    repeat: { type: "string", default: "7" },
  },
});
const sizesKiB = values.sizes.split(",").map(Number);
const repeat = Number(values.repeat);
const RATIO_MAX = 2;
const MS_PER_MIB_MAX = 50;

const render = (state: RunState) => (text: string) =>
  renderRun({ text, state, elapsedMs: 12_000, stopValue: "{}" });
const PASSES: ReadonlyArray<readonly [string, (text: string) => unknown]> = [
  ["interim edit", render("running")],
  ["final edit", render("completed")],
  ["native stream", (text) => streamablePrefix(`${text}\n`)],
];

/** The fastest of `repeat` runs, in milliseconds. */
function fastest(fn: (text: string) => unknown, text: string): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < repeat; i++) {
    const started = performance.now();
    fn(text);
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

// Warm-up: every pass on every shape, small and at each measured size, so the JIT has seen
// them all, as large as they will be timed.
for (const size of [4, ...sizesKiB].map((kib) => kib * 1024)) {
  for (const [, fn] of PASSES) {
    for (const shape of [prose, ...HOSTILE_SHAPES.map((s) => s.make)]) fn(shape(size));
  }
}

const rows: string[][] = [];
let failed = 0;
for (const kib of sizesKiB) {
  const size = kib * 1024;
  const base = prose(size);
  const baseMs = PASSES.map(([, fn]) => fastest(fn, base));
  rows.push([`${kib} KiB`, "prose (baseline)", ...baseMs.map((ms) => ms.toFixed(1)), "1.0", ""]);
  for (const shape of HOSTILE_SHAPES) {
    const text = shape.make(size);
    const ms = PASSES.map(([, fn]) => fastest(fn, text));
    // Each pass against the same pass on prose; below a millisecond, against a millisecond
    // (timer resolution and noise, not the text, decide such ratios).
    const ratio = Math.max(...ms.map((m, i) => m / Math.max(baseMs[i] ?? 0, 1)));
    const limitMs = (MS_PER_MIB_MAX * size) / 2 ** 20;
    const pass = ratio <= RATIO_MAX && Math.max(...ms) <= Math.max(limitMs, MS_PER_MIB_MAX);
    if (!pass) failed++;
    rows.push([
      `${kib} KiB`,
      shape.name,
      ...ms.map((m) => m.toFixed(1)),
      ratio.toFixed(1),
      pass ? "PASS" : "FAIL",
    ]);
  }
}

const head = ["size", "answer", ...PASSES.map(([name]) => `${name} (ms)`), "× prose", ""];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
const line = (cells: readonly string[]) =>
  `| ${cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(" | ")} |`;
console.log(line(head));
console.log(
  `| ${widths.map((w, i) => (i < 2 ? "-".repeat(w) : `${"-".repeat(w - 1)}:`)).join(" | ")} |`,
);
for (const r of rows) console.log(line(r));
console.log(
  `\nTargets: hostile ≤ ${RATIO_MAX}× prose (fastest of ${repeat}), ≤ ${MS_PER_MIB_MAX} ms at 1 MiB. ${failed === 0 ? "All pass." : `${failed} FAIL.`}`,
);
process.exitCode = failed === 0 ? 0 : 1;
