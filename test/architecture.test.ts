/**
 * ARCHITECTURE.md stays true to the tree: every file or folder it names in backticks exists
 * (a path under src/ unless it starts with a top-level folder of the repository; a bare
 * `name.ts` or `name/` at the top or somewhere under src/ or tools/; a bare `.md` is a file
 * the app writes, like `answer.md`).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");
const TOP = ["src/", "test/", "tools/", "bench/", "docs/", "scripts/"];

/** The paths named in backticks: `a/b.ts`, `a/`, `a.ts (+ b.ts)` count; code and commands do not. */
function namedPaths(markdown: string): string[] {
  const paths = new Set<string>();
  for (const [, inner = ""] of markdown.matchAll(/`([^`\n]+)`/g)) {
    for (const word of inner.split(/,\s*/)) {
      const path = word.trim();
      if (/^[\w.-]+(\/[\w.-]+)*\/?$/.test(path) && /\.(ts|mjs|yml|md)$|\/$/.test(path)) {
        paths.add(path);
      }
    }
  }
  return [...paths];
}

/** Every file and folder name under `dir`, folders with a trailing slash. */
function namesUnder(dir: string): Set<string> {
  const entries = readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true });
  return new Set(entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)));
}

describe("ARCHITECTURE.md", () => {
  const text = readFileSync(join(ROOT, "ARCHITECTURE.md"), "utf8");
  const named = namedPaths(text);

  it("names the files and folders a newcomer must know", () => {
    expect(named).toEqual(expect.arrayContaining(["runs/start.ts", "runs/fate.ts", "threads/"]));
  });

  it("names only files and folders that exist", () => {
    const names = new Set([...namesUnder("src"), ...namesUnder("tools")]);
    const missing = named.filter((path) => {
      if (!path.slice(0, -1).includes("/")) {
        return !names.has(path) && !existsSync(join(ROOT, path)) && !path.endsWith(".md");
      }
      const candidates = TOP.some((top) => path.startsWith(top)) ? [path] : [`src/${path}`, path];
      return !candidates.some((p) => existsSync(join(ROOT, p)));
    });
    expect(missing).toEqual([]);
  });
});
