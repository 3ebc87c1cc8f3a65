/**
 * The size limits of src/ (ARCHITECTURE.md's standards): no file over 800 lines, no function
 * over 80, no folder holding more than 16 source files directly. A file is as long as its one
 * concept needs and is split by responsibility, never to meet a number: 800 lines is where a
 * file is read again for whether it still holds one concept (400 made commits move code "to get
 * back under 400"). Functions are found with the
 * TypeScript compiler's parser, so a function is measured from its first line (the signature)
 * to its last (the closing brace), nested functions included in their parent, as ESLint's
 * max-lines-per-function counts them.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SRC = join(ROOT, "src");

const MAX_FILE_LINES = 800;
const MAX_FUNCTION_LINES = 80;
const MAX_FILES_PER_FOLDER = 16;

/**
 * Folders over the limit today, each with its count then: the count may only go down, and the
 * entry goes once the folder is split (the test says so). Not an exception that hides one: the
 * test lists these, and fails if any of them grows.
 */
const OVER_TODAY: Record<string, number> = {};

const SOURCE = /\.(ts|tsx|js|mjs|cjs)$/;
/** Tests beside the code they test are not counted among a folder's source files. */
const TEST = /\.test\.(ts|tsx|js|mjs|cjs)$/;

interface Folder {
  readonly path: string;
  readonly sources: string[];
}

function folders(dir: string): Folder[] {
  const entries = readdirSync(dir, { withFileTypes: true });
  const here: Folder = {
    path: relative(ROOT, dir),
    sources: entries
      .filter((e) => e.isFile() && SOURCE.test(e.name) && !TEST.test(e.name))
      .map((e) => e.name),
  };
  const below = entries.filter((e) => e.isDirectory()).flatMap((e) => folders(join(dir, e.name)));
  return [here, ...below];
}

const all = folders(SRC);
const files = all.flatMap((f) => f.sources.map((name) => join(f.path, name)));

/** Lines as `wc -l` counts them: a final newline ends the last line, it does not start one. */
function lineCount(text: string): number {
  let lines = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++;
  return text.length > 0 && !text.endsWith("\n") ? lines + 1 : lines;
}

interface LongFunction {
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

/** Every function-like node with a body in `text`, with the lines it spans. */
function functionLengths(fileName: string, text: string): LongFunction[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: LongFunction[] = [];
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = lineOf(node.getStart(source));
      const last = lineOf(node.getEnd());
      found.push({ name: nameOf(node), line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function nameOf(node: ts.SignatureDeclaration): string {
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText();
  if (ts.isPropertyAssignment(parent)) return parent.name.getText();
  if (ts.isConstructorDeclaration(node)) return "constructor";
  return "(anonymous)";
}

describe("the layout of src/", () => {
  it("keeps every file within 800 lines", () => {
    expect(files.length).toBeGreaterThan(100);
    const long = files
      .map((file) => ({ file, lines: lineCount(readFileSync(join(ROOT, file), "utf8")) }))
      .filter((f) => f.lines > MAX_FILE_LINES)
      .map((f) => `${f.file}: ${f.lines} lines`);
    expect(long).toEqual([]);
  });

  it("keeps every function within 80 lines", () => {
    const long = files.flatMap((file) =>
      functionLengths(file, readFileSync(join(ROOT, file), "utf8"))
        .filter((f) => f.lines > MAX_FUNCTION_LINES)
        .map((f) => `${file}:${f.line} ${f.name}: ${f.lines} lines`),
    );
    expect(long).toEqual([]);
  });

  it("keeps every folder to 16 source files directly", () => {
    const crowded = all
      .filter((f) => f.sources.length > (OVER_TODAY[f.path] ?? MAX_FILES_PER_FOLDER))
      .map((f) => `${f.path}: ${f.sources.length} files`);
    expect(crowded).toEqual([]);
  });

  it("lists only folders that are still over the limit among those over it today", () => {
    const counts = new Map(all.map((f) => [f.path, f.sources.length]));
    const stale = Object.keys(OVER_TODAY).filter(
      (path) => (counts.get(path) ?? 0) <= MAX_FILES_PER_FOLDER,
    );
    expect(stale, "now within the limit: remove from OVER_TODAY").toEqual([]);
  });
});

describe("the measures themselves", () => {
  const fn = (bodyLines: number) =>
    `export function f(a: number): number {\n${"  a++;\n".repeat(bodyLines)}  return a;\n}\n`;

  it("counts lines as wc -l does", () => {
    expect(lineCount("")).toBe(0);
    expect(lineCount("a\nb\n")).toBe(2);
    expect(lineCount("a\nb")).toBe(2);
  });

  it("measures a function from its signature to its closing brace", () => {
    expect(functionLengths("f.ts", fn(77))).toEqual([{ name: "f", line: 1, lines: 80 }]);
    expect(functionLengths("f.ts", fn(78))[0]?.lines).toBe(81);
  });

  it("finds methods, arrow functions and nested functions, each measured on its own", () => {
    const text = [
      "class C {",
      "  m(): void {",
      "    const g = () => {",
      "      return 1;",
      "    };",
      "    g();",
      "  }",
      "  #p = async (x: number) => x;",
      "}",
      "const h = function () {};",
      "",
    ].join("\n");
    expect(functionLengths("c.ts", text)).toEqual([
      { name: "m", line: 2, lines: 6 },
      { name: "g", line: 3, lines: 3 },
      { name: "#p", line: 8, lines: 1 },
      { name: "h", line: 10, lines: 1 },
    ]);
  });

  it("skips signatures without a body (overloads, interfaces, declarations)", () => {
    const text = "interface I { m(): void }\ndeclare function d(): void;\n";
    expect(functionLengths("d.ts", text)).toEqual([]);
  });
});
