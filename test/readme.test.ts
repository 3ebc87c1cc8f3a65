/**
 * The README's first screen, as the issue asks for it: a paragraph on what the app is, then the
 * two commands that set everything up and run it, how to connect a real Slack, and `npm test`;
 * then a page a newcomer reads to the end, whose links and settings table stay true.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../src/config/config.ts";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

/** The README's top: everything before the section on what the app does. */
const top = readme.slice(0, readme.indexOf("\n## What it does"));
const codeBlocks = [...top.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => (m[1] ?? "").trim());
const headings = [...top.matchAll(/^## (.+)$/gm)].map((m) => m[1] ?? "");

describe("the README's first screen", () => {
  it("opens with one paragraph, then npm ci and npm run playground, a real Slack, npm test", () => {
    const [title, intro] = top.split("\n\n");
    expect(title).toMatch(/^# /);
    expect(intro).toMatch(/^A Slack app that/);
    expect(headings).toHaveLength(3);
    expect(headings[0]).toMatch(/no accounts/);
    expect(headings[1]).toMatch(/real Slack workspace/);
    expect(headings[2]).toMatch(/tests/);
    expect(codeBlocks[0]).toBe("npm ci\nnpm run playground");
    expect(codeBlocks[1]).toMatch(/SLACK_BOT_TOKEN=xoxb-… SLACK_APP_TOKEN=xapp-… npm run dev$/);
    expect(codeBlocks.at(-1)).toBe("npm test");
    expect(top).toMatch(/Node\.js ≥ 20\*\* with npm: `npm ci` brings the Node 24/);
  });

  it("shows the playground's screenshot right after it", () => {
    const shot = /!\[[^\]]*\]\((docs\/playground\.png)\)/.exec(readme);
    expect(shot?.index).toBeGreaterThan(top.length);
    expect(existsSync(new URL(`../${shot?.[1]}`, import.meta.url))).toBe(true);
  });
});

/** The text outside fenced code blocks, where headings, links and bullets are Markdown. */
const prose = (md: string): string => md.replace(/^```[\s\S]*?^```/gm, "");

/** GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces to hyphens. */
function anchorsOf(md: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, text] of prose(md).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = (text ?? "")
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** The targets of a page's Markdown links, `[text](target)`. */
const linksOf = (md: string): string[] =>
  [...prose(md).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? "");

const docsDir = new URL("../docs/", import.meta.url);
const docPages = readdirSync(docsDir).filter((name) => name.endsWith(".md"));

describe("the README as a whole", () => {
  it("is under 450 lines, the detail living in docs/", () => {
    expect(readme.split("\n").length).toBeLessThan(450);
  });

  it("links only to its own headings", () => {
    const anchors = anchorsOf(readme);
    const local = linksOf(readme).filter((target) => target.startsWith("#"));
    expect(local.length).toBeGreaterThan(0);
    expect(local.filter((target) => !anchors.has(target.slice(1)))).toEqual([]);
  });

  it("links to docs/ pages and headings that exist, and the docs link back to real places", () => {
    const broken: string[] = [];
    const check = (from: URL, target: string): void => {
      if (/^[a-z]+:/.test(target)) return; // an outside address
      const [path = "", anchor] = target.split("#");
      const file = path === "" ? from : new URL(path, from);
      if (!existsSync(file)) broken.push(`${from.pathname} → ${target}`);
      else if (anchor && file.pathname.endsWith(".md")) {
        if (!anchorsOf(readFileSync(file, "utf8")).has(anchor)) {
          broken.push(`${from.pathname} → ${target}`);
        }
      }
    };
    const readmeUrl = new URL("../README.md", import.meta.url);
    const toDocs = linksOf(readme).filter((target) => target.startsWith("docs/"));
    expect(toDocs.length).toBeGreaterThan(5);
    for (const target of toDocs) check(readmeUrl, target);
    for (const page of docPages) {
      const url = new URL(page, docsDir);
      for (const target of linksOf(readFileSync(url, "utf8"))) check(url, target);
    }
    expect(broken).toEqual([]);
  });

  it("says nothing twice in its lists", () => {
    const bullets = [...prose(readme).matchAll(/^\s*[-*] (.+)$/gm)].map((m) => m[1] ?? "");
    const twice = bullets.filter((line, i) => bullets.indexOf(line) !== i);
    expect(twice).toEqual([]);
  });

  it("lists every setting the app reads in its Configuration table", () => {
    const start = readme.indexOf("\n## Configuration\n");
    const table = readme.slice(start, readme.indexOf("\n## ", start + 1));
    const rows = new Set([...table.matchAll(/^\| `([A-Z0-9_]+)` /gm)].map((m) => m[1]));
    // A family of standard variables (`OTEL_*`) is one row; docs/operations.md lists each.
    const families = [...table.matchAll(/^\| `([A-Z0-9_]+)\*` /gm)].map((m) => m[1] ?? "");
    const operations = readFileSync(new URL("../docs/operations.md", import.meta.url), "utf8");
    const inFamily = (name: string) =>
      families.some((f) => name.startsWith(f) && operations.includes(`\`${name}\``));
    // The proxy variables are read in lower case too, as curl reads them; the table names them once.
    expect(SETTINGS.filter((name) => !rows.has(name.toUpperCase()) && !inFamily(name))).toEqual([]);
  });
});
