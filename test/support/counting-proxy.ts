/**
 * A local HTTP proxy for the proxy tests, as a corporate one behaves: CONNECT tunnels and
 * absolute-URL forwarding, Basic Proxy-Authorization, its own name resolution (the test hosts
 * `*.invalid`, which nothing else resolves, lead to loopback), and a refusal (403) for anything
 * else, so a test never reaches the internet. Every connection it is asked for is recorded.
 *
 * Written here rather than with the `proxy` package: that one resolves targets itself and has
 * no hook to map test host names or to refuse outside targets before it connects.
 */
import { once } from "node:events";
import {
  createServer,
  type IncomingMessage,
  request as httpRequest,
  type Server,
  type ServerResponse,
} from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";

export interface ProxiedConnection {
  /** `tunnel` for CONNECT, `forward` for a request sent to the proxy with an absolute URL. */
  readonly kind: "tunnel" | "forward";
  /** `host:port` as the client asked for it. */
  readonly target: string;
  /** Credentials were right and the target is one the proxy serves: the proxy carried it. */
  readonly carried: boolean;
  /** The status the proxy answered when it did not carry it (407, 403, 502). */
  readonly refusedWith?: number;
}

export interface CountingProxyOptions {
  /** Basic credentials the proxy requires; none → it asks for none. */
  readonly user?: string;
  readonly password?: string;
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** Where the proxy connects for a host the client named, or undefined: not served. */
function resolveTarget(host: string): string | undefined {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "127.0.0.1" || h === "localhost" || h.endsWith(".invalid")) return "127.0.0.1";
  return undefined;
}

function splitHostPort(target: string): { host: string; port: number } {
  const colon = target.lastIndexOf(":");
  return { host: target.slice(0, colon), port: Number(target.slice(colon + 1)) };
}

export class CountingProxy {
  readonly connections: ProxiedConnection[] = [];
  readonly #server: Server;
  readonly #sockets = new Set<Duplex>();
  readonly #options: CountingProxyOptions;

  private constructor(server: Server, options: CountingProxyOptions) {
    this.#server = server;
    this.#options = options;
    server.on("connection", (s: Socket) => this.#track(s));
    server.on("connect", (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.#tunnel(req, socket, head),
    );
    server.on("request", (req: IncomingMessage, res: ServerResponse) => this.#forward(req, res));
  }

  static async start(options: CountingProxyOptions = {}): Promise<CountingProxy> {
    const server = createServer();
    const proxy = new CountingProxy(server, options);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    return proxy;
  }

  /** `http://127.0.0.1:PORT`, without credentials. */
  get address(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** The URL to put in HTTP(S)_PROXY: with the credentials, if the proxy requires some. */
  get url(): string {
    const { user, password } = this.#options;
    if (user === undefined) return this.address;
    const auth = `${encodeURIComponent(user)}:${encodeURIComponent(password ?? "")}@`;
    return this.address.replace("://", `://${auth}`);
  }

  /** Connections the proxy carried to `host:port` (or to `host` on any port). */
  carried(target: string): number {
    return this.connections.filter(
      (c) => c.carried && (c.target === target || c.target.startsWith(`${target}:`)),
    ).length;
  }

  /** Every target a connection was asked for, carried or not. */
  targets(): string[] {
    return [...new Set(this.connections.map((c) => c.target))];
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #track(socket: Duplex): void {
    this.#sockets.add(socket);
    socket.on("close", () => this.#sockets.delete(socket));
  }

  #authorized(req: IncomingMessage): boolean {
    const { user, password } = this.#options;
    if (user === undefined) return true;
    const expected = `Basic ${Buffer.from(`${user}:${password ?? ""}`).toString("base64")}`;
    return req.headers["proxy-authorization"] === expected;
  }

  /** Why the proxy will not carry a connection to `target`, as a status; undefined if it will. */
  #refusal(req: IncomingMessage, host: string): number | undefined {
    if (!this.#authorized(req)) return 407;
    if (resolveTarget(host) === undefined) return 403;
    return undefined;
  }

  #tunnel(req: IncomingMessage, client: Duplex, head: Buffer): void {
    this.#track(client);
    client.on("error", () => client.destroy());
    const target = req.url ?? "";
    const { host, port } = splitHostPort(target);
    const refused = this.#refusal(req, host);
    if (refused !== undefined) {
      this.connections.push({ kind: "tunnel", target, carried: false, refusedWith: refused });
      const challenge = refused === 407 ? 'Proxy-Authenticate: Basic realm="test"\r\n' : "";
      client.end(`HTTP/1.1 ${refused} Refused\r\n${challenge}Content-Length: 0\r\n\r\n`);
      return;
    }
    this.connections.push({ kind: "tunnel", target, carried: true });
    const upstream = connect(port, resolveTarget(host));
    this.#track(upstream);
    upstream.on("connect", () => {
      client.write("HTTP/1.1 200 Connection established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => {
      client.end("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
    });
    upstream.on("close", () => client.destroy());
    client.on("close", () => upstream.destroy());
  }

  #forward(req: IncomingMessage, res: ServerResponse): void {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      res.writeHead(400).end("absolute URL expected");
      return;
    }
    const port = Number(url.port || 80);
    const target = `${url.hostname}:${port}`;
    const refused = url.protocol === "http:" ? this.#refusal(req, url.hostname) : 400;
    if (refused !== undefined) {
      this.connections.push({ kind: "forward", target, carried: false, refusedWith: refused });
      res.writeHead(refused, refused === 407 ? { "proxy-authenticate": 'Basic realm="test"' } : {});
      res.end();
      return;
    }
    this.connections.push({ kind: "forward", target, carried: true });
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !HOP_BY_HOP.has(k.toLowerCase())),
    );
    const upstream = httpRequest(
      {
        host: resolveTarget(url.hostname),
        port,
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers: { ...headers, host: url.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  }
}
