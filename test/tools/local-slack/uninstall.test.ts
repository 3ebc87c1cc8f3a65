/**
 * Uninstalling the app in the local Slack double, as Slack does: the workspace's bot token
 * answers `token_revoked` from then on (the other workspace's keeps working), and the app is
 * sent `app_uninstalled` and `tokens_revoked`, signed over HTTP or over Socket Mode.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebAPIPlatformError, WebClient } from "@slack/web-api";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type LocalSlack, startLocalSlack } from "../../../tools/local-slack/index.ts";
import { LocalSocketMode } from "../../../tools/local-slack/local-socket-mode.ts";
import { signSlackRequest } from "../../../tools/local-slack/slack-requests.ts";
import { silentLogger } from "../../support/silent-logger.ts";

const SECRET = "uninstall-signing-secret";
let slack: LocalSlack;
let app: Server;
let received: Array<{ body: Record<string, unknown>; signed: boolean }>;
/** Called after each event the app receives. */
let onReceived = () => {};
const receivedCount = (n: number) =>
  new Promise<void>((resolve) => {
    onReceived = () => received.length >= n && resolve();
    onReceived();
  });

beforeEach(async () => {
  slack = await startLocalSlack({ teamId: "T0A" });
  slack.addTeam({ id: "T0B", installed: true });
  received = [];
  // The app's HTTP receiver: records each event and whether Slack's signature is right.
  app = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += String(c)));
    req.on("end", () => {
      const ts = Number(req.headers["x-slack-request-timestamp"]);
      const signed = req.headers["x-slack-signature"] === signSlackRequest(SECRET, ts, raw);
      received.push({ body: JSON.parse(raw) as Record<string, unknown>, signed });
      res.end();
      onReceived();
    });
  });
  app.listen(0, "127.0.0.1");
  await once(app, "listening");
});

afterEach(async () => {
  await slack.close();
  app.close();
});

const appUrl = () => `http://127.0.0.1:${(app.address() as AddressInfo).port}/slack/events`;
const client = (token: string) =>
  new WebClient(token, {
    slackApiUrl: slack.apiUrl,
    logger: silentLogger,
    retryConfig: { retries: 0 },
  });

async function errorOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "ok";
  } catch (err) {
    return err instanceof WebAPIPlatformError ? err.data.error : String(err);
  }
}

describe("uninstalling the app from a workspace", () => {
  it("revokes that workspace's token and sends app_uninstalled and tokens_revoked, signed", async () => {
    const tokenB = slack.tokensOf("T0B")[0] ?? "";
    await slack.uninstall("T0A", { url: appUrl(), signingSecret: SECRET });

    expect(await errorOf(client(slack.botToken).auth.test())).toBe("token_revoked");
    expect(
      await errorOf(client(slack.botToken).chat.postMessage({ channel: "C1", text: "x" })),
    ).toBe("token_revoked");
    expect((await client(tokenB).auth.test()).team_id).toBe("T0B");

    expect(received.map((r) => r.signed)).toEqual([true, true]);
    expect(received.map((r) => r.body)).toEqual([
      expect.objectContaining({
        type: "event_callback",
        team_id: "T0A",
        event: expect.objectContaining({ type: "app_uninstalled" }),
      }),
      expect.objectContaining({
        team_id: "T0A",
        event: expect.objectContaining({
          type: "tokens_revoked",
          tokens: { oauth: [], bot: [slack.botUserId] },
        }),
      }),
    ]);
  });

  it("apps.uninstall, called with the workspace's token and the app's credentials, does the same", async () => {
    slack.eventDestination = { url: appUrl(), signingSecret: SECRET };
    const tokenB = slack.tokensOf("T0B")[0] ?? "";
    const wrong = client(tokenB).apps.uninstall({
      client_id: slack.oauth.clientId,
      client_secret: "nope",
    });
    expect(await errorOf(wrong)).toBe("invalid_client_id");

    await client(tokenB).apps.uninstall({
      client_id: slack.oauth.clientId,
      client_secret: slack.oauth.clientSecret,
    });
    await receivedCount(2);
    expect(received.map((r) => (r.body.event as { type: string }).type)).toEqual([
      "app_uninstalled",
      "tokens_revoked",
    ]);
    expect(received.every((r) => r.body.team_id === "T0B")).toBe(true);
    expect(await errorOf(client(tokenB).auth.test())).toBe("token_revoked");
    expect((await client(slack.botToken).auth.test()).team_id).toBe("T0A");
    expect(slack.deliveryFailures).toEqual([]);
  });

  it("sends the events over Socket Mode, as Events API envelopes the app acknowledges", async () => {
    const socket = await LocalSocketMode.start();
    const ws = new WebSocket(socket.url);
    const envelopes: Array<{
      envelope_id: string;
      type: string;
      payload: { event: { type: string } };
    }> = [];
    ws.on("message", (data) => {
      const message = JSON.parse(String(data)) as (typeof envelopes)[number];
      if (message.type !== "events_api") return;
      envelopes.push(message);
      ws.send(JSON.stringify({ envelope_id: message.envelope_id }));
    });
    await socket.connected();
    await slack.uninstall("T0B", { socket });
    expect(envelopes.map((e) => e.payload.event.type)).toEqual([
      "app_uninstalled",
      "tokens_revoked",
    ]);
    ws.close();
    await socket.close();
  });

  it("uninstalls an org-wide install: the organisation's token is revoked, the events name it", async () => {
    slack.addEnterprise({ id: "E0GRID" });
    const events = await slack.uninstall("E0GRID", undefined);
    expect(
      events.map((e) => [e.event.type, e.team_id, e.enterprise_id, e.is_enterprise_install]),
    ).toEqual([
      ["app_uninstalled", "E0GRID", "E0GRID", true],
      ["tokens_revoked", "E0GRID", "E0GRID", true],
    ]);
  });
});
