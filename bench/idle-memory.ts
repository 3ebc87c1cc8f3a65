/**
 * `npm run bench:idle [-- --settle 3] [--redis redis://127.0.0.1:6379]`: the memory of an idle
 * app (`node src/main.ts` against the service simulator and the local Slack double) beside
 * bare Node and Node with only the app's dependencies imported, so that the figure says how
 * much is the app's own. Each process is asked, once it has settled, for its RSS, then for
 * `process.memoryUsage()` after a full GC; one more run of the same code stripped of its
 * types ahead of time shows what Node's type stripping costs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { stripTypeScriptTypes } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { freePort } from "../test/support/cluster.ts";
import { API_KEY, SIGNING_SECRET, startPeers } from "../test/support/harness.ts";
import { LocalSocketMode } from "../tools/local-slack/local-socket-mode.ts";

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "..");

const { values } = parseArgs({
  options: {
    settle: { type: "string", default: "3" },
    redis: { type: "string" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  console.log("usage: npm run bench:idle -- [--settle SECONDS] [--redis REDIS_URL]");
  process.exit(0);
}
const settleMs = Number(values.settle) * 1000;
const redisUrl = values.redis ?? process.env.REDIS_URL;
if (!(settleMs >= 0 && settleMs <= 60_000)) {
  console.error("--settle takes 0..60 seconds");
  process.exit(2);
}

/**
 * Loaded with `--import` into every measured process (a data: URL, so it is plain JavaScript
 * and adds no TypeScript to the baselines): answers "measure" on the IPC channel.
 */
const PROBE = `
import { readFileSync } from "node:fs";
import { getHeapSpaceStatistics } from "node:v8";
const fileBacked = () => {
  try {
    return Number(/^RssFile:\\s+(\\d+)/m.exec(readFileSync("/proc/self/status", "utf8"))[1]) * 1024;
  } catch {
    return null;
  }
};
process.on("message", (message) => {
  if (message !== "measure") return;
  const settledRss = process.memoryUsage.rss();
  globalThis.gc();
  globalThis.gc();
  const young = getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  const figures = { settledRss, ...process.memoryUsage(), young: young ? young.physical_space_size : 0, rssFile: fileBacked() };
  // What V8 does under memory pressure: also shrinks the young generation and drops cold code.
  globalThis.gc({ type: "major", execution: "sync", flavor: "last-resort" });
  process.send({ ...figures, reducedRss: process.memoryUsage.rss() });
});`;
const PROBE_ARGS = ["--expose-gc", "--import", `data:text/javascript,${encodeURIComponent(PROBE)}`];

const Figures = z.object({
  settledRss: z.number(),
  rss: z.number(),
  heapTotal: z.number(),
  heapUsed: z.number(),
  external: z.number(),
  arrayBuffers: z.number(),
  young: z.number(),
  /** Resident pages backed by files (mostly Node's own binary); null off Linux. */
  rssFile: z.number().nullable(),
  /** RSS after a memory-reducing GC (the young generation shrunk): steadier from run to run. */
  reducedRss: z.number(),
});
type Figures = z.infer<typeof Figures> & { readonly peakRss: number | undefined };

interface Row {
  readonly label: string;
  readonly figures: Figures;
}

const progress = (line: string) => process.stderr.write(`${line}\n`);

/** Starts `node [probe] ...args`, waits until `ready` resolves and `settleMs` more, measures. */
async function measure(
  args: string[],
  options: { cwd: string; env: Record<string, string>; ready: () => Promise<boolean> },
): Promise<Figures> {
  const child: ChildProcess = spawn(process.execPath, [...PROBE_ARGS, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? "", ...options.env },
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  const errors: string[] = [];
  child.stderr?.on("data", (d: Buffer) => errors.push(d.toString()));
  const exited = once(child, "exit");
  try {
    const deadline = Date.now() + 30_000;
    while (!(await options.ready())) {
      if (child.exitCode !== null) throw new Error(`exited at start-up:\n${errors.join("")}`);
      if (Date.now() > deadline) throw new Error(`not ready in 30 s:\n${errors.join("")}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, settleMs));
    const answer = once(child, "message");
    child.send("measure");
    const died = exited.then(() => {
      throw new Error(`exited before it was measured:\n${errors.join("")}`);
    });
    const [message] = (await Promise.race([answer, died])) as [unknown];
    return { ...Figures.parse(message), peakRss: peakRss(child.pid) };
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

/** VmHWM from /proc: the most the process ever had resident (start-up included). */
function peakRss(pid: number | undefined): number | undefined {
  try {
    const kb = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

/** Node itself, kept alive by the probe's IPC channel; `imports` loaded first. */
function bareNode(imports: readonly string[]): Promise<Figures> {
  const code = `for (const s of ${JSON.stringify(imports)}) await import(s);`;
  return measure(["--input-type=module", "-e", code], {
    cwd: ROOT,
    env: {},
    ready: async () => true,
  });
}

/**
 * What the app's own files import from packages and from Node, following its static imports
 * from `entries` (dynamic imports are what a mode may leave unloaded; `import type` is erased).
 */
function dependenciesOf(entries: readonly string[]): string[] {
  const found = new Set<string>();
  const seen = new Set<string>();
  const pending = entries.map((e) => resolve(ROOT, e));
  const statement =
    /^(?:import|export)\s+(type\s+)?[^;]*?\bfrom\s+"([^"]+)";|^import\s+"([^"]+)";/gm;
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const m of readFileSync(file, "utf8").matchAll(statement)) {
      const specifier = m[2] ?? m[3];
      if (m[1] !== undefined || specifier === undefined) continue;
      if (specifier.startsWith(".")) pending.push(resolve(dirname(file), specifier));
      else found.add(specifier);
    }
  }
  return [...found].sort();
}

/** A copy of `src/` with the types stripped ahead of time (`.js`, imports rewritten). */
function strippedCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), "taskbot-idle-js-"));
  const copy = (from: string, to: string): void => {
    mkdirSync(to, { recursive: true });
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      const source = join(from, entry.name);
      if (entry.isDirectory()) copy(source, join(to, entry.name));
      else if (entry.name.endsWith(".ts")) {
        const js = stripTypeScriptTypes(readFileSync(source, "utf8")).replace(
          /(["'])(\.\.?\/[^"']+)\.ts\1/g,
          "$1$2.js$1",
        );
        writeFileSync(join(to, entry.name.replace(/\.ts$/, ".js")), js);
      }
    }
  };
  copy(join(ROOT, "src"), join(dir, "src"));
  writeFileSync(join(dir, "package.json"), readFileSync(join(ROOT, "package.json")));
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

const mb = (bytes: number | undefined) =>
  bytes === undefined ? "n/a" : (bytes / 2 ** 20).toFixed(1);

function report(rows: readonly Row[], baseline: Figures, dependencies: readonly string[]): void {
  const header = [
    "process",
    "RSS settled",
    "RSS after GC",
    "of it file-backed",
    "RSS, memory-reducing GC",
    "× deps",
    "start-up peak",
    "heap used",
    "heap total",
    "young gen",
    "external",
    "arrayBuffers",
  ];
  const lines = rows.map(({ label, figures: f }) => [
    label,
    mb(f.settledRss),
    mb(f.rss),
    mb(f.rssFile ?? undefined),
    mb(f.reducedRss),
    (f.rss / baseline.rss).toFixed(2),
    mb(f.peakRss),
    mb(f.heapUsed),
    mb(f.heapTotal),
    mb(f.young),
    mb(f.external),
    mb(f.arrayBuffers),
  ]);
  console.log(`\nIdle memory (MB; settled ${settleMs / 1000} s after /readyz; GC: two full GCs)`);
  console.log(`| ${header.join(" | ")} |`);
  console.log(`| ${header.map(() => "---").join(" | ")} |`);
  for (const line of lines) console.log(`| ${line.join(" | ")} |`);
  console.log(
    `\nThe app's dependencies (imported by the deps baseline): ${dependencies.join(" ")}`,
  );
}

async function main(): Promise<void> {
  const started = Date.now();
  const dependencies = dependenciesOf(["src/main.ts", "src/store/sqlite.ts"]);
  const { sim, slack } = await startPeers();
  const socket = await LocalSocketMode.start();
  const dataDir = mkdtempSync(join(tmpdir(), "taskbot-idle-"));
  const jsDir = strippedCopy();
  const rows: Row[] = [];
  try {
    progress("bare node");
    rows.push({ label: "node (nothing imported)", figures: await bareNode([]) });
    progress("node + the app's dependencies");
    const baseline = await bareNode(dependencies);
    rows.push({ label: "node + the app's dependencies", figures: baseline });

    const app = async (
      label: string,
      extra: Record<string, string>,
      cwd = ROOT,
      main = "src/main.ts",
    ) => {
      progress(label);
      const port = await freePort();
      const env: Record<string, string> = {
        TASK_API_URL: sim.url,
        TASK_API_KEY: API_KEY,
        SLACK_BOT_TOKEN: slack.botToken,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_API_URL: slack.apiUrl,
        LOG_LEVEL: "warn",
        PORT: String(port),
        DATA_DIR: join(dataDir, String(port)),
        ...extra,
      };
      const ready = () =>
        fetch(`http://127.0.0.1:${port}/readyz`)
          .then((r) => r.ok)
          .catch(() => false);
      rows.push({ label, figures: await measure([main], { cwd, env, ready }) });
    };
    await app("app: HTTP mode, SQLite store", {});
    slack.socketModeUrl = socket.url;
    await app("app: Socket Mode, SQLite store", { SLACK_APP_TOKEN: slack.appToken });
    if (redisUrl) {
      const namespace = `idle-bench-${process.pid}`;
      await app("app: HTTP mode, Redis store", { REDIS_URL: redisUrl, STORE_NAMESPACE: namespace });
    }
    await app("app: HTTP mode, SQLite, types stripped ahead", {}, jsDir, "src/main.js");
    report(rows, baseline, dependencies);
    const byLabel = (label: string) => rows.find((r) => r.label === label)?.figures;
    const ts = byLabel("app: HTTP mode, SQLite store");
    const js = byLabel("app: HTTP mode, SQLite, types stripped ahead");
    if (ts && js) {
      const split = (pick: (f: Figures) => number) =>
        `${mb(pick(ts))} MB = ${mb(pick(baseline))} Node + dependencies` +
        ` + ${mb(pick(js) - pick(baseline))} the app's code and state` +
        ` + ${mb(pick(ts) - pick(js))} type stripping at run time`;
      console.log(`\nApp, HTTP mode, SQLite store, after GC: ${split((f) => f.rss)}`);
      console.log(`… after a memory-reducing GC: ${split((f) => f.reducedRss)}`);
    }
    if (!redisUrl) console.log("(Redis store not measured: pass --redis URL or set REDIS_URL.)");
    console.log(`Total time: ${Math.round((Date.now() - started) / 1000)} s`);
  } finally {
    await socket.close();
    await sim.close();
    await slack.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(jsDir, { recursive: true, force: true });
  }
}

await main();
