/**
 * Fuzzing the result stream's parser: random bytes and SSE-shaped streams (the three event
 * shapes, comments, CR/LF/CRLF, BOMs, broken UTF-8), split anywhere. It never throws, and the
 * events do not depend on where the bytes were split.
 */
import fc from "fast-check";
import { describe, expect } from "vitest";
import { normalizeData, parseSse, type StreamEvent, toolStep } from "../../src/service/stream.ts";
import { fuzz } from "./fuzz.ts";

const enc = new TextEncoder();

async function collect(chunks: readonly (Uint8Array | string)[]): Promise<StreamEvent[]> {
  async function* body() {
    for (const c of chunks) yield c;
  }
  const out: StreamEvent[] = [];
  for await (const ev of parseSse(body())) out.push(ev);
  return out;
}

function splitAt<T extends Uint8Array | string>(whole: T, cuts: readonly number[]): T[] {
  const at = [...new Set(cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b);
  const parts: T[] = [];
  let from = 0;
  for (const c of [...at, whole.length]) {
    parts.push(whole.slice(from, c) as T);
    from = c;
  }
  return parts;
}

const text = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.constantFrom("", "\n", "\r\n", "data: x", "😀", "<!channel>", "\u2028"),
);
const json = (v: unknown) => JSON.stringify(v);
const payload = fc.oneof(
  fc.record({ type: fc.constant("content"), content: text, chunk_id: fc.nat() }).map(json),
  fc.record({ type: fc.constant("status"), status: text }).map(json),
  fc
    .record({
      content: text,
      status: fc.constantFrom("complete", "streaming", undefined),
      ack: fc.boolean(),
    })
    .map(({ content, status, ack }) =>
      json({
        type: "assistant",
        content: json({ role: "assistant", content }),
        metadata: json({ stream_status: status, is_acknowledgment: ack }),
        sequence: 1,
      }),
    ),
  fc.record({ role: fc.constant("assistant"), content: text }).map(json),
  fc
    .record({ status_type: fc.constantFrom("finish", "thread_run_end"), finish_reason: text })
    .map(json),
  fc
    .record({ tool: text, args: fc.record({ path: text, command: text }) })
    .map((t) => json({ type: "content", content: json(t) })),
  fc.jsonValue().map(json),
  text,
  fc.constant("[DONE]"),
);
const line = fc.oneof(
  { weight: 5, arbitrary: payload.map((p) => `data: ${p}`) },
  { weight: 1, arbitrary: payload.map((p) => `data:${p}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "",
      "",
      "data",
      "data:",
      "event: message",
      "id: 7",
      "retry: 10",
      ": ping",
    ),
  },
  { weight: 1, arbitrary: text },
);
const eol = fc.constantFrom("\n", "\n", "\r\n", "\r", "\n\n", "\r\n\r\n");

/** An SSE-shaped stream, sometimes with a BOM, an unterminated last line or bytes that are no UTF-8. */
const stream = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .record({
        lines: fc.array(fc.tuple(line, eol), { maxLength: 12 }),
        bom: fc.constantFrom("", "", "\uFEFF", "\uFEFF\uFEFF"),
        trail: fc.boolean(),
        junk: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0x80, max: 0xff })), { maxLength: 2 }),
      })
      .map(({ lines, bom, trail, junk }) => {
        let s = bom + lines.map(([l, e]) => l + e).join("");
        if (trail && lines.length > 0) s = s.replace(/(\r\n|\r|\n)+$/, "");
        const bytes = Array.from(enc.encode(s));
        for (const [at, b] of junk) bytes.splice(at % (bytes.length + 1), 0, b);
        return Uint8Array.from(bytes);
      }),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }) },
);

const KINDS = new Set(["delta", "snapshot", "status", "end", "step"]);

describe("fuzz: parseSse", () => {
  fuzz("parseSse: never throws; the same events however the bytes (or text) are split", () =>
    fc.asyncProperty(
      stream,
      fc.array(fc.nat(), { maxLength: 12 }),
      fc.array(fc.nat(), { maxLength: 12 }),
      async (bytes, byteCuts, textCuts) => {
        const whole = await collect([bytes]);
        expect(await collect(splitAt(bytes, byteCuts))).toEqual(whole);
        // Bodies may also arrive as text, split anywhere (between a CR and its LF, mid-pair).
        const decoded = new TextDecoder().decode(bytes);
        expect(await collect(splitAt(decoded, textCuts))).toEqual(whole);
        for (const ev of whole) {
          expect(KINDS.has(ev.type)).toBe(true);
          if (ev.type === "delta") expect(ev.text).not.toBe("");
          if (ev.type === "step") expect(ev.title.length).toBeLessThanOrEqual(80);
        }
      },
    ),
  );

  fuzz("normalizeData and toolStep: never throw on any text; a step title is one short line", () =>
    fc.property(fc.oneof(payload, fc.string(), fc.jsonValue().map(json)), (data) => {
      for (const ev of normalizeData(data)) expect(KINDS.has(ev.type)).toBe(true);
      const title = toolStep(data);
      if (title !== undefined) {
        expect(title.length).toBeLessThanOrEqual(80);
        expect(title).not.toMatch(/\s\s|\n/);
        if (data.isWellFormed()) expect(title.isWellFormed()).toBe(true);
      }
    }),
  );

  fuzz("toolStep: a long tool call is cut to 80 characters, never inside an emoji", () =>
    fc.property(
      fc.string({ unit: fc.constantFrom("a", " ", "😀", "👩‍👩‍👧", "é"), minLength: 60, maxLength: 90 }),
      fc.string({ unit: "grapheme", maxLength: 120 }),
      (name, path) => {
        const title = toolStep(json({ tool: name, args: { path } }));
        expect(title).toBeDefined();
        expect(title?.length).toBeLessThanOrEqual(80);
        expect(title?.isWellFormed()).toBe(true);
      },
    ),
  );
});
