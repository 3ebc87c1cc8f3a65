import { inflateSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { extractCodeBlocks, generateAnswer, hashString } from "../../src/simulator/answers.ts";
import { parseDirectives } from "../../src/simulator/directives.ts";
import { makePng } from "../../src/simulator/files.ts";
import {
  MultipartError,
  MultipartParser,
  multipartBoundary,
} from "../../src/simulator/multipart.ts";

describe("directives", () => {
  it("parses and strips every [sim:...] token", () => {
    const p = parseDirectives(
      "Build [sim:format=agent] a site [sim:length=60000][sim:bigfile] [sim:fail_create=429x2] now [sim:RUN=fail]",
    );
    expect(p.text).toBe("Build a site now");
    expect(p.directives).toEqual({
      format: "agent",
      length: 60000,
      bigfile: true,
      failCreate: { status: 429, times: 2 },
      runFail: true,
    });
    expect(p.warnings).toEqual([]);
  });

  it("ignores unknown names and bad values with a warning, still stripping them", () => {
    const p = parseDirectives(
      "a [sim:nope] b [sim:format=xml] c [sim:fail_create=200] [sim:credits]",
    );
    expect(p.text).toBe("a b c");
    expect(p.directives).toEqual({ failCreate: { status: 402, times: undefined } });
    expect(p.warnings).toHaveLength(3);
  });

  it("reads valued forms of norealtime, drop and drops", () => {
    expect(parseDirectives("[sim:norealtime]").directives.norealtime).toBe("refuse");
    expect(parseDirectives("[sim:norealtime=json]").directives.norealtime).toBe("json");
    expect(parseDirectives("[sim:drop=2][sim:drops=3]").directives).toEqual({ drop: 2, drops: 3 });
  });
});

describe("answers", () => {
  const base = { prompt: "Plan a migration", seed: 42, turn: 1, mention: false };

  it("is deterministic and looks like Markdown with the awkward characters", () => {
    const a = generateAnswer({ ...base, length: 2000 });
    expect(generateAnswer({ ...base, length: 2000 })).toBe(a);
    expect(a).toMatch(/^# Plan a migration/);
    expect(a).toContain("“Plan a migration”");
    expect(a).toMatch(/```\w+\n/);
    expect(a).toMatch(/[^\x20-\x7e\n]/); // non-ASCII
    expect(extractCodeBlocks(a).length).toBeGreaterThan(0);
  });

  it("reaches the wanted length: exactly for short answers, closely for long ones, fast", () => {
    expect(generateAnswer({ ...base, length: 0 })).toBe("");
    expect(generateAnswer({ ...base, length: 57 })).toHaveLength(57);
    const started = performance.now();
    const long = generateAnswer({ ...base, length: 60_000 });
    expect(performance.now() - started).toBeLessThan(500);
    expect(Math.abs(long.length - 60_000)).toBeLessThan(600);
    const code = extractCodeBlocks(long);
    expect(code.length).toBeGreaterThan(5);
    for (const b of code) expect(b.code).not.toContain("```");
  });

  it("puts Slack mentions in when asked", () => {
    const a = generateAnswer({ ...base, length: 800, mention: true });
    for (const m of ["<!channel>", "<!here>", "<!everyone>", "<@U12345>", "<#C12345>"]) {
      expect(a).toContain(m);
    }
  });

  it("follow-up answers say so", () => {
    expect(generateAnswer({ ...base, length: 600, turn: 2 })).toContain("Following up on");
  });

  it("hash is stable", () => {
    expect(hashString("abc")).toBe(hashString("abc"));
    expect(hashString("abc")).not.toBe(hashString("abd"));
  });
});

describe("png", () => {
  it("is a valid PNG", () => {
    const png = makePng(7);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(png.subarray(12, 16).toString("latin1")).toBe("IHDR");
    const idatLength = png.readUInt32BE(33);
    expect(png.subarray(37, 41).toString("latin1")).toBe("IDAT");
    const rows = inflateSync(png.subarray(41, 41 + idatLength));
    expect(rows.length).toBe((16 * 3 + 1) * 16);
    expect(png.subarray(png.length - 8, png.length - 4).toString("latin1")).toBe("IEND");
  });
});

interface Part {
  name: string;
  filename?: string;
  data: Uint8Array;
}

function parseSplit(body: Uint8Array, boundary: string, cuts: number[]) {
  const parts: { name: string; filename: string | undefined; data: Buffer }[] = [];
  let current: { name: string; filename: string | undefined; chunks: Buffer[] } | undefined;
  const parser = new MultipartParser(boundary, {
    onPartStart: (h) => {
      current = { name: h.name, filename: h.filename, chunks: [] };
    },
    onPartData: (d) => {
      current?.chunks.push(Buffer.from(d));
    },
    onPartEnd: () => {
      if (current !== undefined) {
        parts.push({
          name: current.name,
          filename: current.filename,
          data: Buffer.concat(current.chunks),
        });
      }
    },
  });
  let at = 0;
  for (const cut of cuts.filter((c) => c > 0 && c < body.length).sort((a, b) => a - b)) {
    parser.write(Buffer.from(body.subarray(at, cut)));
    at = cut;
  }
  parser.write(Buffer.from(body.subarray(at)));
  parser.end();
  return parts;
}

describe("multipart parser", () => {
  it("parses what fetch's FormData sends, however the bytes are split", async () => {
    const part = fc.record({
      name: fc.constantFrom("prompt", "files", "metadata", "x"),
      filename: fc.option(fc.constantFrom("a.txt", "ça va.png", 'we"ird.md', "日本.csv"), {
        nil: undefined,
      }),
      data: fc.uint8Array({ maxLength: 300 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(part, { maxLength: 5 }),
        fc.array(fc.nat(4000), { maxLength: 12 }),
        async (parts: Part[], cuts: number[]) => {
          const form = new FormData();
          for (const p of parts) {
            if (p.filename === undefined) form.append(p.name, new TextDecoder().decode(p.data));
            else form.append(p.name, new Blob([p.data as Uint8Array<ArrayBuffer>]), p.filename);
          }
          const req = new Request("http://x/", { method: "POST", body: form });
          const boundary = multipartBoundary(req.headers.get("content-type") ?? "");
          expect(boundary).toBeDefined();
          const body = new Uint8Array(await req.arrayBuffer());
          const got = parseSplit(body, boundary ?? "", cuts);
          expect(got.map((p) => p.name)).toEqual(parts.map((p) => p.name));
          parts.forEach((p, i) => {
            const g = got[i];
            if (p.filename === undefined) {
              expect(g?.data.toString("utf8")).toBe(
                // FormData serialises line breaks of text fields as CRLF.
                new TextDecoder().decode(p.data).replace(/\r\n|\r|\n/g, "\r\n"),
              );
            } else {
              expect(g?.filename?.replace(/%22/g, '"')).toBe(p.filename);
              expect(Buffer.compare(g?.data ?? Buffer.alloc(0), Buffer.from(p.data))).toBe(0);
            }
          });
        },
      ),
      { numRuns: 150 },
    );
  });

  it("rejects a body that ends early", () => {
    const parser = new MultipartParser("b", {
      onPartStart: () => {},
      onPartData: () => {},
      onPartEnd: () => {},
    });
    parser.write(Buffer.from('--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nhello'));
    expect(() => parser.end()).toThrow(MultipartError);
  });

  it("reads filename* (RFC 5987) and quoted boundaries", () => {
    expect(multipartBoundary('multipart/form-data; boundary="a b"')).toBe("a b");
    expect(multipartBoundary("application/json")).toBeUndefined();
    const names: (string | undefined)[] = [];
    const parser = new MultipartParser("zz", {
      onPartStart: (h) => names.push(h.filename),
      onPartData: () => {},
      onPartEnd: () => {},
    });
    parser.write(
      Buffer.from(
        'preamble\r\n--zz\r\nContent-Disposition: form-data; name="files"; filename="x.txt"; filename*=UTF-8\'\'%E2%82%AC.txt\r\n\r\nd\r\n--zz--\r\nepilogue',
      ),
    );
    parser.end();
    expect(names).toEqual(["€.txt"]);
  });
});
