import { describe, expect, it } from "vitest";
import { encodeMultipart, fileFromBytes } from "../../src/service/multipart.ts";

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
    const body = encodeMultipart([["prompt", "p"]], [["files", file]]);
    expect(body.bytes).toBeUndefined();
    const chunks = await collect(body.body);
    // fields + file header, the file, then its CRLF and the closing boundary
    expect(chunks).toHaveLength(3);
    expect([...(chunks[1] ?? [])]).toEqual([0, 1, 2, 255]);
    expect(Buffer.concat(chunks).byteLength).toBe(body.length);
  });
});
