/**
 * Behind a proxy, the app reaches this machine directly: a task service on loopback (plain
 * http://, a sidecar) is never carried by HTTP(S)_PROXY, with or without NO_PROXY; other hosts
 * still go through it.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { noProxyWithLoopback, proxyDispatcher } from "../../src/util/proxy.ts";
import { CountingProxy } from "../support/counting-proxy.ts";

describe("the proxy dispatcher and loopback", () => {
  let proxy: CountingProxy;
  let service: Server;
  let port: number;
  beforeAll(async () => {
    proxy = await CountingProxy.start();
    service = createServer((_req, res) => res.end("ok"));
    await new Promise<void>((resolve) => service.listen(0, "127.0.0.1", resolve));
    port = (service.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await proxy.close();
    await new Promise<void>((resolve) => service.close(() => resolve()));
  });

  it.each([
    ["no NO_PROXY", undefined],
    ["a NO_PROXY naming other hosts", "corp.example,.internal"],
  ])("reaches a service on 127.0.0.1 and localhost directly with %s", async (_what, noProxy) => {
    const dispatcher = proxyDispatcher({
      httpProxy: proxy.url,
      httpsProxy: proxy.url,
      noProxy,
    });
    try {
      for (const host of ["127.0.0.1", "localhost"]) {
        const res = await request(`http://${host}:${port}/v1/tasks`, { dispatcher });
        expect(await res.body.text()).toBe("ok");
      }
      expect(proxy.targets()).toEqual([]);
      // Another host still goes through the proxy (which alone resolves `.invalid` names).
      const res = await request(`http://task.invalid:${port}/v1/tasks`, { dispatcher });
      expect(await res.body.text()).toBe("ok");
      expect(proxy.carried(`task.invalid:${port}`)).toBeGreaterThan(0);
    } finally {
      await dispatcher.close();
      proxy.connections.length = 0;
    }
  });

  it("adds the loopback names to NO_PROXY, and leaves `*` as it is", () => {
    expect(noProxyWithLoopback(undefined)).toBe("localhost,127.0.0.1,[::1]");
    expect(noProxyWithLoopback(" .corp ")).toBe(".corp,localhost,127.0.0.1,[::1]");
    expect(noProxyWithLoopback("*")).toBe("*");
  });
});
