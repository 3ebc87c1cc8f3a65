/**
 * End-to-end harness: the real app (Bolt's HTTP receiver, WebClient, relay, store) started
 * from a parsed environment, against the local Slack Web API double and the task service
 * simulator. Slack's side is driven with correctly signed HTTP requests, as Slack sends them.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { parse as parseYaml } from "yaml";
import { type Running, startApp } from "../../src/bootstrap.ts";
import { parseConfig } from "../../src/config/config.ts";
import { createLogger } from "../../src/log.ts";
import {
  type Simulator,
  type SimulatorOptions,
  startSimulator,
} from "../../tools/simulator/server.ts";
import {
  type FunctionDefinition,
  type LocalSlack,
  type LocalSlackOptions,
  type SlackMessage,
  startLocalSlack,
} from "../../tools/local-slack/index.ts";
import {
  type SignOptions,
  type SlackHttpResponse,
  sendBlockAction,
  sendEvent,
  sendSlashCommand,
} from "../../tools/local-slack/slack-requests.ts";

export const TEAM = "T0001";
export const CHANNEL = "C0GENERAL";
export const OWNER = "U0OWNER";
export const OTHER = "U0OTHER";
export const ADMIN = "U0ADMIN";
export const SIGNING_SECRET = "e2e-signing-secret-8f14e45fceea167a";
export const API_KEY = "he-e2eSimulatorKey0123456789";

export interface HarnessOptions {
  readonly redisUrl?: string | undefined;
  readonly simulator?: SimulatorOptions;
  readonly slack?: LocalSlackOptions;
  readonly editIntervalMs?: number;
  /** How answers reach Slack; `edit` unless a suite says otherwise (what most suites look at). */
  readonly streaming?: "auto" | "edit" | "native";
  /** Budgets (calls per minute) to enforce in the app for these methods, e.g. a scarce chat.update. */
  readonly rateLimits?: Readonly<Record<string, number>>;
  /** More settings of the app's environment (e.g. TASK_MODELS). */
  readonly env?: Readonly<Record<string, string>>;
}

let counter = 0;

/** What the local Slack takes from manifest.yml: the bot scopes, the Workflow Builder steps. */
function fromManifest(): {
  oauth_config: { scopes: { bot: string[] } };
  functions: Record<string, FunctionDefinition>;
} {
  return parseYaml(readFileSync(new URL("../../manifest.yml", import.meta.url), "utf8")) as {
    oauth_config: { scopes: { bot: string[] } };
    functions: Record<string, FunctionDefinition>;
  };
}

/** Starts the two local peers of the app: the service simulator and the Slack double. */
export async function startPeers(
  options: Pick<HarnessOptions, "simulator" | "slack"> = {},
): Promise<{ sim: Simulator; slack: LocalSlack }> {
  const sim = await startSimulator({ apiKeys: [API_KEY], chunkDelayMs: 5, ...options.simulator });
  const slack = await startLocalSlack({
    teamId: TEAM,
    // The app gets exactly the scopes its manifest asks for: a call needing another fails.
    scopes: fromManifest().oauth_config.scopes.bot,
    functions: fromManifest().functions,
    users: [
      { id: OWNER, name: "owner" },
      { id: OTHER, name: "other" },
      { id: ADMIN, name: "admin", is_admin: true },
    ],
    ...options.slack,
  });
  return { sim, slack };
}

/**
 * Functional tests are not about Slack's budgets (the scheduler's tests and the benchmark
 * are): the local Slack does not enforce tiers here, so the app need not either.
 */
const FUNCTIONAL_RATE_LIMITS: Readonly<Record<string, number>> = Object.fromEntries(
  [
    "chat.update",
    "chat.postMessage",
    "chat.delete",
    "reactions.add",
    "reactions.remove",
    "conversations.replies",
    "conversations.join",
  ].map((m) => [m, 60_000]),
);

/** The environment an app instance gets to talk to the local peers. */
export function appEnv(
  sim: Simulator,
  slack: LocalSlack,
  extra: Record<string, string>,
): Record<string, string> {
  return {
    TASK_API_URL: sim.url,
    TASK_API_KEY: API_KEY,
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: slack.apiUrl,
    SLACK_EDIT_INTERVAL_MS: "250",
    // Most suites look at edited messages; the streaming suites choose their mode.
    SLACK_STREAMING: "edit",
    LOG_LEVEL: "debug",
    TASK_POLL_TIMEOUT_S: "5",
    SLACK_RATE_LIMITS: JSON.stringify(FUNCTIONAL_RATE_LIMITS),
    // Suites fire many tasks from one person in one channel; the limits have their own test.
    TASK_RATE_USER_PER_MIN: "0",
    TASK_RATE_CHANNEL_PER_MIN: "0",
    ...extra,
  };
}

/** What a test does from Slack's side, against whichever app serves `eventsUrl`. */
export abstract class SlackScenario {
  readonly sim: Simulator;
  readonly slack: LocalSlack;
  #eventSeq = 0;

  protected constructor(sim: Simulator, slack: LocalSlack) {
    this.sim = sim;
    this.slack = slack;
  }

  abstract get eventsUrl(): string;

  /** Resolves once the app has nothing in flight (where that can be known). */
  async settled(): Promise<void> {}

  /** `/task <text>` typed by `user` in `channel`. */
  command(
    text: string,
    opts: { user?: string; channel?: string; triggerId?: string } & SignOptions = {},
  ): Promise<SlackHttpResponse> {
    const id = `cmd${++counter}`;
    const { user, channel, triggerId, ...sign } = opts;
    return sendSlashCommand(
      this.eventsUrl,
      SIGNING_SECRET,
      {
        text,
        team_id: TEAM,
        user_id: user ?? OWNER,
        channel_id: channel ?? CHANNEL,
        response_url: this.slack.responseUrl(id),
        trigger_id: triggerId ?? `trig.${id}.${Date.now()}`,
      },
      sign,
    );
  }

  /** A person's reply in a thread, as Slack delivers it (optionally as a retry). */
  async reply(
    threadTs: string,
    text: string,
    opts: {
      user?: string;
      eventId?: string;
      retryNum?: number;
      ts?: string;
      /** Files attached to the reply, as Slack describes them (e.g. `slack.addUserFile`'s). */
      files?: readonly Record<string, unknown>[];
    } = {},
  ): Promise<{ ts: string; eventId: string; response: SlackHttpResponse }> {
    const user = opts.user ?? OWNER;
    const ts =
      opts.ts ?? this.slack.addMessage({ channel: CHANNEL, user, text, thread_ts: threadTs });
    const eventId = opts.eventId ?? `Ev${++this.#eventSeq}x${Date.now()}`;
    const event: Record<string, unknown> = {
      type: "message",
      channel: CHANNEL,
      channel_type: "channel",
      user,
      text,
      ts,
      thread_ts: threadTs,
      event_ts: ts,
      team: TEAM,
      ...(opts.files ? { subtype: "file_share", files: opts.files } : {}),
    };
    const response = await sendEvent(
      this.eventsUrl,
      SIGNING_SECRET,
      { event_id: eventId, team_id: TEAM, event },
      opts.retryNum === undefined ? {} : { retryNum: opts.retryNum },
    );
    return { ts, eventId, response };
  }

  /**
   * A person's message, delivered as the events Slack sends for it: `message` (unless
   * `message: false`) and `app_mention` when `mention` is set. Returns its ts.
   */
  async say(
    channel: string,
    text: string,
    opts: {
      threadTs?: string;
      mention?: boolean;
      message?: boolean;
      user?: string;
      files?: readonly Record<string, unknown>[];
    } = {},
  ): Promise<string> {
    const user = opts.user ?? OWNER;
    const thread = opts.threadTs ? { thread_ts: opts.threadTs } : {};
    const ts = this.slack.addMessage({ channel, user, text, ...thread });
    const files = opts.files ? { files: opts.files } : {};
    const base = { channel, user, text, ts, ...thread, ...files };
    const dm = channel.startsWith("D");
    const deliveries: Record<string, unknown>[] = [];
    if (opts.message ?? true) {
      deliveries.push({
        type: "message",
        channel_type: dm ? "im" : "channel",
        ...(opts.files ? { subtype: "file_share" } : {}),
        ...base,
      });
    }
    if (opts.mention) deliveries.push({ type: "app_mention", ...base });
    for (const event of deliveries) {
      const res = await sendEvent(this.eventsUrl, SIGNING_SECRET, {
        event_id: `EvM${++this.#eventSeq}x${Date.now()}`,
        team_id: TEAM,
        event,
      });
      if (res.status !== 200) throw new Error(`Slack's event got HTTP ${res.status}`);
    }
    return ts;
  }

  /** The bot's answers in a thread of any channel, once `count` runs there have ended. */
  async finals(channel: string, threadTs: string, count = 1): Promise<SlackMessage[]> {
    const replies = () =>
      this.slack
        .thread(channel, threadTs)
        .filter((m) => m.user === this.slack.botUserId && (m.blocks?.length ?? 0) > 0);
    await this.slack.waitFor(
      () => replies().filter((m) => FINAL_STATUS.test(statusOf(m))).length >= count,
      { timeoutMs: 20_000, description: `${count} final answer(s) in ${channel}/${threadTs}` },
    );
    await this.settled();
    return replies();
  }

  /**
   * A workflow reaching the app's step `callbackId` ("Run a task" unless said): Slack's
   * `function_executed` event; returns the execution's id once the app acknowledged it.
   */
  async runStep(inputs: Record<string, unknown>, callbackId = "run_task"): Promise<string> {
    const to = { url: this.eventsUrl, signingSecret: SIGNING_SECRET };
    return (await this.slack.executeFunction({ callbackId, inputs }, to)).id;
  }

  /** Clicks the Stop button of a bot message. */
  async clickStop(message: SlackMessage, user: string): Promise<SlackHttpResponse> {
    const button = stopButton(message);
    if (!button) throw new Error("the message has no Stop button");
    return sendBlockAction(this.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: user,
      channel_id: message.channel,
      message_ts: message.ts,
      ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}),
      action_id: button.action_id,
      value: button.value,
      block_id: "task_controls",
      response_url: this.slack.responseUrl(`action${++counter}`),
    });
  }

  /** The channel message that opened the task for `prompt` (waiting up to `timeoutMs`). */
  async waitForTaskThread(promptFragment: string, timeoutMs?: number): Promise<string> {
    const parent = await this.slack.waitFor(
      () =>
        this.slack
          .messages(CHANNEL)
          .find(
            (m) =>
              m.user === this.slack.botUserId &&
              JSON.stringify(m.blocks ?? []).includes(promptFragment),
          ),
      {
        description: `the task message for "${promptFragment}"`,
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      },
    );
    return parent.ts;
  }

  /** The bot's answer messages in a thread (current content; file shares left out). */
  botReplies(threadTs: string): SlackMessage[] {
    return this.slack
      .thread(CHANNEL, threadTs)
      .filter(
        (m) => m.ts !== threadTs && m.user === this.slack.botUserId && (m.blocks?.length ?? 0) > 0,
      );
  }

  /** Waits until `count` runs of the thread have shown a final status; returns the replies. */
  async waitForFinal(threadTs: string, count = 1, timeoutMs = 20_000): Promise<SlackMessage[]> {
    await this.slack.waitFor(
      () => this.botReplies(threadTs).filter((m) => FINAL_STATUS.test(statusOf(m))).length >= count,
      { timeoutMs, description: `${count} final status message(s) in thread ${threadTs}` },
    );
    await this.settled();
    return this.botReplies(threadTs);
  }
}

/** The real app in this process, as `startApp` builds it for `npm start`. */
export class Harness extends SlackScenario {
  readonly dataDir: string;
  readonly logLines: string[] = [];
  app!: Running;
  readonly #options: HarnessOptions;
  /** The prefix of every key of this app's store (each suite its own). */
  readonly namespace = `e2e${process.pid}x${Date.now().toString(36)}x${Math.random().toString(36).slice(2, 6)}`;

  private constructor(sim: Simulator, slack: LocalSlack, dataDir: string, options: HarnessOptions) {
    super(sim, slack);
    this.dataDir = dataDir;
    this.#options = options;
  }

  static async start(options: HarnessOptions = {}): Promise<Harness> {
    const { sim, slack } = await startPeers(options);
    const h = new Harness(sim, slack, mkdtempSync(join(tmpdir(), "taskbot-e2e-")), options);
    await h.startApp();
    return h;
  }

  /** (Re)starts the app process-equivalent: a fresh Bolt app, relay and store client. */
  async startApp(): Promise<void> {
    const config = parseConfig(
      appEnv(this.sim, this.slack, {
        SLACK_RATE_LIMITS: JSON.stringify({
          ...FUNCTIONAL_RATE_LIMITS,
          ...this.#options.rateLimits,
        }),
        SLACK_EDIT_INTERVAL_MS: String(this.#options.editIntervalMs ?? 250),
        PORT: "0",
        DATA_DIR: this.dataDir,
        // Each suite its own keys: suites share the test Redis and run in parallel.
        STORE_NAMESPACE: this.namespace,
        SLACK_STREAMING: this.#options.streaming ?? "edit",
        ...(this.#options.redisUrl ? { REDIS_URL: this.#options.redisUrl } : {}),
        ...this.#options.env,
      }),
    );
    const lines = this.logLines;
    const destination = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = createLogger({
      level: "debug",
      secrets: [API_KEY, this.slack.botToken, SIGNING_SECRET],
      destination,
    });
    this.app = await startApp(config, logger);
  }

  async restartApp(): Promise<void> {
    await this.app.close();
    await this.startApp();
  }

  get eventsUrl(): string {
    return `http://127.0.0.1:${this.app.port}/slack/events`;
  }

  override async settled(): Promise<void> {
    // Task starts first (a start hands its run to the relay), then the runs.
    await this.app.settle(15_000);
    await this.app.relay.idle();
  }

  async close(): Promise<void> {
    await this.app.close();
    await this.sim.close();
    await this.slack.close();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** Stands in for a message a test expected but did not get, so assertions fail readably. */
export const NO_MESSAGE: SlackMessage = { channel: "", ts: "", user: "", text: "" };

const FINAL_STATUS = /Completed in|Failed after|Stopped|:warning:/;

interface Block {
  type: string;
  text?: unknown;
  elements?: Array<{ type: string; text?: string; action_id?: string; value?: string }>;
}

const blocksOf = (m: SlackMessage): Block[] => (m.blocks ?? []) as Block[];

/** The status line of a bot message (its last context block), or "". */
export function statusOf(m: SlackMessage): string {
  const contexts = blocksOf(m).filter((b) => b.type === "context");
  return (
    contexts
      .at(-1)
      ?.elements?.map((e) => e.text ?? "")
      .join(" ") ?? ""
  );
}

export function stopButton(m: SlackMessage): { action_id: string; value: string } | undefined {
  return buttonOf(m, "task_stop");
}

/** A button of a message by its action id (Stop, History, Files, Continue…). */
export function buttonOf(
  m: SlackMessage,
  actionId: string,
): { action_id: string; value: string } | undefined {
  for (const b of blocksOf(m)) {
    for (const e of b.elements ?? []) {
      if (e.type === "button" && e.action_id === actionId && e.value)
        return { action_id: e.action_id, value: e.value };
    }
  }
  return undefined;
}

/** The Markdown an answer message shows. */
export function markdownOf(m: SlackMessage): string {
  const blocks = blocksOf(m)
    .filter((b) => b.type === "markdown" && typeof b.text === "string")
    .map((b) => b.text as string);
  // A stream message shows what was streamed into it, and its stop's blocks below (until an
  // edit replaces both).
  const streamed = m.streaming_state !== undefined && m.edited === undefined ? [m.text] : [];
  return [...streamed, ...blocks].join("\n\n");
}

/**
 * Text for comparing a split answer with the service's: whitespace and the code-fence
 * lines the splitter adds when it cuts a code block are dropped, zero-width spaces too.
 */
export function comparable(markdown: string): string {
  return markdown
    .replace(/\u200B/g, "")
    .split("\n")
    .filter((l) => !/^\s*(`{3,}|~{3,})\S*\s*$/.test(l))
    .join("")
    .replace(/\s+/g, "");
}
