/**
 * `npm run bench:preview`: what a page preview costs. The real previewer (src/preview/) on the
 * machine's Chromium renders the simulator's generated site (HTML, CSS, an image, a full-page
 * capture) and, as the baseline in the same run, a blank page. Prints the browser's launch
 * time, the time per preview (median and worst), and the peak memory of the browser's processes
 * and of Node, sampled every 100 ms from /proc in a second series (reading /proc takes CPU the
 * timed series should not lose): proportional set size
 * (PSS: shared pages split between the processes sharing them, so the browser's processes add
 * up without counting its shared libraries once per process).
 *
 *   npm run bench:preview -- --pages 20      (CHROMIUM_PATH=/path/to/chromium if not on PATH)
 */
import { readdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { createLogger } from "../src/log.ts";
import { ChromiumPreviews } from "../src/preview/chromium.ts";
import { findBrowser } from "../src/preview/find-browser.ts";
import { sandboxAllowed } from "../src/preview/index.ts";
import type { SiteFile } from "../src/runs/ports.ts";
import { generateFiles } from "../tools/simulator/files.ts";

const { values } = parseArgs({ options: { pages: { type: "string", default: "15" } } });
const PAGES = Math.max(1, Number(values.pages));

const found = findBrowser(
  process.env.CHROMIUM_PATH,
  (process.env.PATH ?? "").split(":").filter((d) => d !== ""),
);
if ("missing" in found) {
  process.stderr.write(`bench:preview needs a browser: ${found.missing}\n`);
  process.exit(1);
}

/** Memory (PSS, bytes) of a process and, apart, of all its descendants, from /proc. */
function treeRss(root: number): { browser: number; node: number } {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // pid (comm) state ppid …: the command may contain spaces, so read after its ")".
      parents.set(pid, Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const inTree = (pid: number): boolean => {
    for (let p = parents.get(pid); p !== undefined && p > 1; p = parents.get(p)) {
      if (p === root) return true;
    }
    return false;
  };
  const pss = (pid: number): number => {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
      return Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) * 1024;
    } catch {
      return 0;
    }
  };
  let browser = 0;
  for (const pid of parents.keys()) if (inTree(pid)) browser += pss(pid);
  return { browser, node: pss(root) };
}

/** Samples the memory while `work` runs; returns its result and the peaks. */
async function sampled<T>(work: () => Promise<T>) {
  const peak = { browser: 0, node: 0 };
  const sample = () => {
    const now = treeRss(process.pid);
    peak.browser = Math.max(peak.browser, now.browser);
    peak.node = Math.max(peak.node, now.node);
  };
  const timer = setInterval(sample, 100);
  try {
    return { result: await work(), peak };
  } finally {
    clearInterval(timer);
    sample();
  }
}

const site: SiteFile[] = generateFiles({
  threadId: "bench",
  folder: "output",
  seed: 7,
  title: "A landing page for the benchmark",
  count: 0,
  bigFileBytes: undefined,
  site: {},
  now: 0,
}).map((f) => ({ path: f.path, read: async () => f.content, type: f.type }));
const blank: SiteFile[] = [
  {
    path: "/w/index.html",
    read: async () => Buffer.from("<title>blank</title>"),
    type: "text/html",
  },
];

const previews = new ChromiumPreviews({
  chromium: async () => chromium,
  executablePath: found.path,
  sandbox: sandboxAllowed(process.getuid?.()),
  maxPages: 1,
  pageTimeoutMs: 10_000,
  runTimeoutMs: 30_000,
  concurrency: 1,
  maxHeight: 4000,
  // The app's default (PREVIEW_MEMORY_MB).
  memoryMb: 512,
  log: createLogger({ level: "warn" }),
});

const ms = (t0: number) => performance.now() - t0;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`;

async function series(files: SiteFile[]): Promise<{ times: number[]; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < PAGES; i++) {
    const t0 = performance.now();
    const shots = await previews.render(files);
    times.push(ms(t0));
    if (shots.length === 0) throw new Error("a preview failed");
    bytes = shots.reduce((n, s) => n + s.bytes.byteLength, 0);
  }
  return { times, bytes };
}

const launch0 = performance.now();
await previews.render(blank);
const launchMs = ms(launch0);
// Timed without sampling, then again while memory is sampled.
const times = { blank: await series(blank), site: await series(site) };
const memory = {
  blank: (await sampled(() => series(blank))).peak,
  site: (await sampled(() => series(site))).peak,
};
await previews.close();

const row = (name: string, kind: "blank" | "site") => {
  const t = times[kind].times;
  const cells = [
    `${median(t).toFixed(0)} ms`.padStart(9),
    `${Math.max(...t).toFixed(0)} ms`.padStart(9),
    mb(memory[kind].browser).padStart(9),
    mb(memory[kind].node).padStart(9),
    `${(times[kind].bytes / 1024).toFixed(0)} KB`.padStart(8),
  ];
  return `${name.padEnd(28)}${cells.join("")}`;
};
const ratio = (a: number, b: number) => (a / b).toFixed(2);
process.stdout.write(
  [
    `Chromium ${found.path}, sandbox ${sandboxAllowed(process.getuid?.()) ? "on" : "off (root)"}, ${PAGES} previews per series`,
    `first preview (launches the browser): ${launchMs.toFixed(0)} ms`,
    `${"".padEnd(28)}${["median", "worst", "browser", "node", "images"].map((h) => h.padStart(9)).join("")}`,
    row("blank page (baseline)", "blank"),
    row("generated site + full page", "site"),
    `ratio site/blank: time ×${ratio(median(times.site.times), median(times.blank.times))}, browser peak PSS ×${ratio(memory.site.browser, memory.blank.browser)}`,
    "",
  ].join("\n"),
);
