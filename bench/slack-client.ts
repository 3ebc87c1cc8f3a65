/**
 * `node bench/slack-client.ts [--calls 2000]`
 *
 * What one Slack Web API call costs the app in CPU: `chat.postMessage` with a 3,000-character
 * text through `WebClient` (as the app makes it), against the same request made with
 * `undici.request` and with `fetch` (baselines, ratio in the last column). The local Slack
 * (tools/local-slack/) runs in a child process, so only the client's CPU is counted.
 * Not part of `npm test`.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { parseArgs } from "node:util";
import { WebClient } from "@slack/web-api";
import { request } from "undici";

const { values } = parseArgs({ options: { calls: { type: "string", default: "2000" } } });
const calls = Number(values.calls);
const CONCURRENCY = 20;

const server = spawn(
  process.execPath,
  [
    "--input-type=module",
    "-e",
    `import { startLocalSlack } from ${JSON.stringify(new URL("../tools/local-slack/index.ts", import.meta.url).href)};
     const slack = await startLocalSlack({ teamId: "T0001" });
     process.stdout.write(JSON.stringify({ url: slack.apiUrl, token: slack.botToken }) + "\\n");
     process.stdin.resume();
     process.stdin.on("end", () => void slack.close().then(() => process.exit(0)));`,
  ],
  { stdio: ["pipe", "pipe", "inherit"] },
);
const [line] = (await once(server.stdout, "data")) as [Buffer];
const { url, token } = JSON.parse(line.toString()) as { url: string; token: string };
const text = "x".repeat(3000);

async function measure(fn: (i: number) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 100; i++) await fn(i); // warm-up: JIT, keep-alive sockets
  const before = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < calls) await fn(next++);
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

const form = (i: number) =>
  new URLSearchParams({ channel: "C0001", text: `${text}${i}` }).toString();
const headers = {
  authorization: `Bearer ${token}`,
  "content-type": "application/x-www-form-urlencoded",
};
const client = new WebClient(token, {
  slackApiUrl: url,
  rejectRateLimitedCalls: true,
  retryConfig: { retries: 0 },
});

const results: [string, number][] = [
  [
    "undici.request",
    await measure(async (i) => {
      const res = await request(`${url}chat.postMessage`, {
        method: "POST",
        headers,
        body: form(i),
      });
      await res.body.json();
    }),
  ],
  [
    "fetch",
    await measure(async (i) => {
      const res = await fetch(`${url}chat.postMessage`, { method: "POST", headers, body: form(i) });
      await res.json();
    }),
  ],
  [
    "WebClient (the app's)",
    await measure((i) => client.chat.postMessage({ channel: "C0001", text: `${text}${i}` })),
  ],
];
server.stdin.end();

const base = results[0]?.[1] ?? 1;
console.log(`chat.postMessage, 3,000-char text, ${calls} calls, ${CONCURRENCY} at a time:`);
for (const [name, us] of results) {
  console.log(
    `  ${name.padEnd(22)} ${us.toFixed(0).padStart(5)} µs CPU per call  ×${(us / base).toFixed(1)}`,
  );
}
