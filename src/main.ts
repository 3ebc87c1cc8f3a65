/** Entry point: `npm start`. Reads the environment once, starts the app, stops cleanly. */
import { startApp } from "./bootstrap.ts";
import { parseConfigOrExit, SHUTDOWN_DEADLINE_MS, secretsOf } from "./config/config.ts";
import { createFinalLogger, createLogger, stdoutDestination } from "./log.ts";
import { startTracing } from "./tracing/sdk.ts";
import { asStartupError, StartupError } from "./util/startup-error.ts";

const config = parseConfigOrExit(process.env);

const logOptions = { level: config.logLevel, secrets: secretsOf(config) };
const output = stdoutDestination();
const logger = createLogger({ ...logOptions, destination: output });

/** The fatal line, written before the process ends (synchronously), then exit 1. */
function exitWithFatal(err: unknown, msg: string): never {
  try {
    output.flushSync(); // the lines still waiting go first
  } catch {
    // none, or stdout is gone
  }
  try {
    createFinalLogger(logOptions).fatal({ err }, msg);
  } finally {
    process.exit(1); // even when stdout is gone (EPIPE)
  }
}

process.on("unhandledRejection", (reason) => {
  logger.error({ err: reason }, "unhandled promise rejection (kept running)");
});
process.on("uncaughtException", (err) => exitWithFatal(err, "uncaught exception"));

// Before the app is built: its first Slack and service calls are traced too (when on).
const tracing = await startTracing(config.tracing, logger);

const running = await startApp(config, logger).catch((err: unknown) => {
  const failure = asStartupError(err, { PORT: config.port, ADMIN_PORT: config.adminPort });
  if (failure instanceof StartupError) {
    process.stderr.write(`Could not start: ${failure.message}\n`);
    logger.flush();
    process.exit(1);
  }
  exitWithFatal(err, "could not start");
});

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    const deadline = setTimeout(() => process.exit(1), SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    void running
      .close()
      // The spans still waiting are exported before the process goes (within the deadline).
      .finally(() =>
        tracing
          .shutdown()
          .catch((err: unknown) => logger.warn({ err }, "could not export the last spans")),
      )
      .finally(() => {
        logger.flush();
        process.exit(0);
      });
  });
}
