/** The Bolt app: its receiver (Socket Mode or HTTP), health routes and the surfaces' listeners. */
import type { Server } from "node:http";
import { WebClient } from "@slack/web-api";
import { App, type CustomRoute, HTTPReceiver, SocketModeReceiver } from "@slack/bolt";
import type { Logger } from "pino";
import type { Config } from "../config/config.ts";
import { FeedbackRecorder } from "../feedback/feedback.ts";
import { type AppMetrics, noMetrics } from "../metrics.ts";
import type { TaskCoordinator } from "../threads/coordinator.ts";
import type { ThreadStore } from "../store/types.ts";
import type { Outbound } from "../util/proxy.ts";
import { sealingKeys } from "../util/secret-box.ts";
import { traceSlackRequests } from "../tracing/slack-requests.ts";
import { boltLogger } from "./bolt-logger.ts";
import { answerUnrecognised, trackAcks } from "./gate/acks.ts";
import { orgMembership, teamGate, teamPolicy } from "./gate/team.ts";
import {
  type AdminServer,
  healthRoutes,
  type PrometheusText,
  socketModeConnection,
  startAdminServer,
} from "./health.ts";
import type { HomeTab } from "./home-tab.ts";
import * as actions from "./listeners/actions.ts";
import * as agentView from "./listeners/agent-view.ts";
import * as command from "./listeners/command.ts";
import * as home from "./listeners/home.ts";
import * as message from "./listeners/message.ts";
import * as modal from "./listeners/modal.ts";
import * as settings from "./listeners/settings.ts";
import type { Surface, WorkspaceKeys } from "./listeners/surface.ts";
import * as taskViews from "./listeners/task-views.ts";
import * as uninstall from "./listeners/uninstall.ts";
import * as workflowStep from "./listeners/workflow-step.ts";
import * as workspaceSettings from "./listeners/workspace-settings.ts";
import {
  type OAuthReceiverOptions,
  oauthReceiverOptions,
  uninstalledWorkspaces,
} from "./oauth/install-flow.ts";
import { WorkspaceRemoval, type WorkspaceRemovalDeps } from "./workspace-removal.ts";
import { stepKeeper, stepTokenKeys } from "./workflow-steps.ts";
import { type BotTokens, installedTokens, singleWorkspaceToken } from "./workspace-tokens.ts";

export const SLACK_EVENTS_PATH = "/slack/events";

const SURFACES: readonly Surface[] = [
  uninstall,
  command,
  message,
  actions,
  modal,
  home,
  agentView,
  settings,
  taskViews,
  workspaceSettings,
  workflowStep,
];

/** Bolt's HTTPReceiver default (4 MB), pinned: a larger body is answered 413 unread, unsigned. */
export const SLACK_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

export interface SlackAppOptions {
  readonly config: Config;
  /** One workspace: the bot token's own, as start-up's auth.test named it. */
  readonly tokenTeamId?: string | undefined;
  readonly logger: Logger;
  readonly store: ThreadStore;
  readonly outbound?: Pick<Outbound, "slackFetch" | "socketDispatcher">;
  readonly prometheus?: PrometheusText;
  readonly metricsJson?: () => unknown;
  readonly metrics?: AppMetrics;
  readonly workspaceKeys?: WorkspaceKeys | undefined;
}

type RemovalParts = Pick<WorkspaceRemovalDeps, "runs" | "budgets" | "workspaces" | "audit">;

export type SlackApp = ReturnType<typeof createSlackApp>;

export function createSlackApp(options: SlackAppOptions) {
  const { config, logger, store, workspaceKeys, tokenTeamId: tokenTeam } = options;
  const { slackFetch, socketDispatcher } = options.outbound ?? {};
  let ready = false;
  // HTTP mode: Slack's requests come in. Socket Mode: the client's connection, once it exists.
  let slackConnected = (): boolean => true;
  const customRoutes = healthRoutes({
    ready: () => ready,
    slackConnected: () => slackConnected(),
    store,
    prometheus: options.prometheus,
    metricsJson: options.metricsJson,
  });
  // With ADMIN_PORT the public receiver serves Slack's requests only.
  const publicRoutes = config.adminPort === undefined ? customRoutes : [];
  let admin: AdminServer | undefined;
  const slackLogger = boltLogger(logger);
  const clientBase = baseClientOptions(config, slackFetch);
  // Many workspaces: Bolt serves the install flow and authorizes each event from the store.
  const oauth = config.slack.oauth
    ? oauthReceiverOptions(config.slack.oauth, {
        store,
        keys: sealingKeys(config.encryptionKeys),
        logger,
        clientOptions: clientBase,
      })
    : undefined;
  const receiver = createReceiver(config, { publicRoutes, slackLogger, socketDispatcher, oauth });
  if (receiver instanceof SocketModeReceiver)
    slackConnected = socketModeConnection(receiver.client);
  const app = boltApp(receiver, slackLogger, clientBase, oauth ? undefined : config.slack.botToken);
  const tokens = workspaceTokens(config, receiver, store);
  watchErrors(app, logger);
  traceSlackRequests(app, receiver, SLACK_EVENTS_PATH); // each one's span: a task's first

  function listen(coordinator: TaskCoordinator, home: HomeTab, parts: RemovalParts): void {
    const installations = oauth?.installationStore;
    const removal = new WorkspaceRemoval({ ...parts, store, installations, logger });
    const onOrgWorkspace = async (teamId: string, enterpriseId: string) => {
      await tokens.rememberOrganisation(teamId, enterpriseId);
      void removal
        .noteOrgWorkspace(enterpriseId, teamId)
        .catch((err: unknown) => logger.warn({ err }, "could not note a workspace of an org"));
    };
    app.use(gateOf(config, slackFetch, logger, { tokenTeam, onOrgWorkspace }));
    const feedback = new FeedbackRecorder({
      records: store,
      metrics: options.metrics ?? noMetrics,
    });
    const { choices, suggestedPrompts } = config;
    const deps = { coordinator, logger, choices, suggestedPrompts, home, workspaceKeys, removal };
    const workflowSteps = stepKeeper(stepTokenKeys(config));
    const more = { feedback, records: store, audit: parts.audit, workflowSteps };
    for (const surface of SURFACES) surface.register(app, { ...deps, ...more });
  }

  return {
    app,
    tokens,
    listen,
    adminPort: (): number | undefined => admin?.port,
    adminHost: (): string | undefined => admin?.host,
    /** Resolves with the HTTP port (HTTP mode, or Socket Mode's own server). */
    async start(): Promise<number | undefined> {
      if (config.adminPort !== undefined)
        admin = await startAdminServer(customRoutes, config.adminPort, config.adminHost);
      const started = (await (config.listenHost === undefined
        ? app.start(config.port)
        : app.start({ port: config.port, host: config.listenHost }))) as unknown;
      ready = true;
      return listeningPort(started as Server | undefined, config);
    },
    /** Stops taking Slack's requests; the internal port answers (readiness 503) until `closeAdmin`. */
    async stop() {
      ready = false;
      await app.stop();
    },
    closeAdmin: async () => admin?.close(),
  };
}

/** Bolt's app on `receiver`; `token`: the one workspace's (with OAuth, each event's own). */
function boltApp(
  receiver: SocketModeReceiver | HTTPReceiver,
  logger: ReturnType<typeof boltLogger>,
  clientBase: ReturnType<typeof baseClientOptions>,
  token: string | undefined,
): App {
  return new App({
    ...(token === undefined ? {} : { token }),
    receiver,
    logger,
    clientOptions: {
      ...clientBase,
      retryConfig: { retries: 3, factor: 2, minTimeout: 500, maxTimeout: 10_000, randomize: true },
      // Our scheduler owns the rate budget: a 429 comes back to it instead of pausing a queue.
      rejectRateLimitedCalls: true,
    },
    // The handler gets the failed event too (whose workspace was not authorized).
    extendedErrorHandler: true,
  });
}

/** For calls that must land and go through no budget (a workflow step's end): waits out 429s. */
export function patientClient(
  config: Config,
  slackFetch: Outbound["slackFetch"] | undefined,
  logger: Logger,
): WebClient {
  return new WebClient(undefined, {
    ...baseClientOptions(config, slackFetch),
    retryConfig: { retries: 5, factor: 2, minTimeout: 1000, maxTimeout: 30_000, randomize: true },
    rejectRateLimitedCalls: false,
    logger: boltLogger(logger),
  });
}

export function baseClientOptions(
  config: Config,
  slackFetch: Outbound["slackFetch"] | undefined,
): { slackApiUrl?: string; fetch?: Outbound["slackFetch"] } {
  const apiUrl = config.slack.apiUrl; // the WebClient adds its final slash
  return {
    ...(apiUrl ? { slackApiUrl: apiUrl } : {}),
    ...(slackFetch ? { fetch: slackFetch } : {}),
  };
}

/** Socket Mode: its own server's, on PORT. */
function listeningPort(server: Server | undefined, config: Config) {
  const address = server && typeof server.address === "function" ? server.address() : undefined;
  if (address && typeof address === "object") return address.port;
  return config.slack.appToken !== undefined ? config.port : undefined;
}

/** First of all middleware: every payload answered; events of uninstalled workspaces logged. */
function watchErrors(app: App, logger: Logger): void {
  trackAcks(app, logger);
  app.use(answerUnrecognised(logger));
  const uninstalled = uninstalledWorkspaces(logger);
  app.error(async ({ error }: { readonly error: Error }) => {
    if (!uninstalled.handled(error))
      logger.error({ err: error }, "unhandled error in a Slack listener");
  });
}

function gateOf(
  config: Config,
  slackFetch: Outbound["slackFetch"] | undefined,
  logger: Logger,
  more: Pick<Parameters<typeof teamGate>[0], "tokenTeam" | "onOrgWorkspace">,
) {
  // With OAuth. It asks before a payload is acknowledged: one try, 2 s at most (Slack waits 3 s).
  const quick =
    config.slack.oauth &&
    new WebClient(undefined, {
      ...baseClientOptions(config, slackFetch),
      retryConfig: { retries: 0 },
      timeout: 2000,
      logger: boltLogger(logger),
    });
  const membership = quick ? orgMembership(quick) : undefined;
  return teamGate({ ...more, logger, policy: teamPolicy(config.slack.oauth), membership });
}

function workspaceTokens(
  config: Config,
  receiver: SocketModeReceiver | HTTPReceiver,
  store: ThreadStore,
): BotTokens {
  const { installer } = receiver;
  if (config.slack.oauth && installer) return installedTokens(installer, store);
  if (config.slack.botToken !== undefined) return singleWorkspaceToken(config.slack.botToken);
  throw new Error("neither a bot token nor OAuth is configured");
}

/**
 * Socket Mode when an app-level token is set, Slack's HTTP requests at /slack/events otherwise.
 * With OAuth, Socket Mode serves the install flow on its own server (`installerOptions.port`).
 */
function createReceiver(
  config: Config,
  parts: {
    readonly publicRoutes: CustomRoute[];
    readonly slackLogger: ReturnType<typeof boltLogger>;
    readonly socketDispatcher: Outbound["socketDispatcher"] | undefined;
    readonly oauth: OAuthReceiverOptions | undefined;
  },
): SocketModeReceiver | HTTPReceiver {
  const { publicRoutes, slackLogger, socketDispatcher, oauth } = parts;
  const common = { ...oauth, customRoutes: publicRoutes, logger: slackLogger };
  if (config.slack.appToken !== undefined) {
    const apiUrl = config.slack.apiUrl;
    return new SocketModeReceiver({
      ...common,
      appToken: config.slack.appToken,
      // The WebSocket and apps.connections.open (wrapped by the client into its fetch).
      ...(socketDispatcher ? { dispatcher: socketDispatcher } : {}),
      installerOptions: {
        ...oauth?.installerOptions,
        port: config.port,
        // Socket Mode connects through the Web API too (with OAuth: the clientOptions above).
        ...(oauth || !apiUrl ? {} : { clientOptions: { slackApiUrl: apiUrl } }),
      },
    });
  }
  return new HTTPReceiver({
    ...common,
    signingSecret: config.slack.signingSecret ?? "",
    endpoints: SLACK_EVENTS_PATH,
    bodyLimit: SLACK_BODY_LIMIT_BYTES,
    processBeforeResponse: false,
  });
}
