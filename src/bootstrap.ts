/** Builds the whole app from a parsed config, along the data path (main.ts and e2e tests run it). */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "pino";
import type { Config } from "./config/config.ts";
import { createPrometheusMetrics, type PrometheusMetrics } from "./metrics.ts";
import { Preferences } from "./threads/preferences.ts";
import { Relay, type RelayOptions } from "./runs/relay.ts";
import { Resumer } from "./runs/resumer.ts";
import { type CoordinatorOptions, TaskCoordinator } from "./threads/coordinator.ts";
import { runningThreads } from "./threads/running.ts";
import type { TaskService } from "./service/client.ts";
import { CONTROL_POOL, SERVICE_POOL } from "./service/pools.ts";
import { StreamRefusals } from "./service/refusals.ts";
import { createSlackApp, patientClient, type SlackApp } from "./slack/app.ts";
import { budgetsWith, createSlackScheduler, type SlackScheduler } from "./slack/scheduler/index.ts";
import {
  slackBotMembership,
  slackChannelDirectory,
  slackDirectMessages,
} from "./slack/channel-directory.ts";
import { fileOrigins, slackFileSource } from "./slack/file-source.ts";
import { adminHome } from "./slack/admin-home.ts";
import { HomeTab } from "./slack/home-tab.ts";
import { slackGroupMembers } from "./slack/user-groups.ts";
import { workspaceUrls } from "./slack/workspace-tokens.ts";
import { slackWorkflowSteps, stepTokenKeys } from "./slack/workflow-steps.ts";
import { openConfiguredStore, retentionMs } from "./store/open.ts";
import { runIndexTtlMs } from "./store/run-index.ts";
import { AuditTrail } from "./store/audit.ts";
import type { ThreadStore } from "./store/types.ts";
import { openServices } from "./service-key.ts";
import { withDeadline } from "./util/deadline.ts";
import { StartupError } from "./util/startup-error.ts";
import { verifySlack } from "./slack/startup-check.ts";
import { openWorkspaces } from "./workspaces.ts";
import { createOutbound, type Outbound } from "./util/proxy.ts";
import { openPagePreviews } from "./preview/index.ts";
import { memoryLimits } from "./runs/memory.ts";
import { slackThreadHistory } from "./slack/thread-history.ts";

export interface Running {
  readonly slack: SlackApp;
  readonly store: ThreadStore;
  readonly relay: Relay;
  readonly service: TaskService;
  /** The HTTP receiver's, or the health server's in Socket Mode. */
  readonly port: number | undefined;
  /** Resolves once the starts being handled have posted, or after `timeoutMs`. */
  settle(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export async function startApp(config: Config, logger: Logger): Promise<Running> {
  const outbound = createOutbound(config.proxy, SERVICE_POOL, CONTROL_POOL);
  const instanceId =
    config.instanceId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const metrics = createPrometheusMetrics();
  const { store, scheduler, tokenTeamId } = await openChecked(config, logger, outbound, metrics);
  const memory = memoryLimits(config.service.memoryMb);
  const { service, serviceFor, workspaceKeys } = openServices(
    config,
    metrics,
    outbound,
    store,
    logger,
    memory.process,
  );
  const { previews, announce } = openPagePreviews(config.preview, logger);
  // What /metrics.json shows beside the process: each part adds its figures once it exists.
  const figures = new Map<string, () => unknown>([["slack", () => scheduler.metrics()]]);
  const slack = createSlackApp({
    config,
    tokenTeamId,
    logger,
    store,
    outbound,
    prometheus: metrics,
    metrics,
    metricsJson: metricsJsonOf(instanceId, figures),
    workspaceKeys,
  });
  const workspaces = openWorkspaces({
    client: slack.app.client,
    tokens: slack.tokens,
    scheduler,
    serviceFor,
    uploadDispatcher: outbound.slackDispatcher,
    records: store,
  });
  const { workflowSteps, relay, resumer } = openRuns(config, logger, slack, outbound, {
    workspaces,
    store,
    // An adopted start's thread is recorded by the thread layer, as a fresh start's is.
    threads: runningThreads({ store, now: Date.now }),
    instanceId,
    metrics,
    previews,
    memory,
  });
  metrics.countActiveRuns(() => relay.activeRuns);
  metrics.countQueuedSlackCalls(() => scheduler.queueDepth());
  figures.set("relay", () => relay.metrics());
  // The coordinator subscribes to the relay's run ends (threads above runs).
  const { coordinator, home, audit } = openCoordinator(config, logger, slack, {
    parts: { workspaces, store, relay, memory, workflowSteps },
    dispatcher: outbound.slackDispatcher,
    scheduler,
  });
  slack.listen(coordinator, home, { runs: relay, budgets: scheduler, workspaces, audit });
  const port = await slack.start();
  resumer.start();
  logRunning(config, logger, { port, instance: instanceId, proxy: outbound.description });
  announce(); // after the start: a start-up failure is one line
  const close = (): Promise<void> =>
    closeApp(
      { slack, coordinator, resumer, relay, scheduler, store, outbound, home, previews },
      logger,
    );
  const settle = (timeoutMs: number) => coordinator.settle(timeoutMs);
  return { slack, store, relay, service, port, settle, close };
}

/** `/metrics.json`: the instance, its process, and each part's figures. */
function metricsJsonOf(instanceId: string, figures: ReadonlyMap<string, () => unknown>) {
  const started = Date.now();
  return () => ({
    instance: instanceId,
    uptimeS: Math.round((Date.now() - started) / 1000),
    process: { rssBytes: process.memoryUsage().rss, cpu: process.cpuUsage() },
    ...Object.fromEntries([...figures].map(([part, read]) => [part, read()])),
  });
}

/**
 * Workflow Builder steps (ended once, by a claim as long as a run can be resumed), the relay, and
 * the resumer, which takes over the runs nobody relays (a crash, a shutdown) every scan.
 */
function openRuns(
  config: Config,
  logger: Logger,
  slack: SlackApp,
  outbound: Outbound,
  parts: Pick<
    RelayOptions,
    "workspaces" | "store" | "threads" | "instanceId" | "metrics" | "previews" | "memory"
  >,
) {
  const { store } = parts;
  const workflowSteps = slackWorkflowSteps({
    client: patientClient(config, outbound.slackFetch, logger),
    store,
    teamUrl: workspaceUrls(slack.app.client, slack.tokens),
    keys: stepTokenKeys(config),
    claimTtlMs: runIndexTtlMs(config.service.maxRunS * 1000),
    logger,
  });
  const relay = new Relay({
    ...parts,
    workflowSteps,
    leaseTtlMs: config.runLeaseTtlMs,
    logger: logger.child({ instance: parts.instanceId }),
    streaming: {
      mode: config.slack.streaming,
      rotateMs: config.slack.streamRotateMs,
      display: config.slack.taskDisplay,
    },
    maxRunMs: config.service.maxRunS * 1000,
    // A thread whose stream a proxy refused is polled for a while without asking again.
    follow: { pollTimeoutS: config.service.pollTimeoutS, refusals: new StreamRefusals() },
  });
  const resumer = new Resumer({
    store,
    relay,
    logger,
    leaseTtlMs: config.runLeaseTtlMs,
    intervalMs: config.resumeScanIntervalMs,
  });
  return { workflowSteps, relay, resumer };
}

/** The coordinator with the operator's limits and people policy, and the Home tab it refreshes. */
function openCoordinator(
  config: Config,
  logger: Logger,
  { app: { client }, tokens }: SlackApp,
  wiring: {
    readonly parts: Pick<
      CoordinatorOptions,
      "workspaces" | "store" | "relay" | "memory" | "workflowSteps"
    >;
    readonly dispatcher: Outbound["slackDispatcher"];
    readonly scheduler: SlackScheduler;
  },
): { coordinator: TaskCoordinator; home: HomeTab; audit: AuditTrail } {
  const records = wiring.parts.store;
  const tokenFor = (team: string) => tokens.botToken(team);
  const audit = new AuditTrail({ records, logger, retentionMs: retentionMs(config) });
  const directory = slackChannelDirectory(client, tokens);
  const preferences = new Preferences({
    store: wiring.parts.store,
    workspaces: wiring.parts.workspaces,
    directory,
    settingsAnyone: config.settingsAnyone,
    logger,
    now: Date.now,
  });
  const home = new HomeTab({
    client,
    tokens,
    preferences,
    logger,
    teamUrl: workspaceUrls(client, tokens),
    admin: adminHome({ client, records, tokenFor, audit }),
    retentionDays: config.retentionDays,
  });
  const coordinator = new TaskCoordinator({
    ...wiring.parts,
    files: slackFileSource({
      tokenFor,
      client,
      allowedOrigins: fileOrigins(config.slack.apiUrl),
      dispatcher: wiring.dispatcher,
    }),
    preferences,
    home,
    groupMembers: slackGroupMembers({ client, tokenFor }),
    botMembership: slackBotMembership({ client, tokenFor }),
    directMessages: slackDirectMessages({ client, tokenFor }),
    threadHistory: slackThreadHistory({
      client,
      tokenFor,
      scheduler: wiring.scheduler,
      waitMs: config.threadContext.waitMs,
    }),
    threadContext: config.threadContext,
    limits: {
      perUserPerMinute: config.service.rateUserPerMin,
      perChannelPerMinute: config.service.rateChannelPerMin,
    },
    people: {
      allowGuests: config.service.allowGuests,
      allowExternal: config.service.allowExternal,
    },
    logger,
    audit,
  });
  return { coordinator, home, audit };
}

/**
 * Slack first (a refused token or an unreachable Slack is one line before Bolt is built; one
 * token's workspace is kept for the team gate), then the store and the Slack rate budget, each
 * within REDIS_CONNECT_TIMEOUT_MS. What was opened is closed again when a later step fails.
 */
async function openChecked(
  config: Config,
  logger: Logger,
  outbound: Outbound,
  metrics: PrometheusMetrics,
) {
  try {
    const token = config.slack.botToken;
    const auth = token ? await verifySlack(config, token, logger, outbound.slackFetch) : null;
    const store = await openConfiguredStore(config, (err) => {
      metrics.storeError();
      logger.error({ err }, "store error");
    });
    try {
      const redis = config.redisUrl === undefined ? undefined : await import("./store/redis.ts");
      // The Slack rate budget: in Redis beside the store (a client of its own, bounded too) when
      // there is one, in memory otherwise.
      const scheduler = await withDeadline(
        createSlackScheduler({
          redisUrl: config.redisUrl,
          redisPrefix: `${config.storeNamespace}:slack-rl:`,
          safety: config.slack.rateSafety,
          budgets: budgetsWith(config.slack.rateLimits),
          minEditIntervalMs: config.slack.editIntervalMs,
          metrics,
          onError: (err) => logger.warn({ err }, "Slack scheduler"),
        }),
        config.redisConnectTimeoutMs,
        () =>
          new StartupError(
            redis
              ? redis.redisUnreachable(
                  config.redisUrl ?? "",
                  config.redisConnectTimeoutMs,
                  "no answer for the Slack rate budget",
                )
              : "The Slack rate budget could not be set up in time.",
          ),
      );
      return { store, scheduler, tokenTeamId: auth?.team_id };
    } catch (err) {
      await store.close().catch(() => undefined);
      throw err;
    }
  } catch (err) {
    await outbound.close();
    throw err;
  }
}

function logRunning(config: Config, logger: Logger, facts: Record<string, unknown>): void {
  logger.info(
    {
      mode: config.slack.appToken ? "socket" : "http",
      workspaces: config.slack.oauth ? "many (OAuth)" : "one",
      store: config.redisUrl ? "redis" : "sqlite",
      ...facts,
    },
    "Task bot is running",
  );
}

/** How long shutdown waits for the tasks being created (a container gets 30 s in all). */
const SETTLE_MS = 10_000;

/** Stop taking work, hand every run over (latest text shown, lease released), then go. */
async function closeApp(
  parts: Pick<Running, "slack" | "relay" | "store"> & {
    readonly coordinator: TaskCoordinator;
    readonly resumer: Resumer;
    readonly scheduler: SlackScheduler;
    readonly outbound: Outbound;
    readonly home: HomeTab;
    readonly previews: { close(): Promise<void> } | undefined;
  },
  logger: Logger,
): Promise<void> {
  const { slack } = parts;
  await slack.stop().catch((err: unknown) => logger.warn({ err }, "stopping the receiver failed"));
  await parts.resumer.stop();
  // Tasks being created are shown first (then handed over with the other runs).
  await parts.coordinator.settle(SETTLE_MS);
  parts.home.close();
  await parts.relay.handover();
  await parts.previews?.close();
  await parts.scheduler.close();
  await parts.store.close();
  await parts.outbound.close();
  // Last: probes and scrapes saw the instance stopping (not ready, alive) until here.
  await slack.closeAdmin();
}
