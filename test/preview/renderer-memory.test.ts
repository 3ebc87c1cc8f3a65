/**
 * Which processes the renderer memory cap ends, read from a process table: only renderers, only
 * under the browser this previewer launched (marked by an argument; the playground's tests drive
 * another Chromium from the same process), only past the cap. The real /proc and Chromium are in
 * chromium.test.ts.
 */
import { describe, expect, it } from "vitest";
import { type ProcessTable, renderersOverCap } from "../../src/preview/renderer-memory.ts";

const MB = 1024 * 1024;
const ME = 100;
const MARK = "--task-agent-previews=abc";

interface Proc {
  readonly pid: number;
  readonly ppid: number;
  readonly cmd: string;
  readonly mb: number;
}

function table(procs: readonly Proc[]): ProcessTable {
  const by = new Map(procs.map((p) => [p.pid, p]));
  return {
    list: async () => procs.map(({ pid, ppid }) => ({ pid, ppid })),
    commandLine: async (pid) => by.get(pid)?.cmd,
    residentBytes: async (pid) => (by.has(pid) ? (by.get(pid)?.mb ?? 0) * MB : undefined),
    kill: () => {},
  };
}

const ours: Proc[] = [
  { pid: 200, ppid: ME, cmd: `/usr/lib/chromium/chromium --headless ${MARK}`, mb: 900 },
  { pid: 201, ppid: 200, cmd: "/usr/lib/chromium/chromium --type=zygote", mb: 900 },
  { pid: 202, ppid: 201, cmd: "/usr/lib/chromium/chromium --type=renderer --lang=en-US", mb: 700 },
  { pid: 203, ppid: 201, cmd: "/usr/lib/chromium/chromium --type=renderer --lang=en-US", mb: 120 },
  { pid: 204, ppid: 200, cmd: "/usr/lib/chromium/chromium --type=gpu-process", mb: 800 },
];
/** Another Chromium of the same process (a test's own), and one of another process. */
const others: Proc[] = [
  { pid: 300, ppid: ME, cmd: "/usr/lib/chromium/chromium --headless", mb: 100 },
  { pid: 301, ppid: 300, cmd: "/usr/lib/chromium/chromium --type=renderer", mb: 900 },
  { pid: 400, ppid: 1, cmd: `/usr/lib/chromium/chromium ${MARK}`, mb: 100 },
  { pid: 401, ppid: 400, cmd: "/usr/lib/chromium/chromium --type=renderer", mb: 900 },
];

describe("the renderers past the memory cap", () => {
  it("are the renderers of this previewer's browser holding more than the cap", async () => {
    const over = await renderersOverCap(table([...ours, ...others]), ME, MARK, 512 * MB);
    expect(over).toEqual([{ pid: 202, bytes: 700 * MB }]);
  });

  it("are none when the browser is not running, or a renderer has just gone", async () => {
    expect(await renderersOverCap(table(others), ME, MARK, 512 * MB)).toEqual([]);
    const gone = { ...table(ours), residentBytes: async () => undefined };
    expect(await renderersOverCap(gone, ME, MARK, 512 * MB)).toEqual([]);
  });
});
