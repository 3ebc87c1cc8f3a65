/**
 * The playground's page server and the app inside it, seen from the network: only the page
 * the playground serves may read or act (no other site, no DNS rebinding, no other machine),
 * and a real Task service can answer instead of the simulator.
 */
import { request } from "node:http";
import { connect } from "node:net";
import { networkInterfaces } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendSlashCommand } from "../../tools/local-slack/slack-requests.ts";
import { type Playground, startPlayground } from "../../tools/playground/server.ts";
import { type Simulator, startSimulator } from "../../tools/simulator/server.ts";
import { createLogger } from "../../src/log.ts";

const silent = createLogger({ level: "silent" });
const MAX_BODY = 64 * 1024;

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** One raw HTTP request, with exactly the headers given (Host included). */
function raw(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; chunked?: boolean },
): Promise<Answer> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { hostname, port, path: pathname, method: options.method ?? "GET", headers: options.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
      },
    );
    req.on("error", reject);
    if (options.body !== undefined && options.chunked) {
      // No Content-Length: the size is known only as the bytes come.
      for (let i = 0; i < options.body.length; i += 4096)
        req.write(options.body.slice(i, i + 4096));
    } else if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** This machine's first address on another interface than loopback, if it has one. */
const external = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === "IPv4" && !a.internal)?.address;

describe("the playground's page server", () => {
  let playground: Playground;
  let host: string;

  beforeAll(async () => {
    playground = await startPlayground({ logger: silent, maxBodyBytes: MAX_BODY });
    host = new URL(playground.url).host;
  });
  afterAll(() => playground?.close());

  const send = (text: string) => JSON.stringify({ channel: "C0GENERAL", text });
  const messages = () => playground.slack.messages("C0GENERAL", { includeReplies: true });

  it("answers its own page at the loopback host and port it serves", async () => {
    for (const name of [host, `localhost:${new URL(playground.url).port}`]) {
      const state = await raw(`${playground.url}api/state`, { headers: { host: name } });
      expect(state.status, name).toBe(200);
    }
  });

  it("refuses a request naming another host (DNS rebinding), for the state and for files", async () => {
    const port = new URL(playground.url).port;
    for (const name of [`rebind.example:${port}`, "127.0.0.1:1", `127.0.0.1.nip.io:${port}`]) {
      for (const path of ["api/state", "files/F1", ""]) {
        const answer = await raw(`${playground.url}${path}`, { headers: { host: name } });
        expect(answer.status, `${name} /${path}`).toBe(403);
      }
    }
  });

  it("refuses a POST from another site's page, and starts nothing", async () => {
    const before = messages().length;
    const answer = await raw(`${playground.url}api/send`, {
      method: "POST",
      headers: {
        host,
        origin: "http://attacker.example",
        "content-type": "application/json",
      },
      body: send("/task Leak the workspace"),
    });
    expect(answer.status).toBe(403);
    const sameSite = await raw(`${playground.url}api/send`, {
      method: "POST",
      headers: { host, origin: `http://${host}`, "content-type": "application/json" },
      body: send("Hello from the page itself"),
    });
    expect(sameSite.status).toBe(200);
    expect(messages().map((m) => m.text)).toEqual([
      ...messages()
        .slice(0, before)
        .map((m) => m.text),
      "Hello from the page itself",
    ]);
  });

  it("takes JSON only: a cross-site form's text/plain POST starts no task", async () => {
    const before = messages().length;
    const answer = await raw(`${playground.url}api/send`, {
      method: "POST",
      headers: { host, "content-type": "text/plain" },
      body: send("/task Spend the service's credits"),
    });
    expect(answer.status).toBe(415);
    expect(answer.body).toContain("application/json");
    expect(messages()).toHaveLength(before);
    expect(playground.sim?.runs()).toEqual([]);
  });

  it("answers 413 to a body over its cap, declared or streamed", async () => {
    const big = send("x".repeat(MAX_BODY));
    const headers = { host, "content-type": "application/json" };
    const declared = await raw(`${playground.url}api/send`, { method: "POST", headers, body: big });
    expect(declared.status).toBe(413);
    const streamed = await raw(`${playground.url}api/send`, {
      method: "POST",
      headers: { ...headers, "transfer-encoding": "chunked" },
      body: big,
      chunked: true,
    });
    expect(streamed.status).toBe(413);
    expect(streamed.body).toContain("64.0 KB");
  });

  it("signs Slack's requests with a secret of its own run, not one written in the repository", async () => {
    const events = `http://127.0.0.1:${playground.appPort}/slack/events`;
    const answer = await sendSlashCommand(events, "playground-signing-secret-0c1f", {
      text: "Write a poem",
      team_id: "T0PLAY",
      user_id: "U0YOU",
      channel_id: "C0GENERAL",
    });
    expect(answer.status).toBe(401);
  });

  it.skipIf(external === undefined)(
    "keeps the app (Slack's endpoint, /metrics.json) off every interface but loopback",
    async () => {
      const reach = (address: string) =>
        new Promise<string>((resolve) => {
          const socket = connect(playground.appPort, address);
          socket.once("connect", () => {
            socket.destroy();
            resolve("connected");
          });
          socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? "error"));
        });
      expect(await reach("127.0.0.1")).toBe("connected");
      expect(await reach(external ?? "")).toBe("ECONNREFUSED");
    },
  );

  it("runs Workflow Builder's Run a task step with a prompt and shows its outputs once its task ends", async () => {
    const headers = { host, "content-type": "application/json" };
    const body = JSON.stringify({ channel: "C0GENERAL", prompt: "Daily digest [sim:length=60]" });
    const answer = await raw(`${playground.url}api/step`, { method: "POST", headers, body });
    expect(answer.status).toBe(200);
    const state = async () =>
      JSON.parse((await raw(`${playground.url}api/state`, { headers: { host } })).body) as {
        steps: { prompt: string; status: string; outputs?: Record<string, string> }[];
      };
    await playground.slack.waitFor(() => playground.slack.executions()[0]?.status === "completed", {
      timeoutMs: 20_000,
    });
    const [step] = (await state()).steps;
    expect(step).toMatchObject({
      prompt: "Daily digest [sim:length=60]",
      status: "completed",
      outputs: {
        status: "completed",
        thread_link: expect.stringContaining("/archives/C0GENERAL/p"),
      },
    });
    expect(step?.outputs?.answer).toContain("Daily digest");
  });
});

describe("the playground with a real Task service", () => {
  const KEY = "he-realServiceKey0123456789";
  let service: Simulator;
  let playground: Playground;

  beforeAll(async () => {
    // A service of its own, started apart, stands for the real one.
    service = await startSimulator({ apiKeys: [KEY], chunkDelayMs: 5 });
    playground = await startPlayground({
      logger: silent,
      service: { url: service.url, apiKey: KEY },
    });
  });
  afterAll(async () => {
    await playground?.close();
    await service?.close();
  });

  it("sends tasks to TASK_API_URL with TASK_API_KEY and says so on the page", async () => {
    expect(playground.sim).toBeUndefined();
    const state = (await (await fetch(`${playground.url}api/state`)).json()) as {
      service: unknown;
    };
    expect(state.service).toEqual({ simulator: false, url: service.url });
    const sent = await fetch(`${playground.url}api/send`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ channel: "C0GENERAL", text: "/task Describe a lake" }),
    });
    expect(sent.status).toBe(200);
    const run = await playground.slack.waitFor(
      () => service.runs().find((r) => r.promptText === "Describe a lake"),
      { description: "the task on the service TASK_API_URL names" },
    );
    expect(run.promptText).toBe("Describe a lake");
  });
});
