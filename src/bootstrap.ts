/**
 * Builds the whole app from a parsed config: store, service client, Slack app, relay and
 * coordinator, wired along the data path. `main.ts` runs it; end-to-end tests run it too.
 */
import type { Logger } from "pino";
import type { Config } from "./config.ts";
import { Relay } from "./relay/relay.ts";
import { TaskCoordinator } from "./relay/tasks.ts";
import { createTaskServiceClient, type TaskService } from "./service/client.ts";
import { createSlackApp, type SlackApp } from "./slack/app.ts";
import { webClientWriter } from "./slack/writer.ts";
import {
  createRedisStore,
  createSqliteStore,
  defaultSqlitePath,
  type ThreadStore,
} from "./store/store.ts";

export interface Running {
  readonly slack: SlackApp;
  readonly store: ThreadStore;
  readonly relay: Relay;
  readonly service: TaskService;
  /** The HTTP port (HTTP receiver, or the health server in Socket Mode). */
  readonly port: number | undefined;
  /** Stops taking work, ends relays, closes the store. */
  close(): Promise<void>;
}

export async function startApp(config: Config, logger: Logger): Promise<Running> {
  const reportStore = (err: unknown) => logger.error({ err }, "store error");
  const store = config.redisUrl
    ? createRedisStore(config.redisUrl, reportStore)
    : createSqliteStore(defaultSqlitePath(config.dataDir), reportStore);
  const service = createTaskServiceClient({
    baseUrl: config.service.baseUrl,
    apiKey: config.service.apiKey,
    streamIdleTimeoutMs: config.service.streamIdleTimeoutS * 1000,
  });
  const slack = createSlackApp({ config, logger, store });
  const writer = webClientWriter(slack.app.client);
  const relay = new Relay({
    service,
    writer,
    logger,
    editIntervalMs: config.slack.editIntervalMs,
    follow: { pollTimeoutS: config.service.pollTimeoutS },
    onRunEnded: async (outcome): Promise<void> => coordinator.onRunEnded(outcome),
  });
  const coordinator = new TaskCoordinator({ service, writer, store, relay, logger });
  slack.listen(coordinator);
  const port = await slack.start();
  logger.info(
    {
      mode: config.slack.appToken ? "socket" : "http",
      port,
      store: config.redisUrl ? "redis" : "sqlite",
    },
    "Task bot is running",
  );
  return {
    slack,
    store,
    relay,
    service,
    port,
    async close() {
      await slack
        .stop()
        .catch((err: unknown) => logger.warn({ err }, "stopping the Slack receiver failed"));
      await relay.shutdown();
      await store.close();
    },
  };
}
