/** Entry point: `npm start`. Reads the environment once, starts the app, stops cleanly. */

import { StartupError, startApp } from "./bootstrap.ts";
import { ConfigError, parseConfig, SHUTDOWN_DEADLINE_MS, secretsOf } from "./config.ts";
import { createLogger } from "./log.ts";

let config: ReturnType<typeof parseConfig>;
try {
  config = parseConfig(process.env);
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\nSee README.md for every setting.\n`);
    process.exit(1);
  }
  throw err;
}

const logger = createLogger({ level: config.logLevel, secrets: secretsOf(config) });

process.on("unhandledRejection", (reason) => {
  logger.error({ err: reason }, "unhandled promise rejection (kept running)");
});
process.on("uncaughtException", (err) => {
  logger.fatal({ err }, "uncaught exception");
  logger.flush();
  process.exit(1);
});

const running = await startApp(config, logger).catch((err: unknown) => {
  if (err instanceof StartupError) {
    // One line that says what to fix, not a stack trace.
    process.stderr.write(`Could not start: ${err.message}\n`);
    logger.flush();
    process.exit(1);
  }
  logger.fatal({ err }, "could not start");
  logger.flush();
  process.exit(1);
});

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    const deadline = setTimeout(() => process.exit(1), SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    void running.close().finally(() => {
      logger.flush();
      process.exit(0);
    });
  });
}
