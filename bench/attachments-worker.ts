/**
 * One measured transfer for `bench/attachments.ts`, in a process of its own so its memory is
 * its own: the files of a message read from the local Slack and sent to the simulator in one
 * Create Task request, either streamed (the app's path) or buffered whole first (the baseline).
 * A small transfer warms the code paths first. Prints one JSON line: bytes sent, RSS before,
 * peak RSS during, milliseconds.
 */
import { parseArgs } from "node:util";
import { WebClient } from "@slack/web-api";
import { request } from "undici";
import { gatherAttachments } from "../src/threads/attachments.ts";
import type { SlackFileRef } from "../src/runs/ports.ts";
import { createTaskServiceClient } from "../src/service/client.ts";
import { fileFromBytes, type UploadFile } from "../src/service/multipart.ts";
import { fileOrigins, slackFileSource } from "../src/slack/file-source.ts";

const { values } = parseArgs({
  options: {
    mode: { type: "string", default: "streamed" },
    slack: { type: "string" },
    token: { type: "string" },
    service: { type: "string" },
    key: { type: "string" },
    files: { type: "string" },
    warm: { type: "string" },
  },
});
const measured = JSON.parse(values.files ?? "[]") as SlackFileRef[];
const warm = JSON.parse(values.warm ?? "[]") as SlackFileRef[];
const token = values.token ?? "";
const service = createTaskServiceClient({
  baseUrl: values.service ?? "",
  apiKey: values.key ?? "",
});

/** The baseline: every file downloaded whole into memory, then sent. */
async function buffered(files: readonly SlackFileRef[]): Promise<UploadFile[]> {
  const out: UploadFile[] = [];
  for (const f of files) {
    const res = await request(f.url ?? "", { headers: { authorization: `Bearer ${token}` } });
    out.push(fileFromBytes(f.name, Buffer.from(await res.body.arrayBuffer())));
  }
  return out;
}

async function streamed(files: readonly SlackFileRef[]): Promise<UploadFile[]> {
  const source = slackFileSource({
    tokenFor: () => token,
    client: new WebClient(token, { slackApiUrl: values.slack }),
    allowedOrigins: fileOrigins(values.slack),
  });
  const got = await gatherAttachments(source, "T0001", files);
  if (got.leftOut.length > 0) throw new Error(`left out: ${JSON.stringify(got.leftOut)}`);
  return [...got.files];
}

const send = async (files: readonly SlackFileRef[]) => {
  const upload = values.mode === "buffered" ? await buffered(files) : await streamed(files);
  await service.createTask({ prompt: "Bench attachments [sim:length=100]", files: upload });
  return upload.reduce((n, f) => n + f.size, 0);
};

// A long-running app has its code paths warm: one small transfer first, so what is measured
// is the transfer, not the first use of the client libraries.
await send(warm);
global.gc?.();
const before = process.memoryUsage().rss;
let peak = before;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 2);
const started = performance.now();
const bytes = await send(measured);
const ms = performance.now() - started;
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage().rss);
process.stdout.write(`${JSON.stringify({ mode: values.mode, bytes, before, peak, ms })}\n`);
