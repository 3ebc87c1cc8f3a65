/**
 * One definition of each fuzz property, two budgets: `npm test` runs a few hundred cases per
 * target, `npm run fuzz` runs FUZZ_RUNS (100,000) of the same properties. FUZZ_SEED and
 * FUZZ_PATH replay a failure fast-check reported.
 */
import fc from "fast-check";
import { afterAll, it } from "vitest";

/** Cases per target when FUZZ_RUNS is not set (what `npm test` runs). */
const DEFAULT_RUNS = 300;

function positiveInt(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  return n;
}

export const RUNS = positiveInt("FUZZ_RUNS") ?? DEFAULT_RUNS;
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const PATH = process.env.FUZZ_PATH;
/** Printing a summary is for `npm run fuzz` (and any explicit FUZZ_RUNS), not for `npm test`. */
const REPORT = process.env.FUZZ_RUNS !== undefined;

const done: string[] = [];
afterAll(() => {
  if (!REPORT || done.length === 0) return;
  // eslint-disable-next-line no-console
  console.info(done.join("\n"));
});

/**
 * A fuzz target: `property` is checked on RUNS generated cases (a failing case is shrunk and
 * reported with the seed and path that replay it).
 */
export function fuzz<Ts>(name: string, property: () => fc.IRawProperty<Ts, boolean>): void {
  // At 100,000 cases a target takes minutes, not the 30 s of an ordinary test.
  const timeout = Math.max(30_000, RUNS * 20);
  it(
    name,
    async () => {
      const started = performance.now();
      await fc.assert(property(), {
        numRuns: RUNS,
        ...(SEED === undefined || Number.isNaN(SEED) ? {} : { seed: SEED }),
        ...(PATH ? { path: PATH } : {}),
      });
      const seconds = (performance.now() - started) / 1000;
      done.push(`fuzz: ${name}: ${RUNS} cases, 0 failures, ${seconds.toFixed(1)} s`);
    },
    timeout,
  );
}
