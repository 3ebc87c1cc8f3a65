/**
 * After the run's summary, one line naming the test files whose parts were skipped because the
 * machine lacks what they need (test/support/needs.ts), and how to enable them.
 */
import type { Reporter, TestModule } from "vitest/node";
import type { Need } from "./needs.ts";

const ENABLE: Record<Need, { what: string; how: string }> = {
  redis: {
    what: "Redis",
    how: "install redis-server (the run starts its own) or set TEST_REDIS_URL",
  },
  chromium: { what: "Chromium", how: "install chromium or set CHROMIUM_PATH" },
};

/** How to run them after `npm run test:unit`, which leaves out Redis and Chromium on purpose. */
const AFTER_UNIT = "`npm test` runs them";

/**
 * The line for these modules, or undefined when nothing was skipped for want of anything. `unit`:
 * the run was `npm run test:unit`, which left them out on purpose.
 */
export function skippedLine(
  modules: ReadonlyArray<{ relativeModuleId: string; missing: readonly Need[] }>,
  unit = false,
): string | undefined {
  const parts: string[] = [];
  for (const need of Object.keys(ENABLE) as Need[]) {
    const files = modules.filter((m) => m.missing.includes(need)).map((m) => m.relativeModuleId);
    if (files.length === 0) continue;
    const { what, how } = ENABLE[need];
    const count = files.length === 1 ? "1 test file" : `${files.length} test files`;
    const enable = unit ? AFTER_UNIT : `to run them, ${how}`;
    parts.push(`the ${what} parts of ${count} (${files.sort().join(", ")}): ${enable}`);
  }
  return parts.length === 0 ? undefined : `Skipped ${parts.join("; ")}.`;
}

export default class SkippedReporter implements Reporter {
  readonly #unit: boolean;

  constructor(options: { unit?: boolean } = {}) {
    this.#unit = options.unit ?? false;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const line = skippedLine(
      modules.map((m) => ({
        relativeModuleId: m.relativeModuleId,
        missing: m.meta().missing ?? [],
      })),
      this.#unit,
    );
    if (line) process.stdout.write(`${line}\n`);
  }
}
