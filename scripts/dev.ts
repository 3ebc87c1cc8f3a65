/**
 * `npm run dev`: the task service simulator and the bot together, so that someone with only
 * a Slack workspace can try the whole flow without a service API key. Slack settings come
 * from the environment as for `npm start`; TASK_API_URL / TASK_API_KEY point at the simulator.
 */
import pretty from "pino-pretty";
import { startApp } from "../src/bootstrap.ts";
import { ConfigError, parseConfig, secretsOf, withPointer } from "../src/config/config.ts";
import { portSettingOrExit } from "../src/config/values.ts";
import { createLogger } from "../src/log.ts";
import { startSimulator } from "../tools/simulator/server.ts";
import { exitOnStartupError } from "../src/util/startup-error.ts";

const simKey = "he-simulator-key";
const simPort = portSettingOrExit("SIM_PORT", process.env.SIM_PORT, 8787);
const sim = await startSimulator({ port: simPort, apiKeys: [simKey], chunkDelayMs: 40 }).catch(
  (err: unknown) => exitOnStartupError(err, { SIM_PORT: simPort }),
);

let config: ReturnType<typeof parseConfig>;
try {
  // Behind a proxy, the local simulator is still reached directly.
  const noProxy = [process.env.no_proxy ?? process.env.NO_PROXY, new URL(sim.url).host]
    .filter((v) => v !== undefined && v !== "")
    .join(",");
  config = parseConfig({
    ...process.env,
    TASK_API_URL: sim.url,
    TASK_API_KEY: simKey,
    no_proxy: noProxy,
  });
} catch (err) {
  await sim.close();
  if (err instanceof ConfigError) {
    const pointer = 'README.md\'s "Connect a real Slack workspace" has the Slack settings';
    process.stderr.write(`${withPointer(err, pointer)}\n`);
    process.exit(1);
  }
  throw err;
}
// Readable logs in a terminal; JSON lines (as in production) when piped to a file or a tool.
const logger = createLogger({
  level: config.logLevel,
  secrets: secretsOf(config),
  ...(process.stdout.isTTY
    ? { destination: pretty({ colorize: true, translateTime: "SYS:HH:MM:ss", sync: true }) }
    : {}),
});
process.on("unhandledRejection", (reason) => logger.error({ err: reason }, "unhandled rejection"));
const running = await startApp(config, logger).catch(async (err: unknown) => {
  await sim.close();
  return exitOnStartupError(err, { PORT: config.port, ADMIN_PORT: config.adminPort });
});
process.stdout.write(`Task Execution Service simulator on ${sim.url} (key ${simKey})\n`);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void running
      .close()
      .then(() => sim.close())
      .finally(() => process.exit(0));
  });
}
