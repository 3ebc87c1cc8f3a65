import { configDefaults, defineConfig } from "vitest/config";

/**
 * `npm run test:unit` (`vitest run --mode unit`) leaves out what needs a process of the app, a
 * browser or Redis, so that it answers within a minute: the end-to-end stories, the start-up
 * commands, the Chromium drivers. It starts no Redis and finds no Chromium, so the files that
 * also run on Redis run on the embedded store alone; its last line names them.
 */
const NOT_UNIT = [
  "test/e2e/**", // the real app against its local peers, some on Redis or Chromium
  "test/startup.test.ts", // runs `npm start`'s command line as a process
  "test/startup-commands.test.ts", // runs every npm script's command line as a process
  "test/playground/playground.test.ts", // drives Chromium
  "test/preview/chromium.test.ts", // drives Chromium
];

export default defineConfig(({ mode }) => {
  const unit = mode === "unit";
  return {
    test: {
      include: ["test/**/*.test.ts", "src/**/*.test.ts"],
      exclude: unit ? [...configDefaults.exclude, ...NOT_UNIT] : configDefaults.exclude,
      testTimeout: 30_000,
      hookTimeout: 30_000,
      // End-to-end suites start real servers on ephemeral ports; keep them in separate forks.
      pool: "forks",
      // Two files at once, even on a 2-core machine (vitest's default keeps one core free):
      // most of a file's time is waiting (timers, servers, other processes), so one worker left
      // the machine two-thirds idle. Unit files also share their workers' imports (isolation
      // costs a minute of CPU: each file would import the app's modules again).
      maxWorkers: 2,
      ...(unit ? { isolate: false } : {}),
      // Finds or starts Redis and finds Chromium; the last line names what was skipped without.
      globalSetup: unit ? [] : ["test/support/global-setup.ts"],
      provide: unit ? { redisUrl: null, chromiumPath: null } : {},
      reporters: [
        "default",
        ["./test/support/skipped-reporter.ts", { unit }] as [string, { unit: boolean }],
      ],
    },
  };
});
