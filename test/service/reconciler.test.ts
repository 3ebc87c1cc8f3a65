import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TextReconciler } from "../../src/service/follow.ts";

describe("text reconciliation across reconnections", () => {
  it("passes a first connection through", () => {
    const r = new TextReconciler();
    r.newConnection();
    expect(r.delta("Hel")).toBe("Hel");
    expect(r.delta("lo")).toBe("lo");
    expect(r.text).toBe("Hello");
  });

  it("does not repeat text when the server replays from the start", () => {
    const r = new TextReconciler();
    r.newConnection();
    r.delta("Hello ");
    r.delta("wor");
    r.newConnection();
    expect(r.delta("Hel")).toBe("");
    expect(r.delta("lo wo")).toBe("");
    expect(r.delta("rld!")).toBe("ld!");
    expect(r.text).toBe("Hello world!");
  });

  it("appends when the server continues where it left off", () => {
    const r = new TextReconciler();
    r.newConnection();
    r.delta("Hello ");
    r.newConnection();
    expect(r.delta("world")).toBe("world");
    expect(r.text).toBe("Hello world");
  });

  it("deduplicates numbered chunks by number", () => {
    const r = new TextReconciler();
    r.newConnection();
    r.delta("a", 0);
    r.delta("b", 1);
    r.newConnection();
    expect(r.delta("a", 0)).toBe("");
    expect(r.delta("b", 1)).toBe("");
    expect(r.delta("c", 2)).toBe("c");
    expect(r.text).toBe("abc");
  });

  it("fills the gap of a drop from a polled snapshot without repeating it when numbered chunks replay", () => {
    const r = new TextReconciler();
    r.newConnection();
    r.delta("a", 0);
    r.delta("b", 1);
    // Dropped; chunks 2 and 3 were produced meanwhile and the poll shows them.
    expect(r.snapshot("abcd")).toBe("cd");
    r.newConnection();
    for (const [t, i] of [
      ["a", 0],
      ["b", 1],
      ["c", 2],
      ["d", 3],
    ] as const)
      expect(r.delta(t, i)).toBe("");
    expect(r.delta("e", 4)).toBe("e");
    expect(r.text).toBe("abcde");
  });

  it("fills the gap of a drop from a polled snapshot when the server continues", () => {
    const r = new TextReconciler();
    r.newConnection();
    r.delta("Hello ", 0);
    expect(r.snapshot("Hello big ")).toBe("big ");
    r.newConnection();
    expect(r.delta("world", 2)).toBe("world");
    expect(r.text).toBe("Hello big world");
    const u = new TextReconciler();
    u.newConnection();
    u.delta("Hello ");
    u.snapshot("Hello big ");
    u.newConnection();
    expect(u.delta("world")).toBe("world");
    expect(u.text).toBe("Hello big world");
  });

  it("takes only the new tail of a snapshot and ignores one that repeats the text", () => {
    const r = new TextReconciler();
    r.newConnection();
    r.delta("abc");
    expect(r.snapshot("abc")).toBe("");
    expect(r.snapshot("abcdef")).toBe("def");
    expect(r.text).toBe("abcdef");
  });

  it("loses and repeats nothing whatever the server does on reconnect (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 2, maxLength: 30 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        (chunks, dropPoints, replay) => {
          // Unique marker per chunk so the heuristic cannot be fooled by repeated text.
          const marked = chunks.map((c, i) => `${i}:${c}|`);
          const full = marked.join("");
          const drops = [...new Set(dropPoints.map((d) => d % marked.length))].sort(
            (a, b) => a - b,
          );
          const r = new TextReconciler();
          let out = "";
          let next = 0;
          r.newConnection();
          for (const drop of drops) {
            for (; next < drop; next++) out += r.delta(marked[next] ?? "");
            r.newConnection();
            if (replay) for (let i = 0; i < next; i++) out += r.delta(marked[i] ?? "");
          }
          for (; next < marked.length; next++) out += r.delta(marked[next] ?? "");
          expect(out).toBe(full);
          expect(r.text).toBe(full);
        },
      ),
      { numRuns: 300 },
    );
  });
});
