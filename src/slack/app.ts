/**
 * The Bolt app: receivers (Socket Mode or HTTP), listeners, and health routes. Listeners
 * validate what Slack sends (zod), acknowledge at once, and hand the work to the
 * coordinator; a refusal is always answered with an ephemeral message that says what to do.
 */
import type { Server } from "node:http";
import { App, type CustomRoute, HTTPReceiver, SocketModeReceiver } from "@slack/bolt";
import type { Logger } from "pino";
import { z } from "zod";
import type { Config } from "../config.ts";
import type { TaskCoordinator } from "../relay/coordinator.ts";
import { LIMITS, promptLength } from "../service/limits.ts";
import { StoreUnavailableError, type ThreadStore } from "../store/types.ts";
import { boltLogger } from "./bolt-logger.ts";
import { describeServiceError } from "../view/errors.ts";
import { decodeStopValue, STOP_ACTION_ID, USAGE } from "../view/render.ts";

const CommandBody = z.object({
  team_id: z.string().min(1),
  channel_id: z.string().min(1),
  user_id: z.string().min(1),
  text: z.string().default(""),
  trigger_id: z.string().optional(),
});

/** Message subtypes that are a person's input; every other subtype is ignored. */
const INPUT_SUBTYPES = new Set([undefined, "file_share", "thread_broadcast"]);

const MessageEvent = z.object({
  type: z.literal("message"),
  subtype: z.string().optional(),
  channel: z.string().min(1),
  user: z.string().optional(),
  bot_id: z.string().optional(),
  text: z.string().optional(),
  ts: z.string().min(1),
  thread_ts: z.string().optional(),
  files: z.array(z.unknown()).optional(),
});

const ActionBody = z.object({
  user: z.object({ id: z.string().min(1), team_id: z.string().optional() }),
  team: z.object({ id: z.string().min(1) }).nullish(),
  actions: z.array(z.object({ action_id: z.string(), value: z.string().optional() })).min(1),
});

export const SLACK_EVENTS_PATH = "/slack/events";

/** Slack escapes &, < and > in what people type; the service must get what they typed. */
export const fromSlack = (s: string): string =>
  s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

export interface SlackAppOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly store: ThreadStore;
  /** What `GET /metrics` shows (JSON). */
  readonly metrics?: () => unknown;
}

export interface SlackApp {
  readonly app: App;
  /** Wires the listeners; call once the coordinator exists. */
  listen(coordinator: TaskCoordinator): void;
  /** Starts the receiver; resolves with the HTTP port (HTTP mode or the health server). */
  start(): Promise<number | undefined>;
  stop(): Promise<void>;
}

export function createSlackApp(options: SlackAppOptions): SlackApp {
  const { config, logger, store } = options;
  let ready = false;
  const customRoutes: CustomRoute[] = [
    {
      path: "/healthz",
      method: ["GET"],
      handler: (_req, res) => {
        res.writeHead(ready ? 200 : 503, { "content-type": "application/json" });
        res.end(JSON.stringify({ ok: ready }));
      },
    },
    {
      path: "/metrics",
      method: ["GET"],
      handler: (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(options.metrics?.() ?? {}));
      },
    },
    {
      path: "/readyz",
      method: ["GET"],
      handler: (_req, res) => {
        void store.ping().then((ok) => {
          const good = ready && ok;
          res.writeHead(good ? 200 : 503, { "content-type": "application/json" });
          res.end(JSON.stringify({ ok: good, store: ok }));
        });
      },
    },
  ];
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

  function listen(coordinator: TaskCoordinator): void {
    app.command("/task", async ({ ack, body, respond }) => {
      const parsed = CommandBody.safeParse(body);
      if (!parsed.success) {
        await ack({
          response_type: "ephemeral",
          text: "That request looked malformed; please try again.",
        });
        return;
      }
      const cmd = parsed.data;
      const prompt = fromSlack(cmd.text).trim();
      if (prompt === "") {
        await ack({ response_type: "ephemeral", text: USAGE });
        return;
      }
      const length = promptLength(prompt);
      if (length > LIMITS.promptMaxChars) {
        await ack({
          response_type: "ephemeral",
          text: `Your prompt is ${length.toLocaleString("en-US")} characters long; the task service accepts at most ${LIMITS.promptMaxChars.toLocaleString("en-US")}. Please shorten it and try again.`,
        });
        return;
      }
      await ack();
      const tell = async (text: string) => {
        await respond({ response_type: "ephemeral", replace_original: false, text });
      };
      try {
        // A slash command retried by a flaky network carries the same trigger_id.
        if (
          cmd.trigger_id &&
          !(await store.claimOnce(cmd.team_id, `cmd:${cmd.trigger_id}`, 3_600_000))
        ) {
          return;
        }
        await coordinator.startTask(
          { teamId: cmd.team_id, channelId: cmd.channel_id, userId: cmd.user_id, prompt },
          tell,
        );
      } catch (err) {
        logger.error({ err }, "/task failed");
        await tell(storeOrServiceError(err)).catch(() => undefined);
      }
    });

    app.event("message", async ({ event, body }) => {
      const parsed = MessageEvent.safeParse(event);
      if (!parsed.success) return;
      const msg = parsed.data;
      if (!INPUT_SUBTYPES.has(msg.subtype) || msg.bot_id || !msg.user) return;
      if (!msg.thread_ts || msg.thread_ts === msg.ts) return; // only replies in threads
      const envelope = z
        .object({ team_id: z.string().min(1), event_id: z.string().min(1) })
        .safeParse(body);
      if (!envelope.success) return;
      const { team_id: teamId, event_id: eventId } = envelope.data;
      const key = { teamId, channelId: msg.channel, threadTs: msg.thread_ts };
      try {
        if (!(await store.getThread(key))) return;
        // Slack redelivers events (same event_id); only the first delivery counts.
        if (!(await store.claimOnce(teamId, `event:${eventId}`, 24 * 3_600_000))) return;
        await coordinator.handleReply({
          key,
          userId: msg.user,
          text: fromSlack(msg.text ?? ""),
          ts: msg.ts,
          hasFiles: (msg.files?.length ?? 0) > 0 || msg.subtype === "file_share",
        });
      } catch (err) {
        logger.error({ err }, "handling a thread reply failed");
        await app.client.chat
          .postEphemeral({
            channel: msg.channel,
            user: msg.user,
            thread_ts: msg.thread_ts,
            text: `Your message could not be handled: ${storeOrServiceError(err)}`,
          })
          .catch(() => undefined);
      }
    });

    app.action(STOP_ACTION_ID, async ({ ack, body, respond }) => {
      await ack();
      const parsed = ActionBody.safeParse(body);
      const ref = parsed.success ? decodeStopValue(parsed.data.actions[0]?.value) : undefined;
      const tell = async (text: string) => {
        await respond({ response_type: "ephemeral", replace_original: false, text });
      };
      if (!parsed.success || !ref) {
        await tell("That Stop button is not valid any more.");
        return;
      }
      const teamId = parsed.data.team?.id ?? parsed.data.user.team_id ?? "";
      try {
        await coordinator.handleStop(
          {
            key: { teamId, channelId: ref.channelId, threadTs: ref.threadTs },
            userId: parsed.data.user.id,
            runId: ref.runId,
          },
          tell,
        );
      } catch (err) {
        logger.error({ err }, "stop failed");
        await tell(storeOrServiceError(err)).catch(() => undefined);
      }
    });
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

function storeOrServiceError(err: unknown): string {
  if (err instanceof StoreUnavailableError) {
    return "The app is temporarily unavailable (its storage is not answering). Nothing was started; please try again in a minute.";
  }
  return describeServiceError(err);
}
