/**
 * `npm run bench:attachments [-- --files 10 --mb 20 --repeat 3]`
 *
 * Peak memory of forwarding a message's attachments to the task service: the files are read
 * from the local Slack's file host and sent to the simulator in one Create Task request, by a
 * child process (bench/attachments-worker.ts, warmed up by one small transfer of the same
 * path) whose RSS is sampled every 2 ms. The app's
 * streamed path is compared, in the same run, with a baseline that buffers each file whole
 * first. Target: the streamed path's peak RSS growth stays at most 64 MB for 10 files / 200 MB.
 */
import { spawn } from "node:child_process";
import { parseArgs } from "node:util";
import { startSimulator } from "../tools/simulator/server.ts";
import { startLocalSlack } from "../tools/local-slack/index.ts";

const { values } = parseArgs({
  options: {
    files: { type: "string", default: "10" },
    mb: { type: "string", default: "20" },
    repeat: { type: "string", default: "3" },
  },
});
const count = Number(values.files);
const mb = Number(values.mb);
const repeat = Number(values.repeat);
const API_KEY = "he-benchAttachmentsKey0123456789";
const MB = 2 ** 20;

interface Measure {
  mode: string;
  bytes: number;
  before: number;
  peak: number;
  ms: number;
}

const sim = await startSimulator({ apiKeys: [API_KEY], chunkDelayMs: 1 });
const slack = await startLocalSlack({ teamId: "T0001" });
// One buffer shared by every file: the double holds 20 MB, not 200.
const bytes = Buffer.alloc(mb * MB, 0x61);
const files = Array.from({ length: count }, (_, i) => {
  const f = slack.addUserFile({ name: `part-${i + 1}.zip`, bytes, mimetype: "application/zip" });
  return { id: f.id, name: f.name, size: f.size, url: f.url_private_download };
});

const small = slack.addUserFile({ name: "warm-up.txt", bytes: "warm up" });
const warm = [
  { id: small.id, name: small.name, size: small.size, url: small.url_private_download },
];

function measure(mode: "streamed" | "buffered"): Promise<Measure> {
  const worker = new URL("./attachments-worker.ts", import.meta.url).pathname;
  const args = [
    "--expose-gc",
    worker,
    "--mode",
    mode,
    "--slack",
    slack.apiUrl,
    "--token",
    slack.botToken,
    "--service",
    sim.url,
    "--key",
    API_KEY,
    "--files",
    JSON.stringify(files),
    "--warm",
    JSON.stringify(warm),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += String(d);
    });
    child.on("exit", (code) => {
      if (code === 0) resolve(JSON.parse(out) as Measure);
      else reject(new Error(`${mode} worker exited with ${code}`));
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const growth: Record<string, number[]> = { streamed: [], buffered: [] };
const times: Record<string, number[]> = { streamed: [], buffered: [] };
for (let i = 0; i < repeat; i++) {
  for (const mode of ["streamed", "buffered"] as const) {
    const m = await measure(mode);
    if (m.bytes !== count * mb * MB) throw new Error(`${mode} sent ${m.bytes} bytes`);
    growth[mode]?.push((m.peak - m.before) / MB);
    times[mode]?.push(m.ms);
  }
}
await slack.close();
await sim.close();

const g = { s: median(growth.streamed ?? []), b: median(growth.buffered ?? []) };
const t = { s: median(times.streamed ?? []), b: median(times.buffered ?? []) };
const row = (name: string, mbGrowth: number, ms: number) =>
  `| ${name} | ${mbGrowth.toFixed(1)} MB | ${(ms / 1000).toFixed(2)} s |`;
console.log(
  `${count} files × ${mb} MB = ${count * mb} MB in one Create Task request (median of ${repeat})`,
);
console.log("| path | peak RSS growth | time |\n|---|---|---|");
console.log(row("streamed (the app)", g.s, t.s));
console.log(row("buffered (baseline)", g.b, t.b));
console.log(
  `ratio streamed / buffered: ${(g.s / g.b).toFixed(3)} (memory), ${(t.s / t.b).toFixed(2)} (time)`,
);
console.log(`target: streamed growth ≤ 64 MB: ${g.s <= 64 ? "met" : "NOT met"}`);
