import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // End-to-end suites start real servers on ephemeral ports; keep them in separate forks.
    pool: "forks",
    // Finds or starts Redis and finds Chromium; the last line names what was skipped without.
    globalSetup: ["test/support/global-setup.ts"],
    reporters: ["default", "./test/support/skipped-reporter.ts"],
  },
});
