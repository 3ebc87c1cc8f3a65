/**
 * The README's first screen, as the issue asks for it: a paragraph on what the app is, then the
 * two commands that set everything up and run it, how to connect a real Slack, and `npm test`.
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

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
