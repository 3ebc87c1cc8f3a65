import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lastIndexOf, TextReconciler } from "../../src/service/reconciler.ts";
import { settledRatio } from "../support/linear-time.ts";

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

  it("holds back a continuing connection's text until a snapshot places it, then follows it", () => {
    const r = new TextReconciler();
    r.newConnection();
    r.delta("Hello ");
    r.newConnection();
    expect(r.delta("world, ")).toBe("");
    expect(r.needsSnapshot).toBe(false);
    expect(r.delta("x".repeat(60))).toBe("");
    expect(r.needsSnapshot).toBe(true);
    // Meanwhile the service produced "big " (before the reconnection) and "!" (after).
    expect(r.snapshot(`Hello big world, ${"x".repeat(60)}!`)).toBe(`big world, ${"x".repeat(60)}!`);
    expect(r.delta("!")).toBe("");
    expect(r.delta(" More.")).toBe(" More.");
    expect(r.text).toBe(`Hello big world, ${"x".repeat(60)}! More.`);
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

  it("fills the gap of a drop when a numbered server continues, placing the new chunks", () => {
    const r = new TextReconciler();
    r.newConnection();
    r.delta("Hello ", 0);
    expect(r.snapshot("Hello big ")).toBe("big ");
    r.newConnection();
    // Chunk 1 ("big ") was covered by the snapshot; chunk 3 follows a chunk 2 never received.
    expect(r.delta("wide ", 3)).toBe("");
    expect(r.snapshot("Hello big new wide ")).toBe("new wide ");
    expect(r.delta("world", 4)).toBe("world");
    expect(r.text).toBe("Hello big new wide world");
  });

  it("places a chunk that repeats only the end of what a snapshot added, without repeating it", () => {
    const r = new TextReconciler();
    r.newConnection();
    r.delta("Keep it simple: fewer 3 ", 0);
    // The poll after a drop shows text beyond chunk 0, cut inside what chunk 1 carries.
    expect(r.snapshot("Keep it simple: fewer 3 a.m. pages. T")).toBe("a.m. pages. T");
    r.newConnection();
    // Chunk 1 starts inside the snapshot's addition: it is held, then placed by the next one.
    expect(r.delta(".m. pages. The queue ", 1)).toBe("");
    expect(r.snapshot("Keep it simple: fewer 3 a.m. pages. The queue is faster")).toBe(
      "he queue is faster",
    );
    expect(r.delta("is faster, but", 2)).toBe(", but");
    expect(r.text).toBe("Keep it simple: fewer 3 a.m. pages. The queue is faster, but");
  });

  it("does not repeat what a placing snapshot added beyond the connection when the next one continues", () => {
    const r = new TextReconciler();
    r.newConnection();
    r.delta("Here is my answer to “", 1);
    expect(r.snapshot("Here is my answer to “Prope")).toBe("Prope");
    r.newConnection();
    // Chunk 5 after chunk 1: a gap; the poll after the next drop places it and fills the rest.
    expect(r.delta("the cache layer. Keep the ", 5)).toBe("");
    const full =
      "Here is my answer to “Property 57”, through the cache layer. Keep the index _simple_: f";
    expect(r.snapshot(full)).toBe("rty 57”, through the cache layer. Keep the index _simple_: f");
    // The last connection replays from the start, then goes on from chunk 6: chunk 6 is the
    // text the snapshot added after chunk 5, shown already.
    r.newConnection();
    const replayed = ["Here is my answer to “", "Prope", "rty 57”, through ", "the cache layer. "];
    for (const [i, text] of [...replayed, "the cache layer. Keep the "].entries()) {
      expect(r.delta(text, i + 1)).toBe("");
    }
    expect(r.delta("index _simple_: f", 6)).toBe("");
    expect(r.delta("e", 7)).toBe("e");
    expect(r.text).toBe(`${full}e`);
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
        fc.array(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 2, maxLength: 40 }),
        fc.array(fc.tuple(fc.nat(), fc.nat({ max: 3 })), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        fc.boolean(),
        (chunks, drops, replay, numbered) => {
          // Unique marker per chunk so that locating text cannot be fooled by repetition.
          const marked = chunks.map((c, i) => `<${i}:${c}>`);
          const full = marked.join("");
          const producedText = (n: number) => marked.slice(0, n).join("");
          const points = [
            ...new Map(drops.map(([at, lost]) => [at % marked.length, lost])).entries(),
          ].sort((a, b) => a[0] - b[0]);
          const r = new TextReconciler();
          let out = "";
          let produced = 0;
          const receive = (i: number) => {
            out += r.delta(marked[i] ?? "", numbered ? i : undefined);
            if (r.needsSnapshot) out += r.snapshot(producedText(produced));
          };
          r.newConnection();
          let next = 0;
          for (const [at, lost] of points) {
            for (; next < at; next++) {
              produced = Math.max(produced, next + 1);
              receive(next);
            }
            // Dropped: the follower polls (and fills what it can), `lost` chunks are produced
            // before the next connection opens.
            out += r.snapshot(producedText(produced));
            produced = Math.min(marked.length, produced + lost);
            r.newConnection();
            if (replay) {
              for (let i = 0; i < produced; i++) receive(i);
              next = produced;
            } else {
              next = produced;
            }
          }
          for (; next < marked.length; next++) {
            produced = Math.max(produced, next + 1);
            receive(next);
          }
          out += r.snapshot(full);
          expect(out).toBe(full);
          expect(r.text).toBe(full);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("text reconciliation costs the text's length, whatever the stream", () => {
  /** Fastest of five runs, at least 2 ms (below that, timer noise decides ratios). */
  const fastest = (fn: () => unknown) => {
    let best = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      fn();
      best = Math.min(best, performance.now() - started);
    }
    return Math.max(best, 2);
  };
  /** 4n may take at most 10 times as long as n (linear: about 4; quadratic: 16). */
  const linear = (run: (n: number) => unknown) => {
    const n = 16_000;
    run(n); // warm-up
    // A ratio over 10 is measured twice more: a descheduled process is no complexity.
    const ratio = settledRatio(() => fastest(() => run(4 * n)) / fastest(() => run(n)), 10);
    expect(ratio).toBeLessThanOrEqual(10);
  };

  it("follows a replaying connection of one-character deltas in linear time", () => {
    linear((n) => {
      const r = new TextReconciler();
      r.newConnection();
      r.delta("x".repeat(n)); // what the first connection showed
      r.newConnection();
      for (let i = 0; i < 2 * n; i++) r.delta("x"); // replays it, then goes on
      expect(r.text.length).toBe(2 * n);
    });
  });

  it("places a long connection in a long snapshot in linear time", () => {
    linear((n) => {
      const r = new TextReconciler();
      r.newConnection();
      r.delta("start ");
      r.newConnection();
      // A gap: held until a snapshot places it. This one is not in it (a naive search
      // compares almost all of it at every position).
      r.delta(`${"a".repeat(n)}b`);
      expect(r.snapshot(`start ${"a".repeat(4 * n)}`)).toBe(`${"a".repeat(n)}b`);
    });
  });

  it("finds the last occurrence as String.prototype.lastIndexOf does (property)", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "b", "c"), maxLength: 30 });
    fc.assert(
      fc.property(text, text, (hay, needle) => {
        expect(lastIndexOf(hay, needle)).toBe(hay.lastIndexOf(needle));
      }),
      { numRuns: 2000 },
    );
  });
});
