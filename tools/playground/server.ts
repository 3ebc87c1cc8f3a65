/**
 * The local playground: the service simulator, the local Slack double, the app and a small web
 * page that plays Slack's part (signed slash commands, events and block actions), all in one process.
 */
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { type Running, startApp } from "../../src/bootstrap.ts";
import { parseConfig } from "../../src/config/config.ts";
import { createLogger, type Logger } from "../../src/log.ts";
import { type Simulator, startSimulator } from "../simulator/server.ts";
import { type FunctionDefinition, type LocalSlack, startLocalSlack } from "../local-slack/index.ts";
import { sendBlockAction, sendEvent, sendSlashCommand } from "../local-slack/slack-requests.ts";
import { BodyTooLarge, readBody, refuse } from "./guard.ts";
import { CloseBody, PlaygroundModals, SubmitBody, ViewActionBody } from "./modals.ts";
import { PrivateMessages } from "./private.ts";

const TEAM = "T0PLAY";
export const YOU = "U0YOU";
export const GENERAL = "C0GENERAL";
export const DM = "D0YOUDM";
/** The largest request the page may send: a message with a file the service could take. */
export const MAX_BODY_BYTES = 96 * 1024 * 1024;
const WEB_DIR = new URL("./web/", import.meta.url);
const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

export interface Playground {
  readonly url: string;
  readonly slack: LocalSlack;
  /** The service simulator answering the tasks, unless a real service was given. */
  readonly sim: Simulator | undefined;
  /** The app's own HTTP port (Slack's requests), on 127.0.0.1. */
  readonly appPort: number;
  close(): Promise<void>;
}

export interface PlaygroundOptions {
  readonly port?: number;
  /** 127.0.0.1 unless told otherwise (a container listens on 0.0.0.0 for its published port). */
  readonly host?: string;
  readonly logger?: Logger;
  /** A real Task Execution Service to answer instead of the simulator. */
  readonly service?: { readonly url: string; readonly apiKey: string };
  /** The largest request body the page server takes (MAX_BODY_BYTES). */
  readonly maxBodyBytes?: number;
  /**
   * Where generated pages' previews find a Chromium: the machine's PATH and CHROMIUM_PATH, as
   * main.ts read them (none: no previews); and, as root, PREVIEW_ALLOW_NO_SANDBOX (without it
   * previews are off there, as in the app).
   */
  readonly browser?: {
    readonly PATH?: string;
    readonly CHROMIUM_PATH?: string;
    readonly PREVIEW_ALLOW_NO_SANDBOX?: string;
  };
}

/** What the page says about where answers come from. */
export interface ServiceNote {
  readonly simulator: boolean;
  readonly url: string;
}

/** A secret of this run only: nothing written in the repository opens the playground's app. */
const runSecret = (prefix: string) => `${prefix}${randomBytes(24).toString("base64url")}`;
/** The files the page shows inline: raster images (never SVG or HTML: they could run script). */
const INLINE_IMAGE = /\.(png|jpe?g|gif|webp)$/i;

/** What the page posts: a message (or `/task …`) in a channel or thread, maybe with a file. */
const SendBody = z.object({
  channel: z.enum([GENERAL, DM]),
  text: z.string().max(40_000),
  threadTs: z.string().optional(),
  file: z.object({ name: z.string().min(1), mimetype: z.string(), base64: z.string() }).optional(),
});
const ActionBody = z.object({
  channel: z.enum([GENERAL, DM]),
  ts: z.string(),
  threadTs: z.string().optional(),
  actionId: z.string(),
  value: z.string(),
  blockId: z.string().optional(),
});

/** Workflow Builder's "Run a task" step, run with the text typed, in the channel shown. */
const StepBody = z.object({
  channel: z.enum([GENERAL, DM]),
  prompt: z.string().max(40_000),
});

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

export async function startPlayground(options: PlaygroundOptions = {}): Promise<Playground> {
  // Its port first: a busy or forbidden one is said before anything else starts (and says
  // anything), in one line (tools/playground/main.ts).
  let ui: PlaygroundUi | undefined;
  let port = 0;
  const early = options.logger ?? createLogger({ level: "warn" });
  const server = createServer(
    pageHandler(
      () => ui,
      early,
      options.maxBodyBytes ?? MAX_BODY_BYTES,
      () => port,
    ),
  );
  const host = options.host ?? "127.0.0.1";
  server.listen(options.port ?? 0, host);
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
  try {
    const parts = await startParts(options);
    ui = parts.ui;
    return {
      url: `http://${host === "0.0.0.0" || host === "::" ? "localhost" : host}:${port}/`,
      slack: parts.slack,
      sim: parts.sim,
      appPort: parts.appPort,
      async close() {
        parts.ui.closeStreams();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await parts.stop();
      },
    };
  } catch (err) {
    server.close();
    throw err;
  }
}

/** The service (simulator or real), the Slack double and the app, and the page's UI on them. */
async function startParts(options: PlaygroundOptions) {
  const signingSecret = runSecret("");
  const simKey = runSecret("he-");
  const sim = options.service
    ? undefined
    : await startSimulator({ apiKeys: [simKey], chunkDelayMs: 40 });
  const service = options.service ?? { url: sim?.url ?? "", apiKey: simKey };
  const slack = await startLocalSlack({
    teamId: TEAM,
    scopes: fromManifest().oauth_config.scopes.bot,
    functions: fromManifest().functions,
    users: [{ id: YOU, name: "you" }],
  });
  const dataDir = mkdtempSync(join(tmpdir(), "taskbot-playground-"));
  const logger =
    options.logger ??
    createLogger({ level: "warn", secrets: [service.apiKey, slack.botToken, signingSecret] });
  const config = parseConfig({
    TASK_API_URL: service.url,
    TASK_API_KEY: service.apiKey,
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: signingSecret,
    SLACK_API_URL: slack.apiUrl,
    SLACK_EDIT_INTERVAL_MS: "300",
    // One person trying everything at once: the per-person limit would only get in the way.
    TASK_RATE_USER_PER_MIN: "0",
    PORT: "0",
    // Slack's requests come from this process only: nobody else reaches the app, its
    // /metrics.json or its health routes.
    LISTEN_HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    // Generated pages are previewed when a Chromium is on PATH (or at CHROMIUM_PATH), and as
    // root only with PREVIEW_ALLOW_NO_SANDBOX.
    ...options.browser,
  });
  const stop = async (app?: Running) => {
    await app?.close();
    await sim?.close();
    await slack.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  const app: Running = await startApp(config, logger).catch(async (err: unknown) => {
    await stop();
    throw err;
  });
  const appPort = app.port ?? 0;
  const ui = new PlaygroundUi(slack, {
    eventsUrl: `http://127.0.0.1:${appPort}/slack/events`,
    signingSecret,
    service: { simulator: sim !== undefined, url: service.url },
  });
  return { ui, slack, sim, appPort, stop: () => stop(app) };
}

/** The page server's requests: refused from elsewhere, else the UI's, its failures in words. */
function pageHandler(
  uiOf: () => PlaygroundUi | undefined,
  logger: Logger,
  maxBody: number,
  port: () => number,
): RequestListener {
  return (req, res) => {
    const refusal = refuse(req, port());
    if (refusal) return void res.writeHead(refusal.status, TEXT).end(refusal.text);
    const ui = uiOf();
    if (!ui)
      return void res.writeHead(503, TEXT).end("The playground is starting: reload in a moment.");
    ui.handle(req, res, maxBody).catch((err: unknown) => {
      if (err instanceof BodyTooLarge) {
        // Node reads the rest of the body and drops it: nothing more is kept.
        if (!res.headersSent) res.writeHead(413, TEXT);
        return void res.end(err.message);
      }
      if (err instanceof SyntaxError || err instanceof z.ZodError) {
        return void res
          .writeHead(400, TEXT)
          .end(`The playground did not understand: ${err.message}`);
      }
      logger.error({ err }, "playground request failed");
      if (!res.headersSent) res.writeHead(500, TEXT).end("playground error");
    });
  };
}

const TEXT = { "content-type": "text/plain; charset=utf-8" };
const DismissBody = z.object({ id: z.string().min(1) });

/** The web page's backend: workspace state as JSON, a change stream, and Slack's requests. */
class PlaygroundUi {
  readonly #slack: LocalSlack;
  readonly #eventsUrl: string;
  readonly #secret: string;
  readonly #service: ServiceNote;
  readonly #streams = new Set<ServerResponse>();
  readonly #private: PrivateMessages;
  /** Names of the files the user attached, by `channel/ts` of their message. */
  readonly #attached = new Map<string, string>();
  #seq = 0;
  #pending: NodeJS.Timeout | undefined;
  readonly #modals: PlaygroundModals;

  constructor(
    slack: LocalSlack,
    app: { eventsUrl: string; signingSecret: string; service: ServiceNote },
  ) {
    this.#slack = slack;
    this.#eventsUrl = app.eventsUrl;
    this.#secret = app.signingSecret;
    this.#service = app.service;
    this.#private = new PrivateMessages(slack, YOU, [GENERAL, DM]);
    this.#modals = new PlaygroundModals(slack, app.eventsUrl, app.signingSecret, TEAM, YOU);
    slack.on("change", () => this.#changed());
    slack.on("call", () => this.#changed());
    slack.on("response_url", () => this.#changed());
  }

  closeStreams(): void {
    clearTimeout(this.#pending);
    for (const res of this.#streams) res.end();
  }

  #changed(): void {
    if (this.#pending) return;
    this.#pending = setTimeout(() => {
      this.#pending = undefined;
      for (const res of this.#streams) res.write(`data: change\n\n`);
    }, 50);
  }

  async handle(req: IncomingMessage, res: ServerResponse, maxBody: number): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.method === "GET") {
      if (url.pathname === "/api/state") return json(res, this.#state());
      if (url.pathname === "/api/changes") return this.#stream(req, res);
      if (url.pathname.startsWith("/files/"))
        return this.#file(
          decodeURIComponent(url.pathname.slice(7)),
          res,
          url.searchParams.has("inline"),
        );
      return serveStatic(url.pathname, res);
    }
    if (req.method !== "POST") return void res.writeHead(405).end();
    const body: unknown = JSON.parse(await readBody(req, maxBody));
    switch (url.pathname) {
      case "/api/send":
        return json(res, await this.#send(SendBody.parse(body)));
      case "/api/action":
        return json(res, await this.#action(ActionBody.parse(body)));
      case "/api/step":
        return json(res, await this.#step(StepBody.parse(body)));
      case "/api/view/submit":
        return json(
          res,
          await this.#modals.submit(SubmitBody.parse(body)).finally(() => this.#changed()),
        );
      case "/api/view/action":
        return json(res, await this.#modals.action(ViewActionBody.parse(body)));
      case "/api/view/close": {
        const closed = this.#modals.close(CloseBody.parse(body));
        this.#changed();
        return json(res, closed);
      }
      case "/api/private/dismiss": {
        const dismissed = this.#private.dismiss(DismissBody.parse(body).id);
        this.#changed();
        return json(res, { status: dismissed ? 200 : 404 });
      }
      default:
        res.writeHead(404, TEXT).end("not found");
    }
  }

  #state(): unknown {
    const slack = this.#slack;
    const files = slack.files().map((f) => ({
      id: f.id,
      name: f.name,
      title: f.title ?? f.name,
      size: f.bytes.length,
      image: INLINE_IMAGE.test(f.name),
    }));
    return {
      you: YOU,
      bot: { id: slack.botUserId, name: "Task Agent" },
      service: this.#service,
      channels: [
        { id: GENERAL, name: "general", kind: "channel" },
        { id: DM, name: "Task Agent", kind: "dm" },
      ],
      messages: [GENERAL, DM]
        .flatMap((c) => slack.messages(c, { includeReplies: true }))
        .map((m) => ({ ...m, attached: this.#attached.get(`${m.channel}/${m.ts}`) })),
      ephemerals: this.#private.list(),
      files,
      // Workflow Builder steps run here: each with its outputs (or error) once its task ended.
      steps: slack.executions().map((e) => ({
        id: e.id,
        prompt: typeof e.inputs.prompt === "string" ? e.inputs.prompt : "",
        status: e.status,
        ...(e.outputs ? { outputs: e.outputs } : {}),
        ...(e.error === undefined ? {} : { error: e.error }),
      })),
      modal: this.#modals.current(),
    };
  }

  #stream(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    res.write(`data: hello\n\n`);
    this.#streams.add(res);
    req.on("close", () => this.#streams.delete(res));
  }

  #file(id: string, res: ServerResponse, inline = false): void {
    const file = this.#slack.files().find((f) => f.id === id);
    if (!file) return void res.writeHead(404).end("no such file");
    const type = INLINE_IMAGE.exec(file.name)?.[1]?.toLowerCase();
    if (inline && type) {
      // Only raster images are shown from this origin; anything else the agent made downloads.
      const mime = type === "jpg" ? "jpeg" : type;
      res.writeHead(200, {
        "content-type": `image/${mime}`,
        "x-content-type-options": "nosniff",
        "content-security-policy": "default-src 'none'",
      });
      return void res.end(file.bytes);
    }
    res.writeHead(200, {
      "content-type": "application/octet-stream",
      "content-disposition": `attachment; filename="${file.name.replace(/["\\\r\n]/g, "_")}"`,
    });
    res.end(file.bytes);
  }

  async #send(body: z.infer<typeof SendBody>): Promise<{ status: number }> {
    const bot = this.#slack.botUserId;
    const text = body.text.replace(/@Task Agent\b/gi, `<@${bot}>`);
    const command = /^\/task(?:\s|$)/.exec(text);
    if (command && !body.threadTs) {
      const id = `play${++this.#seq}`;
      const res = await sendSlashCommand(this.#eventsUrl, this.#secret, {
        text: text.slice(command[0].length).trim(),
        team_id: TEAM,
        user_id: YOU,
        channel_id: body.channel,
        response_url: this.#private.responseUrl({ channel: body.channel }),
        trigger_id: `trig.${id}.${Date.now()}`,
      });
      const ack = res.body.trim() ? textOf(res.json ?? res.body) : "";
      if (ack) this.#private.acknowledged(body.channel, ack);
      this.#changed();
      return { status: res.status };
    }
    const ts = this.#slack.addMessage({
      channel: body.channel,
      user: YOU,
      text,
      ...(body.threadTs ? { thread_ts: body.threadTs } : {}),
    });
    const files = body.file ? [this.#userFile(body.file)] : [];
    if (body.file) this.#attached.set(`${body.channel}/${ts}`, body.file.name);
    const base = {
      channel: body.channel,
      user: YOU,
      text,
      ts,
      event_ts: ts,
      team: TEAM,
      ...(body.threadTs ? { thread_ts: body.threadTs } : {}),
      ...(files.length ? { subtype: "file_share", files } : {}),
    };
    const dm = body.channel === DM;
    const events: Record<string, unknown>[] = [
      { type: "message", channel_type: dm ? "im" : "channel", ...base },
    ];
    if (!dm && text.includes(`<@${bot}>`)) events.push({ type: "app_mention", ...base });
    let status = 200;
    for (const event of events) {
      const res = await sendEvent(this.#eventsUrl, this.#secret, {
        event_id: `EvPlay${++this.#seq}x${Date.now()}`,
        team_id: TEAM,
        event,
      });
      status = Math.max(status, res.status);
    }
    return { status };
  }

  #userFile(file: { name: string; mimetype: string; base64: string }): Record<string, unknown> {
    const stored = this.#slack.addUserFile({
      name: file.name,
      mimetype: file.mimetype || "application/octet-stream",
      bytes: Buffer.from(file.base64, "base64"),
    });
    return { ...stored, filetype: extname(file.name).slice(1) };
  }

  /** The "Run a task" step, as a workflow runs it: your task, in the channel shown. */
  async #step(body: z.infer<typeof StepBody>): Promise<{ status: number }> {
    const inputs = { prompt: body.prompt, channel: body.channel, requester: YOU };
    const to = { url: this.#eventsUrl, signingSecret: this.#secret };
    await this.#slack.executeFunction({ callbackId: "run_task", inputs }, to);
    this.#changed();
    return { status: 200 };
  }

  async #action(body: z.infer<typeof ActionBody>): Promise<{ status: number }> {
    const res = await sendBlockAction(this.#eventsUrl, this.#secret, {
      team_id: TEAM,
      user_id: YOU,
      channel_id: body.channel,
      message_ts: body.ts,
      ...(body.threadTs ? { thread_ts: body.threadTs } : {}),
      action_id: body.actionId,
      value: body.value,
      block_id: body.blockId ?? "task_controls",
      // The answer shows in the thread of a reply's button, in the channel for a parent's.
      response_url: this.#private.responseUrl({
        channel: body.channel,
        threadTs: body.threadTs !== body.ts ? body.threadTs : undefined,
      }),
    });
    return { status: res.status };
  }
}

function textOf(body: unknown): string {
  if (typeof body === "string") return body;
  const parsed = z.object({ text: z.string() }).safeParse(body);
  return parsed.success ? parsed.data.text : JSON.stringify(body);
}

function json(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));
}

function serveStatic(pathname: string, res: ServerResponse): void {
  // Browsers that ignore the page's <link rel="icon"> still ask for /favicon.ico.
  const name =
    pathname === "/"
      ? "index.html"
      : pathname === "/favicon.ico"
        ? "favicon.svg"
        : pathname.slice(1);
  const file = new URL(name, WEB_DIR);
  if (!/^[a-z-]+\.(html|js|css|svg)$/.test(name) || !existsSync(file)) {
    return void res.writeHead(404, TEXT).end("not found");
  }
  const body = readFileSync(file);
  res.writeHead(200, { "content-type": TYPES[extname(name)] ?? "text/plain" }).end(body);
}
