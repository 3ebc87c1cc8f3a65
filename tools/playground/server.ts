/**
 * The local playground: the service simulator, the local Slack double, the app and a small web
 * page that plays Slack's part (signed slash commands, events and block actions), all in one process.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { type Running, startApp } from "../../src/bootstrap.ts";
import { parseConfig } from "../../src/config.ts";
import { createLogger, type Logger } from "../../src/log.ts";
import { type Simulator, startSimulator } from "../../src/simulator/server.ts";
import { type LocalSlack, startLocalSlack } from "../local-slack/index.ts";
import { sendBlockAction, sendEvent, sendSlashCommand } from "../local-slack/slack-requests.ts";
import { CloseBody, PlaygroundModals, SubmitBody, ViewActionBody } from "./modals.ts";

const TEAM = "T0PLAY";
export const YOU = "U0YOU";
export const GENERAL = "C0GENERAL";
export const DM = "D0YOUDM";
const SIGNING_SECRET = "playground-signing-secret-0c1f";
const API_KEY = "he-playgroundSimulatorKey0123";
const WEB_DIR = new URL("./web/", import.meta.url);
const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

export interface Playground {
  readonly url: string;
  readonly slack: LocalSlack;
  readonly sim: Simulator;
  close(): Promise<void>;
}

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

function manifestScopes(): string[] {
  const manifest = parseYaml(
    readFileSync(new URL("../../manifest.yml", import.meta.url), "utf8"),
  ) as { oauth_config: { scopes: { bot: string[] } } };
  return manifest.oauth_config.scopes.bot;
}

export async function startPlayground(
  options: { port?: number; host?: string; logger?: Logger } = {},
): Promise<Playground> {
  const sim: Simulator = await startSimulator({ apiKeys: [API_KEY], chunkDelayMs: 40 });
  const slack = await startLocalSlack({
    teamId: TEAM,
    scopes: manifestScopes(),
    users: [{ id: YOU, name: "you" }],
  });
  const dataDir = mkdtempSync(join(tmpdir(), "taskbot-playground-"));
  const logger =
    options.logger ??
    createLogger({ level: "warn", secrets: [API_KEY, slack.botToken, SIGNING_SECRET] });
  const config = parseConfig({
    TASK_API_URL: sim.url,
    TASK_API_KEY: API_KEY,
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: slack.apiUrl,
    SLACK_EDIT_INTERVAL_MS: "300",
    // One person trying everything at once: the per-person limit would only get in the way.
    TASK_RATE_USER_PER_MIN: "0",
    PORT: "0",
    DATA_DIR: dataDir,
    // Generated pages are previewed when a Chromium is on PATH (or at CHROMIUM_PATH).
    PATH: process.env.PATH ?? "",
    ...(process.env.CHROMIUM_PATH ? { CHROMIUM_PATH: process.env.CHROMIUM_PATH } : {}),
  });
  const app: Running = await startApp(config, logger);
  const ui = new PlaygroundUi(slack, `http://127.0.0.1:${app.port}/slack/events`);
  const server = createServer((req, res) => {
    ui.handle(req, res).catch((err: unknown) => {
      logger.error({ err }, "playground request failed");
      if (!res.headersSent) res.writeHead(500).end("playground error");
    });
  });
  // 127.0.0.1 unless told otherwise (a container listens on 0.0.0.0 for its published port).
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host === "0.0.0.0" || host === "::" ? "localhost" : host}:${port}/`,
    slack,
    sim,
    async close() {
      ui.closeStreams();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await app.close();
      await sim.close();
      await slack.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The web page's backend: workspace state as JSON, a change stream, and Slack's requests. */
class PlaygroundUi {
  readonly #slack: LocalSlack;
  readonly #eventsUrl: string;
  readonly #streams = new Set<ServerResponse>();
  /** Slash command acknowledgements with a body: Slack shows them only to the user. */
  readonly #acks: Array<{ channel: string; text: string; at: number }> = [];
  /** Names of the files the user attached, by `channel/ts` of their message. */
  readonly #attached = new Map<string, string>();
  #seq = 0;
  #pending: NodeJS.Timeout | undefined;
  readonly #modals: PlaygroundModals;

  constructor(slack: LocalSlack, eventsUrl: string) {
    this.#slack = slack;
    this.#eventsUrl = eventsUrl;
    this.#modals = new PlaygroundModals(slack, eventsUrl, SIGNING_SECRET, TEAM, YOU);
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

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.method === "GET" && url.pathname === "/api/state") return json(res, this.#state());
    if (req.method === "GET" && url.pathname === "/api/changes") return this.#stream(req, res);
    if (req.method === "GET" && url.pathname.startsWith("/files/"))
      return this.#file(
        decodeURIComponent(url.pathname.slice(7)),
        res,
        url.searchParams.has("inline"),
      );
    if (req.method === "POST" && url.pathname === "/api/send")
      return json(res, await this.#send(SendBody.parse(JSON.parse(await readBody(req)))));
    if (req.method === "POST" && url.pathname === "/api/action")
      return json(res, await this.#action(ActionBody.parse(JSON.parse(await readBody(req)))));
    if (req.method === "POST" && url.pathname === "/api/view/submit") {
      const body = SubmitBody.parse(JSON.parse(await readBody(req)));
      return json(res, await this.#modals.submit(body).finally(() => this.#changed()));
    }
    if (req.method === "POST" && url.pathname === "/api/view/action")
      return json(
        res,
        await this.#modals.action(ViewActionBody.parse(JSON.parse(await readBody(req)))),
      );
    if (req.method === "POST" && url.pathname === "/api/view/close") {
      const closed = this.#modals.close(CloseBody.parse(JSON.parse(await readBody(req))));
      this.#changed();
      return json(res, closed);
    }
    if (req.method === "GET") return serveStatic(url.pathname, res);
    res.writeHead(405).end();
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
    const ephemerals = [
      ...slack.ephemerals(undefined, YOU).map((e) => ({
        channel: e.channel,
        threadTs: e.thread_ts,
        text: e.markdown_text ?? e.text,
        blocks: e.blocks ?? [],
      })),
      ...slack.responseUrlPosts.map((p) => ({ channel: "", text: textOf(p.body), blocks: [] })),
      ...this.#acks.map((a) => ({ channel: a.channel, text: a.text, blocks: [] })),
    ];
    return {
      you: YOU,
      bot: { id: slack.botUserId, name: "Task Agent" },
      channels: [
        { id: GENERAL, name: "general", kind: "channel" },
        { id: DM, name: "Task Agent", kind: "dm" },
      ],
      messages: [GENERAL, DM]
        .flatMap((c) => slack.messages(c, { includeReplies: true }))
        .map((m) => ({ ...m, attached: this.#attached.get(`${m.channel}/${m.ts}`) })),
      ephemerals,
      files,
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
      const res = await sendSlashCommand(this.#eventsUrl, SIGNING_SECRET, {
        text: text.slice(command[0].length).trim(),
        team_id: TEAM,
        user_id: YOU,
        channel_id: body.channel,
        response_url: this.#slack.responseUrl(id),
        trigger_id: `trig.${id}.${Date.now()}`,
      });
      const ack = res.body.trim() ? textOf(res.json ?? res.body) : "";
      if (ack) this.#acks.push({ channel: body.channel, text: ack, at: Date.now() });
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
      const res = await sendEvent(this.#eventsUrl, SIGNING_SECRET, {
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

  async #action(body: z.infer<typeof ActionBody>): Promise<{ status: number }> {
    const res = await sendBlockAction(this.#eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: YOU,
      channel_id: body.channel,
      message_ts: body.ts,
      ...(body.threadTs ? { thread_ts: body.threadTs } : {}),
      action_id: body.actionId,
      value: body.value,
      block_id: body.blockId ?? "task_controls",
      response_url: this.#slack.responseUrl(`action${++this.#seq}`),
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

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function serveStatic(pathname: string, res: ServerResponse): void {
  const name = pathname === "/" ? "index.html" : pathname.slice(1);
  if (!/^[a-z-]+\.(html|js|css)$/.test(name)) return void res.writeHead(404).end("not found");
  const body = readFileSync(new URL(name, WEB_DIR));
  res.writeHead(200, { "content-type": TYPES[extname(name)] ?? "text/plain" }).end(body);
}
