/**
 * Slack's requests in HTTP mode are read up to 4 MB (SLACK_BODY_LIMIT_BYTES, Bolt's own default
 * kept): a body past it, signed or not, declared or streamed, is refused with 413 Payload Too
 * Large without being read to its end, and the app goes on serving. Anyone can post to
 * /slack/events: the cap is what stands before the signature check.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JSON_CONTENT_TYPE, sendSignedRequest } from "../../tools/local-slack/slack-requests.ts";
import { Harness, SIGNING_SECRET } from "../support/harness.ts";

const FOUR_MB = 4 * 1024 * 1024;

/** Slack's URL check (answered with its challenge), padded to exactly `bytes`. */
function challengeOf(bytes: number): string {
  const bare = JSON.stringify({ type: "url_verification", challenge: "size-check", pad: "" });
  return JSON.stringify({
    type: "url_verification",
    challenge: "size-check",
    pad: "x".repeat(bytes - bare.length),
  });
}

/**
 * POSTs up to `total` bytes without a length (chunked, as a client streaming without end
 * would), unsigned: the app's answer (or the error that ended the request), and how much had
 * been written when it came.
 */
function stream(url: string, total: number): Promise<{ answer: number | string; sent: number }> {
  return new Promise((resolve) => {
    let sent = 0;
    const req = request(url, { method: "POST", headers: { "content-type": JSON_CONTENT_TYPE } });
    req.on("response", (res) => {
      res.resume();
      resolve({ answer: res.statusCode ?? 0, sent });
      req.destroy();
    });
    req.on("error", (err) => resolve({ answer: err.message, sent }));
    const chunk = Buffer.alloc(64 * 1024, "x");
    const more = () => {
      while (sent < total && !req.destroyed) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", more);
      }
      req.end();
    };
    more();
  });
}

describe("the size of Slack's requests (HTTP mode)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start();
  });
  afterAll(async () => {
    await h?.close();
  });

  it("takes a signed request of exactly 4 MB", async () => {
    const body = challengeOf(FOUR_MB);
    expect(Buffer.byteLength(body)).toBe(FOUR_MB);
    const res = await sendSignedRequest(h.eventsUrl, SIGNING_SECRET, body, JSON_CONTENT_TYPE);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ challenge: "size-check" });
  });

  it("refuses one byte more with 413, signed or not, and says so in the log", async () => {
    const body = challengeOf(FOUR_MB + 1);
    const signed = await sendSignedRequest(h.eventsUrl, SIGNING_SECRET, body, JSON_CONTENT_TYPE);
    expect(signed.status).toBe(413);
    const unsigned = await fetch(h.eventsUrl, { method: "POST", body });
    expect(unsigned.status).toBe(413);
    expect(
      h.logLines.some((l) => l.includes("Request body exceeded the maximum allowed size")),
    ).toBe(true);
  });

  it("refuses a body streamed without a length once it passes 4 MB, without waiting for its end", async () => {
    const total = 64 * 1024 * 1024;
    const { answer, sent } = await stream(h.eventsUrl, total);
    expect(answer).toBe(413);
    // Answered while the client was still writing (what was written includes socket buffers).
    expect(sent).toBeLessThan(total / 2);
  });

  it("goes on serving: a task runs to its answer afterwards", async () => {
    await h.command("After the big requests");
    const threadTs = await h.waitForTaskThread("After the big requests");
    await h.waitForFinal(threadTs);
    expect(h.slack.validationErrors).toEqual([]);
  });
});
