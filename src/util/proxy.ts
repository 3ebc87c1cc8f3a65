/** Outbound connections through HTTP(S)_PROXY / NO_PROXY; without one, clients' own defaults. */
import type { FetchFunction } from "@slack/web-api";
import { type Agent, type Dispatcher, EnvHttpProxyAgent } from "undici";

export interface ProxyConfig {
  /** For http:// URLs, and for https:// ones when `httpsProxy` is not set (undici's rule). */
  readonly httpProxy: string | undefined;
  readonly httpsProxy: string | undefined;
  /** Hosts reached directly: `host`, `.domain` or `host:port`, comma- or space-separated; `*` for all. */
  readonly noProxy: string | undefined;
}

/** The transports the app's clients use; each undefined without a proxy. */
export interface Outbound {
  /** WebClient's (every Web API call, and the uploads filesUploadV2 PUTs). */
  readonly slackFetch?: FetchFunction;
  /** Downloads from Slack's file host, with the Web API's pool. */
  readonly slackDispatcher?: Dispatcher;
  /** Socket Mode's WebSocket and `apps.connections.open`. */
  readonly socketDispatcher?: Dispatcher;
  readonly serviceDispatcher?: Dispatcher;
  /** The service's pool for create, continue and stop. */
  readonly serviceControlDispatcher?: Dispatcher;
  /** For the start-up log (never credentials). */
  readonly description: string;
  close(): Promise<void>;
}

/** The dispatchers for the whole app; the pools' settings apply to proxied connections too. */
export function createOutbound(
  proxy: ProxyConfig,
  servicePool: Agent.Options = {},
  controlPool: Agent.Options = {},
): Outbound {
  if (proxy.httpProxy === undefined && proxy.httpsProxy === undefined) {
    return { description: "direct", close: async () => {} };
  }
  const slack = proxyDispatcher(proxy);
  // Socket Mode's WebSocket gets a pool of its own, as the client's default dispatcher does.
  const socket = proxyDispatcher(proxy);
  const service = proxyDispatcher(proxy, servicePool);
  const control = proxyDispatcher(proxy, controlPool);
  return {
    // Node's own fetch with undici's dispatcher (Node documents the option). Not undici's
    // fetch: it refuses the global FormData WebClient builds for uploads (checked by class).
    slackFetch: (url, init) => fetch(url, { ...init, dispatcher: slack } as RequestInit),
    slackDispatcher: slack,
    socketDispatcher: socket,
    serviceDispatcher: service,
    serviceControlDispatcher: control,
    description: describeProxy(proxy),
    async close() {
      await Promise.all([slack.close(), socket.close(), service.close(), control.close()]);
    },
  };
}

/** Always reached directly (a proxy elsewhere cannot reach this machine's loopback). */
const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"] as const;

/** NO_PROXY with the loopback names added (`*` stays `*`: nothing is proxied). */
export function noProxyWithLoopback(noProxy: string | undefined): string {
  const listed = (noProxy ?? "").trim();
  if (listed === "*") return listed;
  return [listed, ...LOOPBACK_HOSTS].filter((h) => h !== "").join(",");
}

/**
 * Through the proxy the URL's scheme calls for, or direct when NO_PROXY lists the host or it is
 * loopback: a sidecar's plain http:// never goes to a proxy that would see its API key.
 */
export function proxyDispatcher(proxy: ProxyConfig, options: Agent.Options = {}): Dispatcher {
  // Empty strings rather than undefined: undici would otherwise read process.env itself.
  return new EnvHttpProxyAgent({
    ...options,
    httpProxy: proxy.httpProxy ?? "",
    httpsProxy: proxy.httpsProxy ?? "",
    noProxy: noProxyWithLoopback(proxy.noProxy),
  });
}

/** Never with a user name or password. */
export function describeProxy(proxy: ProxyConfig): string {
  const parts = [
    proxy.httpsProxy ? `https via ${withoutCredentials(proxy.httpsProxy)}` : undefined,
    proxy.httpProxy
      ? `http${proxy.httpsProxy ? "" : "(s)"} via ${withoutCredentials(proxy.httpProxy)}`
      : undefined,
    proxy.noProxy ? `direct to ${proxy.noProxy}` : undefined,
  ];
  return parts.filter((p) => p !== undefined).join("; ") || "direct";
}

/** `scheme://host:port`: what may be shown of a proxy address. */
function withoutCredentials(url: string): string {
  const u = URL.parse(url);
  return u ? `${u.protocol}//${u.host}` : "(unparsable URL)";
}
