import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createFinalLogger, createLogger } from "../src/log.ts";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, destination };
}

describe("logging", () => {
  it("never writes a secret, whatever field or message carries it", () => {
    const apiKey = "he-Zq81sEcReTkEy";
    const botToken = "xoxb-123-456-abcdefSECRET";
    const signingSecret = "8f14e45fceea167a5a36dedd4bea2543";
    const { lines, destination } = capture();
    const log = createLogger({
      level: "debug",
      secrets: [apiKey, botToken, signingSecret],
      destination,
    });
    log.info({ headers: { "x-api-key": apiKey } }, "request");
    log.info({ config: { service: { apiKey } } }, "config");
    log.error({ err: new Error(`upstream said ${apiKey} is invalid`) }, "failed");
    log.warn(`token ${botToken} and secret ${signingSecret} in a message`);
    log.info({ nested: { deeper: { value: `Bearer ${botToken}` } } }, "nested");
    log.info({ quoted: `"${apiKey}"` }, "json-escaped");
    log.info({ other: "xapp-1-A0SOMETHINGLONG-123" }, "app token by shape");
    const all = lines.join("");
    expect(lines.length).toBe(7);
    for (const secret of [apiKey, botToken, signingSecret, "xapp-1-A0SOMETHINGLONG-123"]) {
      expect(all).not.toContain(secret);
    }
    expect(all).toContain("[REDACTED]");
  });

  it("never writes a workflow step's execution token, by shape or by where Slack puts it", () => {
    const { lines, destination } = capture();
    const log = createLogger({ level: "debug", destination });
    const event = { event: { type: "function_executed", bot_access_token: "abcd-1325-SECRET" } };
    // As Bolt's Socket Mode receiver logs what it receives: the message as a string.
    log.debug(`Received a message on the WebSocket: ${JSON.stringify(event)}`);
    log.debug({ body: event }, "as a field");
    log.info("token xwfp-T0001-75f74e2d591ee6514a8b4084 by its shape");
    const all = lines.join("");
    for (const secret of ["abcd-1325-SECRET", "xwfp-T0001-75f74e2d591ee6514a8b4084"]) {
      expect(all).not.toContain(secret);
    }
    expect(all).toContain("function_executed");
  });

  it("writes the last line before the call returns, scrubbed like every other", () => {
    const dir = mkdtempSync(join(tmpdir(), "taskbot-log-"));
    const path = join(dir, "out.log");
    const fd = openSync(path, "a");
    try {
      const secret = "he-FinalLineSecret42";
      const final = createFinalLogger({ level: "info", secrets: [secret], fd });
      final.fatal({ err: new Error(`boom with ${secret}`) }, "uncaught exception");
      // No tick has passed: an asynchronous destination would not have written it yet.
      const written = readFileSync(path, "utf8");
      const line = JSON.parse(written.trim()) as { level: number; msg: string; err: object };
      expect(line).toMatchObject({ level: 60, msg: "uncaught exception" });
      expect(written).not.toContain(secret);
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
