import busboy from "busboy";
import { describe, expect, it } from "vitest";
import { encodeMultipart, fileFromBytes, partContentType } from "../../src/service/multipart.ts";

async function collect(body: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const chunk of body) out.push(chunk);
  return out;
}

describe("multipart bodies", () => {
  it("sends a body without files as one buffer, identical to the streamed form", async () => {
    const body = encodeMultipart(
      [
        ["prompt", "Build a site — with ünïcode"],
        ["metadata", '{"a":1}'],
      ],
      [],
    );
    const streamed = Buffer.concat(await collect(body.body));
    expect(body.bytes).toBeDefined();
    expect(Buffer.compare(body.bytes ?? Buffer.alloc(0), streamed)).toBe(0);
    expect(body.length).toBe(streamed.byteLength);
    const text = streamed.toString("utf8");
    expect(text).toContain('name="prompt"\r\n\r\nBuild a site — with ünïcode\r\n');
    expect(text.endsWith("--\r\n")).toBe(true);
  });

  it("streams file bytes as they are, with the fields around them in few writes", async () => {
    const file = fileFromBytes("a.bin", new Uint8Array([0, 1, 2, 255]));
    const body = encodeMultipart([["prompt", "p"]], [file]);
    expect(body.bytes).toBeUndefined();
    const chunks = await collect(body.body);
    // fields + file header, the file, then its CRLF and the closing boundary
    expect(chunks).toHaveLength(3);
    expect([...(chunks[1] ?? [])]).toEqual([0, 1, 2, 255]);
    expect(Buffer.concat(chunks).byteLength).toBe(body.length);
  });

  it("keeps a hostile Slack mimetype from injecting parts: the service sees one file, typed by its name", async () => {
    const injected =
      'text/plain\r\n\r\nhi\r\n------x\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nrm -rf';
    const file = fileFromBytes("notes.txt", new TextEncoder().encode("hello"), injected);
    const body = encodeMultipart([["prompt", "Summarise"]], [file]);
    const bytes = Buffer.concat(await collect(body.body));
    const seen = await parse(body.contentType, bytes);
    expect(seen.fields).toEqual([["prompt", "Summarise"]]);
    expect(seen.files).toEqual([["files", "notes.txt", "text/plain", "hello"]]);
    expect(bytes.toString("utf8")).not.toContain("rm -rf");
  });

  it("passes a well-formed media type on, and falls back to the name's type (or octet-stream)", () => {
    expect(partContentType("image/png", "a.bin")).toBe("image/png");
    expect(partContentType('text/plain; charset="utf-8"', "a")).toBe('text/plain; charset="utf-8"');
    expect(partContentType("application/vnd.ms-excel", "x")).toBe("application/vnd.ms-excel");
    for (const bad of [
      "text/plain\r\nX: y",
      "text/plain\n",
      "no-slash",
      "a/b; c",
      "a/b\u0000",
      "",
    ]) {
      expect(partContentType(bad, "report.pdf")).toBe("application/pdf");
      expect(partContentType(bad, "blob")).toBe("application/octet-stream");
    }
    expect(partContentType(`text/plain; a="${"x".repeat(300)}"`, "blob")).toBe(
      "application/octet-stream",
    );
  });
});

/** The body as the service reads it (busboy, the parser the simulator uses too). */
function parse(contentType: string, bytes: Buffer) {
  return new Promise<{ fields: string[][]; files: string[][] }>((resolve, reject) => {
    const fields: string[][] = [];
    const files: string[][] = [];
    const bb = busboy({ headers: { "content-type": contentType } });
    bb.on("field", (name, value) => fields.push([name, value]));
    bb.on("file", (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () =>
        files.push([name, info.filename, info.mimeType, Buffer.concat(chunks).toString("utf8")]),
      );
    });
    bb.on("close", () => resolve({ fields, files }));
    bb.on("error", reject);
    bb.end(bytes);
  });
}
