import { configDefaults, defineConfig } from "vitest/config";

const TEST_FILES = ["test/**/*.test.ts", "src/**/*.test.ts"];

/**
 * `npm run test:unit` (`vitest run --mode unit`) leaves out what needs a process of the app, a
 * browser or Redis, so that it answers within a minute: the end-to-end stories, the start-up
 * commands, the Chromium drivers. It starts no Redis and finds no Chromium, so the files that
 * also run on Redis run on the embedded store alone; its last line names them.
 */
const NOT_UNIT = [
  "test/e2e/**/*.test.ts", // the real app against its local peers, some on Redis or Chromium
  "test/startup.test.ts", // runs `npm start`'s command line as a process
  "test/startup-commands.test.ts", // runs every npm script's command line as a process
  "test/playground/playground.test.ts", // drives Chromium
  "test/preview/chromium.test.ts", // drives Chromium
];

export default defineConfig(({ mode }) => {
  const unit = mode === "unit";
  return {
    test: {
      testTimeout: 30_000,
      hookTimeout: 30_000,
      // End-to-end suites start real servers on ephemeral ports; keep them in separate forks.
      pool: "forks",
      // Three files at once, even on a 2-core machine (vitest's default keeps one core free):
      // most of a file's time is waiting (timers, servers, other processes). With two, `npm test`
      // used 58 % of the cores and vitest took 316 s on a clean clone; with three, 244 s.
      maxWorkers: 3,
      // Finds or starts Redis and finds Chromium; the last line names what was skipped without.
      globalSetup: unit ? [] : ["test/support/global-setup.ts"],
      provide: unit ? { redisUrl: null, chromiumPath: null } : {},
      reporters: [
        "default",
        ["./test/support/skipped-reporter.ts", { unit }] as [string, { unit: boolean }],
      ],
      // Both projects share one queue, taken in the projects' name order: `app` first (its files
      // are the long ones, and mostly wait), then the short `unit` files fill the end of the run.
      projects: [
        {
          // The unit files share their workers' imports in `npm test` too, as `npm run test:unit`
          // runs them: isolated, each file imports the app's modules again (70 s of the 2-core
          // machine's wall clock, docs/testing.md).
          test: {
            name: "unit",
            include: TEST_FILES,
            exclude: [...configDefaults.exclude, ...NOT_UNIT],
            isolate: false,
          },
        },
        // The rest, each file in a fresh fork: they run the app in-process or as processes.
        ...(unit ? [] : [{ test: { name: "app", include: NOT_UNIT } }]),
      ],
    },
  };
});
