/**
 * ARCHITECTURE.md stays true to the tree: every file or folder it names in backticks exists
 * (a path under src/ unless it starts with a top-level folder of the repository; a bare
 * `name.ts` or `name/` at the top or somewhere under src/ or tools/; a bare `.md` is a file
 * the app writes, like `answer.md`), and every folder under src/ and tools/ is named, by its
 * path: `runs/answer/` for src/runs/answer/, `tools/playground/web/` for that one (a bare
 * `answer/` does not say whose it is).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
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

/** Every folder below `dir` (from the repository's root), with a trailing slash. */
function foldersUnder(dir: string): string[] {
  const entries = readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isDirectory())
    .map((e) => `${relative(ROOT, join(e.parentPath, e.name)).split(sep).join("/")}/`)
    .filter(
      (path) => !path.split("/").some((part) => part.startsWith(".") || part === "node_modules"),
    )
    .sort();
}

/** The folders of `folders` that `markdown` does not name by their path. */
function unnamedFolders(folders: readonly string[], markdown: string): string[] {
  const named = new Set(
    namedPaths(markdown)
      .filter((path) => path.endsWith("/"))
      .map((path) => (TOP.some((top) => path.startsWith(top)) ? path : `src/${path}`)),
  );
  return folders.filter((folder) => !named.has(folder));
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

  it("names every folder under src/ and tools/", () => {
    const folders = [...foldersUnder("src"), ...foldersUnder("tools")];
    expect(folders).toEqual(expect.arrayContaining(["src/runs/answer/", "tools/local-slack/"]));
    expect(unnamedFolders(folders, text)).toEqual([]);
  });
});

describe("the check that every folder is named", () => {
  const folders = ["src/runs/", "src/runs/answer/", "src/view/", "tools/kit/", "tools/kit/web/"];

  it("reports a folder left out, or named only by its last part", () => {
    const text = "`runs/` holds runs (`answer/`); `tools/kit/` and `kit/web/`, then `view.ts`.";
    expect(unnamedFolders(folders, text)).toEqual([
      "src/runs/answer/",
      "src/view/",
      "tools/kit/web/",
    ]);
  });

  it("takes a folder named by its path, with or without src/, in prose or a table", () => {
    const text = [
      "| `runs/`, `src/runs/answer/` | runs |",
      "| `view/` | views |",
      "The kit (`tools/kit/`, its page in `tools/kit/web/`).",
    ].join("\n");
    expect(unnamedFolders(folders, text)).toEqual([]);
  });
});
