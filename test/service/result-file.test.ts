/**
 * One generated file read alone, within a budget, from a real HTTP server answering Get Task
 * Results as the service may: the file's entry in any key order, next to a long answer and to
 * other files (a server that ignores paging), its content base64 or text, or more than the
 * budget. The content goes straight into one buffer; nothing else on the page is kept.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTaskServiceClient } from "../../src/service/client.ts";
import { TaskServiceError } from "../../src/service/errors.ts";
import { decodeBase64InPlace } from "../../src/service/result-file.ts";

/** What the server answers to the next request, and the queries it was asked. */
let page: () => AsyncIterable<string | Uint8Array> | string = () => "{}";
const asked: URLSearchParams[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    asked.push(new URL(req.url ?? "/", "http://x").searchParams);
    res.writeHead(200, { "content-type": "application/json" });
    const body = page();
    if (typeof body === "string") {
      res.end(body);
      return;
    }
    void (async () => {
      try {
        for await (const part of body) {
          if (res.destroyed) return;
          if (!res.write(part)) await new Promise((r) => res.once("drain", r));
        }
        res.end();
      } catch {
        res.destroy();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const client = (maxAnswerBytes = 4096) =>
  createTaskServiceClient({ baseUrl: base, apiKey: "he-test", retries: 0, maxAnswerBytes });
const ref = { projectId: "p1", threadId: "t1" };
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0x10]);

/** A page of the result: the answer's text, then the files' entries as given. */
const resultPage = (files: Record<string, unknown>[], content = "The answer.") =>
  JSON.stringify({
    success: true,
    status: "completed",
    response: { role: "assistant", content },
    files,
  });

describe("reading one file of a result", () => {
  it("asks for its place with one file a page, its content included", async () => {
    page = () => resultPage([{ file_id: "f3", content: "hi", encoding: "utf-8" }]);
    const got = await client().readResultFile(
      ref,
      { position: 2, fileId: "f3" },
      { maxBytes: 100 },
    );
    expect(got?.toString("utf8")).toBe("hi");
    const q = asked.at(-1);
    expect([q?.get("page"), q?.get("page_size"), q?.get("include_file_content")]).toEqual([
      "3",
      "1",
      "true",
    ]);
  });

  it("decodes base64 content that comes before its id and encoding, as the service orders them", async () => {
    page = () =>
      resultPage([
        {
          content: PNG.toString("base64"),
          file_id: "chart",
          file_name: "chart.png",
          encoding: "base64",
          included_inline: true,
        },
      ]);
    const got = await client().readResultFile(
      ref,
      { position: 0, fileId: "chart" },
      { maxBytes: 100 },
    );
    expect(got?.equals(PNG)).toBe(true);
  });

  it("keeps text exactly, non-ASCII and escapes included", async () => {
    const text = 'café 🚀 "quoted" \\ back\nslash\u0000';
    page = () => resultPage([{ file_id: "t", encoding: "utf-8", content: text }]);
    const got = await client().readResultFile(ref, { position: 0, fileId: "t" }, { maxBytes: 100 });
    expect(got?.toString("utf8")).toBe(text);
  });

  it("picks its file among others on a page that ignores paging, skipping a larger one", async () => {
    page = () =>
      resultPage([
        { file_id: "video", encoding: "base64", content: "A".repeat(10_000) },
        { file_id: "notes", encoding: "utf-8", content: "the notes" },
        { file_id: "other", encoding: "utf-8", content: "not these" },
      ]);
    const got = await client(65_536).readResultFile(
      ref,
      { position: 1, fileId: "notes" },
      { maxBytes: 100 },
    );
    expect(got?.toString("utf8")).toBe("the notes");
  });

  it("refuses content past the budget as too large, reading no further than it must", async () => {
    page = () => resultPage([{ file_id: "big", encoding: "base64", content: "A".repeat(5000) }]);
    const err = await client()
      .readResultFile(ref, { position: 0, fileId: "big" }, { maxBytes: 1000 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskServiceError);
    expect((err as TaskServiceError).kind).toBe("too_large");
  });

  it("stops an endless page once it read the answer's cap and the file's budget", async () => {
    let sent = 0;
    page = () =>
      (async function* () {
        yield '{"success":true,"files":[{"file_id":"f","encoding":"base64","content":"';
        for (;;) {
          sent += 65_536;
          yield "A".repeat(65_536);
        }
      })();
    const err = await client()
      .readResultFile(ref, { position: 0, fileId: "f" }, { maxBytes: 8192 })
      .catch((e: unknown) => e);
    expect((err as TaskServiceError).kind).toBe("too_large");
    // What was sent before the connection closed: the cap, and what the sockets buffered.
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it("lets a long answer on the page pass without counting it against the file's budget", async () => {
    page = () => resultPage([{ file_id: "f", encoding: "utf-8", content: "ok" }], "x".repeat(3000));
    const got = await client().readResultFile(ref, { position: 0, fileId: "f" }, { maxBytes: 10 });
    expect(got?.toString("utf8")).toBe("ok");
  });

  it("has nothing for a file not inline, not on the page, or without content", async () => {
    const read = (fileId: string) =>
      client().readResultFile(ref, { position: 0, fileId }, { maxBytes: 100 });
    page = () =>
      resultPage([
        { file_id: "link", included_inline: false, download_url: "https://x/y" },
        { file_id: "empty" },
      ]);
    expect(await read("link")).toBeUndefined();
    expect(await read("empty")).toBeUndefined();
    expect(await read("gone")).toBeUndefined();
  });

  it("keeps every byte of a long content however the page is cut: characters, escapes, pairs", async () => {
    // Pieces of text of every kind, the page sent in pieces cut anywhere, a character's bytes and
    // an escape included. Small pieces cut a short text at every position; large ones cut a long
    // text, most of which takes the fast way.
    const piece = (plain: number) =>
      `${"plain ".repeat(plain)}é "quoted" \\ back\nslash 🚀 日本語 \u0001`;
    const short = piece(3).repeat(40);
    const long = piece(5000).repeat(20);
    for (const [size, text] of [
      [1, short],
      [7, short],
      [1000, long],
      [65_536, long],
    ] as const) {
      for (const [encoding, content] of [
        ["utf-8", text],
        ["base64", Buffer.from(text).toString("base64")],
      ] as const) {
        const bytes = Buffer.from(resultPage([{ file_id: "f", encoding, content }]));
        page = () =>
          (async function* () {
            for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
          })();
        const got = await client(1 << 22).readResultFile(
          ref,
          { position: 0, fileId: "f" },
          { maxBytes: 4 << 20 },
        );
        expect(got?.equals(Buffer.from(text)), `${encoding} in pieces of ${size}`).toBe(true);
      }
    }
  });

  it("says a page that is no JSON is unreadable", async () => {
    page = () => '{"files":[{"file_id":"f","content":"abc';
    const err = await client()
      .readResultFile(ref, { position: 0, fileId: "f" }, { maxBytes: 100 })
      .catch((e: unknown) => e);
    expect((err as TaskServiceError).kind).toBe("protocol");
  });
});

describe("base64 decoded where it lies", () => {
  it("gives the bytes Buffer.from gives, whatever the padding, line breaks and block edges", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200_000 }),
        fc.nat({ max: 100 }),
        fc.boolean(),
        (bytes, wrap, pad) => {
          let text = Buffer.from(bytes).toString("base64");
          if (!pad) text = text.replace(/=+$/, "");
          if (wrap > 0) text = text.replace(new RegExp(`(.{${wrap * 4 + 1}})`, "g"), "$1\r\n");
          const buffer = Buffer.from(text, "latin1");
          const n = decodeBase64InPlace(buffer, buffer.length);
          expect(buffer.subarray(0, n).equals(Buffer.from(bytes))).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
    // Across many 64 KiB blocks, with a line break at every 76 characters (MIME's).
    const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 256));
    const text = bytes.toString("base64").replace(/(.{76})/g, "$1\n");
    const buffer = Buffer.from(text, "latin1");
    expect(buffer.subarray(0, decodeBase64InPlace(buffer, buffer.length)).equals(bytes)).toBe(true);
  });
});
