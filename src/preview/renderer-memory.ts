/**
 * A cap on one page's renderer memory (Linux): V8's heap limit misses ArrayBuffers, decoded images
 * and the DOM, so while pages render, a renderer past the cap in /proc (read four times a second;
 * process-tree libraries spawn `ps` each look) is killed: its page fails, the others go on.
 */
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import type { Logger } from "pino";

type ProcessEntry = { readonly pid: number; readonly ppid: number };

export interface ProcessTable {
  list(): Promise<ProcessEntry[]>;
  /** Arguments joined by spaces (Chromium rewrites a fork's in place as one string). */
  commandLine(pid: number): Promise<string | undefined>;
  residentBytes(pid: number): Promise<number | undefined>;
  kill(pid: number): void;
}

type OverCap = { readonly pid: number; readonly bytes: number };

const MB = 1024 * 1024;

/** Renderers past `capBytes` under `parent`'s children whose arguments include `marker`. */
export async function renderersOverCap(
  table: ProcessTable,
  parent: number,
  marker: string,
  capBytes: number,
): Promise<OverCap[]> {
  const all = await table.list();
  const children = new Map<number, number[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid]);
  const roots: number[] = [];
  for (const pid of children.get(parent) ?? []) {
    if ((await table.commandLine(pid))?.split(" ").includes(marker)) roots.push(pid);
  }
  // Everything under the roots (the zygotes fork the renderers).
  const under: number[] = [];
  const queue = roots.flatMap((r) => children.get(r) ?? []);
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    under.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  const over: OverCap[] = [];
  for (const pid of under) {
    // Read each time: a zygote's fresh fork shows the zygote's arguments until it names itself.
    if (!(await table.commandLine(pid))?.split(" ").includes("--type=renderer")) continue;
    const bytes = await table.residentBytes(pid);
    if (bytes !== undefined && bytes > capBytes) over.push({ pid, bytes });
  }
  return over;
}

export function procTable(): ProcessTable | undefined {
  if (!existsSync("/proc/self/stat")) return undefined;
  const read = (path: string) => readFile(path, "utf8").catch(() => undefined);
  return {
    async list() {
      const names = await readdir("/proc");
      const entries = await Promise.all(
        names
          .filter((n) => /^\d+$/.test(n))
          .map(async (n): Promise<ProcessEntry | undefined> => {
            // "pid (name) state ppid ...": the name may hold spaces and parentheses.
            const stat = await read(`/proc/${n}/stat`);
            const ppid = Number(stat?.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
            return Number.isInteger(ppid) ? { pid: Number(n), ppid } : undefined;
          }),
      );
      return entries.filter((e) => e !== undefined);
    },
    async commandLine(pid) {
      return (await read(`/proc/${pid}/cmdline`))?.replaceAll("\0", " ").trim();
    },
    async residentBytes(pid) {
      const kb = /^VmRSS:\s*(\d+) kB$/m.exec((await read(`/proc/${pid}/status`)) ?? "")?.[1];
      return kb === undefined ? undefined : Number(kb) * 1024;
    },
    kill(pid) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    },
  };
}

interface RendererMemoryCapOptions {
  /** The argument that marks the browser this previewer launched. */
  readonly marker: string;
  readonly capMb: number;
  /** None without /proc (V8's heap limit still holds). */
  readonly table: ProcessTable | undefined;
  readonly log: Logger;
}

/** Looks while told to (pages are rendering), and ends a renderer past the cap. */
export class RendererMemoryCap {
  readonly #o: RendererMemoryCapOptions;
  #timer: NodeJS.Timeout | undefined;
  #looking = false;
  #failed = false;
  ended = 0;

  constructor(options: RendererMemoryCapOptions) {
    this.#o = options;
  }

  watch(): void {
    if (this.#timer || !this.#o.table) return;
    this.#timer = setInterval(() => void this.check(), 250);
    this.#timer.unref();
  }

  rest(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async check(): Promise<void> {
    const table = this.#o.table;
    if (!table || this.#looking) return;
    this.#looking = true;
    try {
      const over = await renderersOverCap(table, process.pid, this.#o.marker, this.#o.capMb * MB);
      for (const { pid, bytes } of over) {
        table.kill(pid);
        this.ended += 1;
        this.#o.log.warn(
          { renderer: pid, mb: Math.round(bytes / MB), capMb: this.#o.capMb },
          `page preview: a page's renderer held more than PREVIEW_MEMORY_MB (${this.#o.capMb} MB); it was ended and its page gets no preview`,
        );
      }
    } catch (err) {
      // Said once: a table that cannot be read now will not be read a quarter second later.
      if (!this.#failed)
        this.#o.log.warn({ err }, "page preview: could not look at the renderers' memory");
      this.#failed = true;
    } finally {
      this.#looking = false;
    }
  }
}
