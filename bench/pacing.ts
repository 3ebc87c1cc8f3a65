/**
 * How the scheduler paces one workspace budget (chat.update: 45 a minute after the safety
 * margin), on a simulated clock: the sliding window the app uses (src/slack/scheduler/windows.ts),
 * its interim calls paced for 10 or 50 runs that all started at 0 (each owing a final edit),
 * against the baseline in the same run, the token bucket it replaced (3 at once, then 42 a
 * minute). Demand is constant (a call is always waiting), which is the case
 * where pacing matters: how many calls go within a burst of 12 s, 30 s and a minute, how many a
 * minute under sustained load, and the longest any of 10 or 50 messages served in turn waits
 * between two edits (that run's staleness). Pure arithmetic: no Slack, no network.
 *
 *   npm run bench:pacing
 */
import { type BucketSpec, MemoryTokenBuckets } from "../src/slack/scheduler/token-buckets.ts";
import { WINDOW_MS } from "../src/slack/scheduler/windows.ts";

const MINUTE = 60_000;
const SUSTAINED_MS = 10 * MINUTE;
const LIMIT = 45;

/** The times a budget lets calls go when a call is always waiting (`spec` asked at each call). */
function greedy(spec: (now: number) => BucketSpec, end: number): number[] {
  const buckets = new MemoryTokenBuckets();
  const sent: number[] = [];
  for (let now = 0; now < end;) {
    const { wait } = buckets.takeNow([spec(now)], now);
    if (wait === 0) sent.push(now);
    else now += wait;
  }
  return sent;
}

/** The longest wait of a message between two edits when `n` messages are served in turn. */
function longestTurn(sent: readonly number[], n: number): number {
  let longest = 0;
  for (let i = 0; i + n < sent.length; i++) {
    longest = Math.max(longest, (sent[i + n] ?? 0) - (sent[i] ?? 0));
  }
  return longest;
}

const within = (sent: readonly number[], ms: number) => sent.filter((t) => t < ms).length;

/** Interim edits of `runs` runs that started at 0 and never end, as the scheduler asks them. */
const paced =
  (runs: number) =>
  (now: number): BucketSpec => ({
    kind: "window",
    key: "w",
    limit: LIMIT,
    windowMs: WINDOW_MS,
    burst: 3,
    units: runs,
    ageMs: Math.max(1000, now),
  });

const budgets: [string, (now: number) => BucketSpec][] = [
  ["token bucket (baseline)", () => ({ key: "b", ratePerMs: (LIMIT - 3) / MINUTE, burst: 3 })],
  ["window, interim edits of 10 runs (the app's)", paced(10)],
  ["window, interim edits of 30 runs (the app's)", paced(30)],
];

const rows = budgets.map(([name, spec]) => {
  const sent = greedy(spec, SUSTAINED_MS);
  return {
    name,
    in12: within(sent, 12_000),
    in30: within(sent, 30_000),
    in60: within(sent, MINUTE),
    perMinute: (sent.length / SUSTAINED_MS) * MINUTE,
    turn10: longestTurn(sent, 10) / 1000,
    turn50: longestTurn(sent, 50) / 1000,
    // Past the first two minutes: whether the burst's echo is gone.
    turn10Later:
      longestTurn(
        sent.filter((t) => t >= 2 * MINUTE),
        10,
      ) / 1000,
  };
});
const base = rows[0];
if (!base) throw new Error("no baseline");
const ratio = (a: number, b: number) => `${a} (×${(a / b).toFixed(2)})`;

console.log(
  "| budget (chat.update, 45 a minute) | calls in 12 s | in 30 s | in 60 s | a minute, sustained (10 min) | longest turn, 10 messages (s) | 50 messages (s) | 10 messages, after 2 min (s) |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const r of rows) {
  console.log(
    `| ${r.name} | ${ratio(r.in12, base.in12)} | ${ratio(r.in30, base.in30)} | ${ratio(r.in60, base.in60)} | ${r.perMinute.toFixed(1)} (×${(r.perMinute / base.perMinute).toFixed(2)}) | ${r.turn10.toFixed(1)} (×${(r.turn10 / base.turn10).toFixed(2)}) | ${r.turn50.toFixed(1)} (×${(r.turn50 / base.turn50).toFixed(2)}) | ${r.turn10Later.toFixed(1)} (×${(r.turn10Later / base.turn10Later).toFixed(2)}) |`,
  );
}
