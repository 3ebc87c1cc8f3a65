import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { normalizeData, parseSse, type StreamEvent } from "../../src/service/stream.ts";

const enc = new TextEncoder();

async function collect(chunks: Array<Uint8Array | string>): Promise<StreamEvent[]> {
  async function* source() {
    for (const c of chunks) yield c;
  }
  const out: StreamEvent[] = [];
  for await (const ev of parseSse(source())) out.push(ev);
  return out;
}

const textOf = (events: StreamEvent[]) =>
  events.map((e) => (e.type === "delta" ? e.text : "")).join("");

/** Splits bytes at the given cut points (sorted, deduplicated). */
function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let last = 0;
  for (const p of points) {
    out.push(bytes.slice(last, p));
    last = p;
  }
  out.push(bytes.slice(last));
  return out;
}

const contract = (deltas: string[]) =>
  [
    `data: ${JSON.stringify({ type: "status", status: "running" })}\n\n`,
    ...deltas.map(
      (d, i) => `data: ${JSON.stringify({ type: "content", content: d, chunk_id: i })}\n\n`,
    ),
    `data: ${JSON.stringify({ type: "status", status: "completed" })}\n\n`,
  ].join("");

const agent = (deltas: string[]) =>
  [
    `data: ${JSON.stringify({ type: "assistant", content: JSON.stringify({ role: "assistant", content: "" }), metadata: JSON.stringify({ is_acknowledgment: true }), sequence: 0 })}\n\n`,
    ...deltas.map(
      (d, i) =>
        `data: ${JSON.stringify({ type: "assistant", content: JSON.stringify({ role: "assistant", content: d }), metadata: JSON.stringify({ stream_status: "chunk" }), sequence: i + 1, message_id: "m1" })}\n\n`,
    ),
    `data: ${JSON.stringify({ type: "assistant", content: JSON.stringify({ role: "assistant", content: deltas.join("") }), metadata: JSON.stringify({ stream_status: "complete" }), sequence: deltas.length + 1 })}\n\n`,
  ].join("");

const minimal = (deltas: string[]) =>
  [
    ...deltas.map((d) => `data: ${JSON.stringify({ role: "assistant", content: d })}\n\n`),
    `data: ${JSON.stringify({ status_type: "finish", finish_reason: "stop" })}\n\n`,
  ].join("");

describe("realtime stream parsing", () => {
  it("reads the contract's status and content events", async () => {
    const events = await collect([contract(["Hello, ", "world"])]);
    expect(events).toEqual([
      { type: "status", status: "running" },
      { type: "delta", text: "Hello, ", seq: 0 },
      { type: "delta", text: "world", seq: 1 },
      { type: "status", status: "completed" },
    ]);
  });

  it("reads agent-style events, skips the acknowledgement and marks the repeated text as a snapshot", async () => {
    const events = await collect([agent(["Hel", "lo"])]);
    expect(events).toEqual([
      { type: "delta", text: "Hel", seq: 1 },
      { type: "delta", text: "lo", seq: 2 },
      { type: "snapshot", text: "Hello" },
    ]);
  });

  it("reads minimal events and the finish marker", async () => {
    const events = await collect([minimal(["a", "b"])]);
    expect(events).toEqual([
      { type: "delta", text: "a" },
      { type: "delta", text: "b" },
      { type: "end", reason: "stop" },
    ]);
  });

  it("ignores comments, event: lines, unknown types and malformed JSON", async () => {
    const raw = [
      ": keep-alive\n\n",
      'event: message\ndata: {"type":"content","content":"one"}\n\n',
      "data: {not json\n\n",
      'data: {"type":"tool_call","name":"x"}\n\n',
      'data: {"type":"ping"}\n\n',
      "data: [DONE]\n\n",
      'data: {"type":"content","content":"two"}\n\n',
    ].join("");
    expect(textOf(await collect([raw]))).toBe("onetwo");
  });

  it("accepts CRLF and CR line endings", async () => {
    const raw =
      'data: {"type":"content","content":"a"}\r\n\r\ndata: {"type":"content","content":"b"}\r\rdata: {"type":"content","content":"c"}\n\n';
    expect(textOf(await collect([raw]))).toBe("abc");
  });

  it("keeps a multi-byte character that is split across two network chunks", async () => {
    const bytes = enc.encode(contract(["café 🚀 naïve"]));
    const rocket = bytes.findIndex((b) => b === 0xf0);
    const events = await collect([bytes.slice(0, rocket + 2), bytes.slice(rocket + 2)]);
    expect(textOf(events)).toBe("café 🚀 naïve");
  });

  it("keeps an event whose line is split mid-line, and a last event with no blank line", async () => {
    const raw = 'data: {"type":"content","con';
    const events = await collect([raw, 'tent":"x"}\n\ndata: {"type":"content","content":"y"}']);
    expect(textOf(events)).toBe("xy");
  });

  it("reads events that are not separated by blank lines", () => {
    const glued = '{"type":"content","content":"a"}\ndata: {"type":"content","content":"b"}';
    expect(normalizeData(glued).map((e) => (e.type === "delta" ? e.text : ""))).toEqual(["a", "b"]);
  });

  const delta = fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 });
  for (const [name, render] of [
    ["contract", contract],
    ["agent", agent],
    ["minimal", minimal],
  ] as const) {
    it(`yields the same text for any chunking of a ${name} stream`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(delta, { minLength: 1, maxLength: 20 }),
          fc.array(fc.nat(), { maxLength: 30 }),
          fc.boolean(),
          async (deltas, cuts, crlf) => {
            let raw = render(deltas);
            if (crlf) raw = raw.replace(/\n/g, "\r\n");
            const events = await collect(splitAt(enc.encode(raw), cuts));
            expect(textOf(events)).toBe(deltas.join(""));
          },
        ),
        { numRuns: 150 },
      );
    });
  }
});
