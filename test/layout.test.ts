/**
 * The size limits of src/ (ARCHITECTURE.md's standards): no file over 800 lines, no function
 * over 80, no folder holding more than 16 source files directly. A file is as long as its one
 * concept needs and is split by responsibility, never to meet a number: 800 lines is where a
 * file is read again for whether it still holds one concept (400 made commits move code "to get
 * back under 400"). Functions are found with the TypeScript compiler's parser, so a function is
 * measured from its first line (the signature) to its last (the closing brace), nested functions
 * included in their parent, as ESLint's max-lines-per-function counts them. There are no
 * exceptions; each check also runs on a tree built with one of each just over its limit and one
 * just at it, so none of them passes by finding nothing.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SRC = join(ROOT, "src");

const MAX_FILE_LINES = 800;
const MAX_FUNCTION_LINES = 80;
const MAX_FILES_PER_FOLDER = 16;

const SOURCE = /\.(ts|tsx|js|mjs|cjs)$/;
/** Tests beside the code they test are not counted among a folder's source files. */
const TEST = /\.test\.(ts|tsx|js|mjs|cjs)$/;

interface Folder {
  readonly path: string;
  readonly sources: string[];
}

/** `dir` and every folder below it, each with the source files directly in it, paths from `root`. */
function folders(root: string, dir: string): Folder[] {
  const entries = readdirSync(dir, { withFileTypes: true });
  const here: Folder = {
    path: relative(root, dir),
    sources: entries
      .filter((e) => e.isFile() && SOURCE.test(e.name) && !TEST.test(e.name))
      .map((e) => e.name),
  };
  const below = entries
    .filter((e) => e.isDirectory())
    .flatMap((e) => folders(root, join(dir, e.name)));
  return [here, ...below];
}

const filesOf = (all: Folder[]): string[] =>
  all.flatMap((f) => f.sources.map((name) => join(f.path, name)));

/** The files over the line limit, each as `path: n lines`. */
function longFiles(root: string, files: string[]): string[] {
  return files
    .map((file) => ({ file, lines: lineCount(readFileSync(join(root, file), "utf8")) }))
    .filter((f) => f.lines > MAX_FILE_LINES)
    .map((f) => `${f.file}: ${f.lines} lines`);
}

/** The functions over the line limit, each as `path:line name: n lines`. */
function longFunctions(root: string, files: string[]): string[] {
  return files.flatMap((file) =>
    functionLengths(file, readFileSync(join(root, file), "utf8"))
      .filter((f) => f.lines > MAX_FUNCTION_LINES)
      .map((f) => `${file}:${f.line} ${f.name}: ${f.lines} lines`),
  );
}

/** The folders holding more source files directly than the limit, each as `path: n files`. */
function crowdedFolders(all: Folder[]): string[] {
  return all
    .filter((f) => f.sources.length > MAX_FILES_PER_FOLDER)
    .map((f) => `${f.path}: ${f.sources.length} files`);
}

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

/** A function `f` of `bodyLines` + 3 lines. */
const functionOf = (bodyLines: number): string =>
  `export function f(a: number): number {\n${"  a++;\n".repeat(bodyLines)}  return a;\n}\n`;

describe("the layout of src/", () => {
  const all = folders(ROOT, SRC);
  const files = filesOf(all);

  it("keeps every file within 800 lines", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(longFiles(ROOT, files)).toEqual([]);
  });

  it("keeps every function within 80 lines", () => {
    expect(longFunctions(ROOT, files)).toEqual([]);
  });

  it("keeps every folder to 16 source files directly", () => {
    expect(crowdedFolders(all)).toEqual([]);
  });
});

describe("the checks themselves, on a tree with one of each over its limit", () => {
  const fixture = mkdtempSync(join(tmpdir(), "layout-"));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(fixture, path)), { recursive: true });
    writeFileSync(join(fixture, path), text);
  };
  const lines = (n: number) =>
    Array.from({ length: n }, (_, i) => `export const a${i} = ${i};\n`).join("");
  // 17 source files: one too many. 16, with tests and other files beside them: enough.
  for (let i = 0; i < 17; i++) write(`crowded/f${i}.ts`, "");
  for (let i = 0; i < 16; i++) write(`full/f${i}.ts`, "");
  write("full/f0.test.ts", "");
  write("full/notes.md", "");
  write("full/deeper/f.ts", "");
  write("sizes/at-limit.ts", lines(800));
  write("sizes/over.ts", lines(801));
  write("sizes/function-at-limit.ts", functionOf(77));
  write("sizes/function-over.ts", functionOf(78));
  const all = folders(fixture, fixture);
  afterAll(() => rmSync(fixture, { recursive: true, force: true }));

  it("finds every source file, tests left out", () => {
    expect(filesOf(all)).toHaveLength(17 + 16 + 1 + 4);
  });

  it("reports a file of 801 lines, and not one of 800", () => {
    expect(longFiles(fixture, filesOf(all))).toEqual([join("sizes", "over.ts") + ": 801 lines"]);
  });

  it("reports a function of 81 lines, and not one of 80", () => {
    expect(longFunctions(fixture, filesOf(all))).toEqual([
      join("sizes", "function-over.ts") + ":1 f: 81 lines",
    ]);
  });

  it("reports a folder of 17 source files, and not one of 16 beside a test", () => {
    expect(crowdedFolders(all)).toEqual(["crowded: 17 files"]);
  });
});

describe("the measures themselves", () => {
  it("counts lines as wc -l does", () => {
    expect(lineCount("")).toBe(0);
    expect(lineCount("a\nb\n")).toBe(2);
    expect(lineCount("a\nb")).toBe(2);
  });

  it("measures a function from its signature to its closing brace", () => {
    expect(functionLengths("f.ts", functionOf(77))).toEqual([{ name: "f", line: 1, lines: 80 }]);
    expect(functionLengths("f.ts", functionOf(78))[0]?.lines).toBe(81);
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
