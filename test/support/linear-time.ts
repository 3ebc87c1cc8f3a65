/**
 * Judging whether work grows linearly from timings, on a machine other tests and other people
 * load too: a timing is the least of several runs, and a ratio that looks superlinear is taken
 * again before it counts. Work that really grows faster is over the limit every time; a
 * collection, a page fault or a descheduled process is not.
 */

/** How many times a ratio over its limit is measured before it fails a test. */
const ATTEMPTS = 3;

/**
 * The least of `ratio()` over up to ATTEMPTS measurements, stopping at the first under
 * `limit`: expect it to be under `limit`.
 */
export function settledRatio(ratio: () => number, limit: number): number {
  let least = Number.POSITIVE_INFINITY;
  for (let i = 0; i < ATTEMPTS && least >= limit; i++) least = Math.min(least, ratio());
  return least;
}
