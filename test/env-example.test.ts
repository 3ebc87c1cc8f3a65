/**
 * `.env.example` lists every setting the app reads (SETTINGS, from the config's zod shapes),
 * each once, with its real default: the file cannot fall behind a new setting or a changed
 * default without this test saying which.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseConfig, SETTINGS } from "../src/config/config.ts";

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), "utf8");

/** Each setting line (`NAME=value`, or `# NAME=value` keeping the default), in order. */
function settingLines(text: string) {
  return text.split("\n").flatMap((line) => {
    const m = /^(# )?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    return m ? [{ name: m[2] ?? "", value: m[3] ?? "", commented: m[1] !== undefined }] : [];
  });
}

const lines = settingLines(read(".env.example"));

/** What a first run fills in (the uncommented lines). */
const filledIn = {
  SLACK_BOT_TOKEN: "xoxb-env-example",
  SLACK_SIGNING_SECRET: "env-example-signing-secret",
  TASK_API_URL: "https://tasks.example.com",
  TASK_API_KEY: "he-env-example",
};

describe(".env.example", () => {
  it("names every setting the app reads, once, and nothing else", () => {
    const names = lines.map((l) => l.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual([...SETTINGS].sort());
  });

  it("shows each setting's real default: every line as written changes nothing", () => {
    const asWritten = Object.fromEntries(lines.map((l) => [l.name, l.value]));
    expect(parseConfig({ ...asWritten, ...filledIn })).toEqual(parseConfig(filledIn));
  });

  it("holds no value of its own in the lines to fill in (never a token)", () => {
    const toFill = lines.filter((l) => !l.commented);
    expect(toFill.map((l) => l.name)).toEqual(expect.arrayContaining(Object.keys(filledIn)));
    for (const line of toFill) expect(line.value, line.name).toBe("");
  });

  it("is what docker compose gives the app, once copied to .env (which git and docker ignore)", () => {
    const compose = parse(read("docker-compose.yml")) as {
      services: { app: { env_file?: unknown } };
    };
    expect(compose.services.app.env_file).toEqual([{ path: ".env", required: false }]);
    expect(read(".gitignore").split("\n")).toContain(".env");
    expect(read(".dockerignore").split("\n")).toContain(".env");
  });
});
