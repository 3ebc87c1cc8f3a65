/**
 * Whether previews are on, said once at start-up: as root Chromium's sandbox cannot be kept, so
 * previews are off unless the operator accepts that (PREVIEW_ALLOW_NO_SANDBOX); a non-root app
 * keeps the sandbox. No browser is launched here (the node binary stands in for one).
 */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { PreviewConfig } from "../../src/config/features.ts";
import { createLogger } from "../../src/log.ts";
import { openPagePreviews } from "../../src/preview/index.ts";

const CONFIG: PreviewConfig = {
  enabled: true,
  chromiumPath: process.execPath,
  searchPath: [],
  maxPages: 3,
  pageTimeoutMs: 10_000,
  runTimeoutMs: 30_000,
  concurrency: 2,
  maxHeight: 4000,
  allowNoSandbox: false,
  memoryMb: 512,
};

/** Opens previews as `uid` and announces: whether there is a previewer, and the log lines. */
async function open(uid: number, config: Partial<PreviewConfig> = {}) {
  const lines: Array<{ level: number; msg: string; sandbox?: boolean }> = [];
  const logger = createLogger({
    level: "debug",
    destination: new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(String(chunk)) as (typeof lines)[number]);
        done();
      },
    }),
  });
  const opened = openPagePreviews({ ...CONFIG, ...config }, logger, uid);
  opened.announce();
  await opened.previews?.close();
  return { on: opened.previews !== undefined, lines };
}

describe("page previews and Chromium's sandbox", () => {
  it("are off as root without PREVIEW_ALLOW_NO_SANDBOX, and one warning says why and what to do", async () => {
    const { on, lines } = await open(0);
    expect(on).toBe(false);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.level).toBe(40);
    expect(lines[0]?.msg).toMatch(/^page previews are off: the app runs as root/);
    expect(lines[0]?.msg).toContain("Chromium's sandbox cannot work");
    expect(lines[0]?.msg).toContain("Run the app as a non-root user");
    expect(lines[0]?.msg).toContain("set PREVIEW_ALLOW_NO_SANDBOX=1");
  });

  it("run without the sandbox as root when the operator opted in, and the start-up line says so", async () => {
    const { on, lines } = await open(0, { allowNoSandbox: true });
    expect(on).toBe(true);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, sandbox: false });
    expect(lines[0]?.msg).toContain("page previews are on WITHOUT Chromium's sandbox");
    expect(lines[0]?.msg).toContain("PREVIEW_ALLOW_NO_SANDBOX");
    expect(lines[0]?.msg).toContain("renderer up to 512 MB, its JavaScript heap 256 MB");
  });

  it("keep the sandbox for any other user, with or without the opt-in", async () => {
    for (const allowNoSandbox of [false, true]) {
      const { on, lines } = await open(1000, { allowNoSandbox });
      expect(on).toBe(true);
      expect(lines).toEqual([
        expect.objectContaining({
          level: 30,
          sandbox: true,
          msg: expect.stringContaining("sandbox on"),
        }),
      ]);
    }
  });
});
