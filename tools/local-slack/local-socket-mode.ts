/**
 * A local Slack Socket Mode endpoint: a WebSocket server (the `ws` library) that says
 * "hello" to the app, sends it envelopes as Slack does (slash commands, Events API, block
 * actions) and records the app's acknowledgements. Point the local Slack double's
 * `socketModeUrl` at it; Bolt's SocketModeReceiver then runs unmodified. It can also fail as
 * Slack's endpoint can: drop the connections it holds, and refuse new ones (HTTP 503 to the
 * WebSocket upgrade) until told otherwise.
 */
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import type { WebSocket } from "ws";
import { WebSocketServer } from "ws";

export interface Ack {
  readonly envelope_id: string;
  readonly payload?: unknown;
}

export class LocalSocketMode {
  readonly #server: WebSocketServer;
  readonly #sockets = new Set<WebSocket>();
  readonly acks: Ack[] = [];
  readonly #waiters = new Map<string, (ack: Ack) => void>();
  #refusing = false;
  /** Connection attempts answered 503 while refusing. */
  refused = 0;

  private constructor(server: WebSocketServer) {
    this.#server = server;
    server.on("connection", (socket) => {
      this.#sockets.add(socket);
      socket.on("close", () => this.#sockets.delete(socket));
      socket.on("message", (data) => {
        const ack = JSON.parse(String(data)) as Ack;
        this.acks.push(ack);
        this.#waiters.get(ack.envelope_id)?.(ack);
      });
      socket.send(
        JSON.stringify({ type: "hello", num_connections: 1, connection_info: { app_id: "A0001" } }),
      );
    });
  }

  static async start(): Promise<LocalSocketMode> {
    // Set once the instance exists: the upgrade check reads whether it refuses.
    let refuses = (): boolean => false;
    const server = new WebSocketServer({
      host: "127.0.0.1",
      port: 0,
      verifyClient: (_info, accept) => (refuses() ? accept(false, 503) : accept(true)),
    });
    await once(server, "listening");
    const endpoint = new LocalSocketMode(server);
    refuses = () => endpoint.#refuseNext();
    return endpoint;
  }

  /** Refuses every new connection from now on (`false`: accepts them again). */
  refuse(on = true): void {
    this.#refusing = on;
  }

  /** Drops every connection at once, as a network failure would (no close frame). */
  drop(): void {
    for (const socket of this.#sockets) socket.terminate();
  }

  /** Whether connections are open now. */
  get open(): boolean {
    return this.#sockets.size > 0;
  }

  #refuseNext(): boolean {
    if (this.#refusing) this.refused += 1;
    return this.#refusing;
  }

  get url(): string {
    const address = this.#server.address();
    if (address === null || typeof address === "string") throw new Error("not listening");
    return `ws://127.0.0.1:${address.port}/link`;
  }

  /** Resolves once an app is connected. */
  async connected(timeoutMs = 10_000): Promise<void> {
    if (this.#sockets.size > 0) return;
    await Promise.race([
      once(this.#server, "connection"),
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error("no Socket Mode connection")), timeoutMs),
      ),
    ]);
  }

  /** Sends an envelope to the connected app and resolves with its acknowledgement. */
  async send(type: string, payload: unknown, extra: Record<string, unknown> = {}): Promise<Ack> {
    const envelope_id = randomUUID();
    const acked = new Promise<Ack>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ack for ${type} ${envelope_id}`)), 3000);
      this.#waiters.set(envelope_id, (ack) => {
        clearTimeout(timer);
        this.#waiters.delete(envelope_id);
        resolve(ack);
      });
    });
    const message = JSON.stringify({
      envelope_id,
      type,
      payload,
      accepts_response_payload: type !== "events_api",
      ...extra,
    });
    for (const socket of this.#sockets) socket.send(message);
    return acked;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.terminate();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
