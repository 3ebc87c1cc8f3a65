/**
 * The Bolt app: its receiver (Socket Mode or HTTP), the health routes, and the listeners of
 * every Slack surface (src/slack/listeners/), registered once the coordinator exists.
 */
import type { Server } from "node:http";
import { App, HTTPReceiver, SocketModeReceiver } from "@slack/bolt";
import type { Logger } from "pino";
import type { Config } from "../config.ts";
import type { TaskCoordinator } from "../relay/coordinator.ts";
import type { ThreadStore } from "../store/types.ts";
import { boltLogger } from "./bolt-logger.ts";
import { healthRoutes, type PrometheusText } from "./health.ts";
import type { HomeTab } from "./home-tab.ts";
import { SURFACES } from "./listeners/index.ts";

export const SLACK_EVENTS_PATH = "/slack/events";

export interface SlackAppOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly store: ThreadStore;
  /** What `GET /metrics` shows (Prometheus text). */
  readonly prometheus?: PrometheusText;
  /** What `GET /metrics.json` shows. */
  readonly metricsJson?: () => unknown;
}

export interface SlackApp {
  readonly app: App;
  /** Wires the listeners; call once the coordinator exists. */
  listen(coordinator: TaskCoordinator, home: HomeTab): void;
  /** Starts the receiver; resolves with the HTTP port (HTTP mode or the health server). */
  start(): Promise<number | undefined>;
  stop(): Promise<void>;
}

export function createSlackApp(options: SlackAppOptions): SlackApp {
  const { config, logger, store } = options;
  let ready = false;
  const customRoutes = healthRoutes({
    ready: () => ready,
    store,
    prometheus: options.prometheus,
    metricsJson: options.metricsJson,
  });
  const slackLogger = boltLogger(logger);
  const socketMode = config.slack.appToken !== undefined;
  const receiver = socketMode
    ? new SocketModeReceiver({
        appToken: config.slack.appToken ?? "",
        customRoutes,
        installerOptions: {
          port: config.port,
          // The Socket Mode client opens its connection through the Web API too.
          ...(config.slack.apiUrl
            ? { clientOptions: { slackApiUrl: config.slack.apiUrl.replace(/\/?$/, "/") } }
            : {}),
        },
        logger: slackLogger,
      })
    : new HTTPReceiver({
        signingSecret: config.slack.signingSecret ?? "",
        endpoints: SLACK_EVENTS_PATH,
        customRoutes,
        processBeforeResponse: false,
        logger: slackLogger,
      });
  const app = new App({
    token: config.slack.botToken,
    receiver,
    logger: slackLogger,
    clientOptions: {
      ...(config.slack.apiUrl ? { slackApiUrl: config.slack.apiUrl.replace(/\/?$/, "/") } : {}),
      retryConfig: { retries: 3, factor: 2, minTimeout: 500, maxTimeout: 10_000, randomize: true },
      // Our scheduler owns the rate budget: a 429 comes back to it instead of pausing a queue.
      rejectRateLimitedCalls: true,
    },
  });
  app.error(async (err) => {
    logger.error({ err }, "unhandled error in a Slack listener");
  });

  function listen(coordinator: TaskCoordinator, home: HomeTab): void {
    for (const surface of SURFACES) {
      surface.register(app, { coordinator, logger, choices: config.choices, home });
    }
  }

  return {
    app,
    listen,
    async start() {
      const started = (await app.start(config.port)) as unknown;
      ready = true;
      const server = started as Server | undefined;
      const address = server && typeof server.address === "function" ? server.address() : undefined;
      return address && typeof address === "object"
        ? address.port
        : socketMode
          ? config.port
          : undefined;
    },
    async stop() {
      ready = false;
      await app.stop();
    },
  };
}
