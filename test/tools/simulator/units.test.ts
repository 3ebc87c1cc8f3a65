/** Unit tests of the simulator's pieces: directives, answers, PNG files, multipart reading. */
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { inflateSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  extractCodeBlocks,
  generateAnswer,
  hashString,
  hostileAnswer,
} from "../../../tools/simulator/answers.ts";
import { HOSTILE_UNITS, parseDirectives } from "../../../tools/simulator/directives.ts";
import { makePng } from "../../../tools/simulator/files.ts";
import { multipartParser, readMultipart } from "../../../tools/simulator/uploads/multipart.ts";
import {
  BadBodyError,
  DEFAULT_LIMITS,
  type FormBody,
} from "../../../tools/simulator/uploads/uploads.ts";

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

  it("reads a hostile answer's kind, and its length makes the answer", () => {
    const p = parseDirectives("Print [sim:hostile=brackets] [sim:length=300000]");
    expect(p.directives).toEqual({ hostile: "brackets", length: 300_000 });
    expect(hostileAnswer(HOSTILE_UNITS.nesting, 7)).toBe("> - [> ");
    expect(parseDirectives("[sim:hostile=nope]").warnings).toHaveLength(1);
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

/** Reads `body` as a multipart form, fed to the reader in pieces cut at `cuts`. */
function readSplit(body: Uint8Array, contentType: string, cuts: number[] = []): Promise<FormBody> {
  const parser = multipartParser(contentType);
  if (parser === undefined) throw new Error(`not a multipart Content-Type: ${contentType}`);
  const pieces: Buffer[] = [];
  let at = 0;
  for (const cut of cuts.filter((c) => c > 0 && c < body.length).sort((a, b) => a - b)) {
    pieces.push(Buffer.from(body.subarray(at, cut)));
    at = cut;
  }
  pieces.push(Buffer.from(body.subarray(at)));
  return readMultipart(Readable.from(pieces), parser, DEFAULT_LIMITS);
}

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

describe("multipart reading", () => {
  it("reads what fetch's FormData sends, however the bytes are split", async () => {
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
          const body = new Uint8Array(await req.arrayBuffer());
          const got = await readSplit(body, req.headers.get("content-type") ?? "", cuts);
          const fields = new Map<string, string>();
          for (const p of parts.filter((p) => p.filename === undefined)) {
            // FormData serialises line breaks of text fields as CRLF; the last value wins.
            fields.set(p.name, new TextDecoder().decode(p.data).replace(/\r\n|\r|\n/g, "\r\n"));
          }
          expect(got.fields).toEqual(fields);
          const files = parts.filter((p) => p.filename !== undefined && p.name === "files");
          expect(got.files.map((f) => ({ ...f, name: f.name.replace(/%22/g, '"') }))).toEqual(
            files.map((p) => ({
              name: p.filename,
              contentType: "application/octet-stream",
              size: p.data.length,
              sha256: sha256(p.data),
            })),
          );
          expect(got.ignoredFileFields).toEqual(
            parts.filter((p) => p.filename !== undefined && p.name !== "files").map((p) => p.name),
          );
          expect(got.issues).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("rejects a body that ends early, once it was read to its end", async () => {
    let finished = false;
    async function* body() {
      yield Buffer.from('--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nhello');
      finished = true;
    }
    const parser = multipartParser("multipart/form-data; boundary=b");
    if (parser === undefined) throw new Error("no parser");
    await expect(readMultipart(Readable.from(body()), parser, DEFAULT_LIMITS)).rejects.toThrow(
      BadBodyError,
    );
    expect(finished).toBe(true);
  });

  it("reads filename* (RFC 5987) and quoted boundaries; other types are not multipart", async () => {
    const body = Buffer.from(
      'preamble\r\n--z z\r\nContent-Disposition: form-data; name="files"; filename="x.txt"; filename*=UTF-8\'\'%E2%82%AC.txt\r\n\r\nd\r\n--z z--\r\nepilogue',
    );
    const got = await readSplit(body, 'multipart/form-data; boundary="z z"');
    expect(got.files.map((f) => f.name)).toEqual(["€.txt"]);
    expect(multipartParser("application/json")).toBeUndefined();
    expect(multipartParser("multipart/form-data")).toBeUndefined(); // no boundary
  });

  it("keeps the rules: fields up to 1 MiB, parts need a name, headers must parse", async () => {
    const type = "multipart/form-data; boundary=b";
    const part = (headers: string, data: string) =>
      Buffer.from(`--b\r\n${headers}\r\n\r\n${data}\r\n--b--\r\n`);
    const field = 'Content-Disposition: form-data; name="prompt"';
    const fits = await readSplit(part(field, "x".repeat(1024 * 1024)), type);
    expect(fits.fields.get("prompt")).toHaveLength(1024 * 1024);
    await expect(readSplit(part(field, "x".repeat(1024 * 1024 + 1)), type)).rejects.toThrow(
      /Form field too large/,
    );
    await expect(readSplit(part("Content-Disposition: form-data", "x"), type)).rejects.toThrow(
      /without a name/,
    );
    const nameless = 'Content-Disposition: form-data; filename="a.txt"';
    await expect(readSplit(part(nameless, "x"), type)).rejects.toThrow(/without a name/);
    await expect(readSplit(part(`garbage\r\n${field}`, "x"), type)).rejects.toThrow(BadBodyError);
  });

  it("records file parts as the service sees them: `files` only, empty inputs skipped", async () => {
    const type = "multipart/form-data; boundary=b";
    const body = Buffer.from(
      [
        '--b\r\nContent-Disposition: form-data; name="files"; filename="dir/a.md"\r\nContent-Type: text/markdown\r\n\r\n# a',
        '--b\r\nContent-Disposition: form-data; name="files"; filename=""\r\nContent-Type: application/octet-stream\r\n\r\n',
        '--b\r\nContent-Disposition: form-data; name="attachment"; filename="b.txt"\r\n\r\nb',
        '--b\r\nContent-Disposition: form-data; name="files"; filename="c.exe"\r\n\r\nMZ',
        "--b--\r\n",
      ].join("\r\n"),
    );
    const got = await readSplit(body, type);
    expect(got.files).toEqual([
      {
        name: "dir/a.md",
        contentType: "text/markdown",
        size: 3,
        sha256: sha256(Buffer.from("# a")),
      },
      { name: "c.exe", contentType: "text/plain", size: 2, sha256: sha256(Buffer.from("MZ")) },
    ]);
    expect(got.ignoredFileFields).toEqual(["attachment"]);
    expect(got.issues).toMatchObject([{ loc: ["body", "files", 1], msg: /not allowed: c.exe/ }]);
  });
});
