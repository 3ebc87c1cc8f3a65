import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.ts";
import type { ThreadMessage } from "../../src/threads/ports.ts";
import { ThreadUnreadable, withThreadContext } from "../../src/thread-context/compose.ts";
import { plainText, renderThread } from "../../src/thread-context/render.ts";
import { FakeThreadHistory } from "../support/fakes/thread-history.ts";

const msg = (i: number, text: string, author = "ann", fileNames: string[] = []): ThreadMessage => ({
  ts: `${100 + i}.000100`,
  author,
  text,
  fileNames,
});
const config = { enabled: true, maxMessages: 50, maxChars: 20_000, waitMs: 1000 };
const deps = (history: FakeThreadHistory, c = config) => ({
  threadHistory: history,
  threadContext: c,
  logger: createLogger({ level: "silent" }),
});
const ask = { teamId: "T1", channelId: "C1", threadTs: "100.000100", beforeTs: "200.000100" };

describe("a thread as the agent reads it", () => {
  it("shows names, text and files, oldest first, and counts what it left out", () => {
    const thread = renderThread(
      [msg(1, "first"), msg(2, "second", "bob", ["a.pdf", "b.png"]), msg(3, "third")],
      4,
      { maxMessages: 2, maxChars: 1000 },
    );
    expect(thread.markdown).toBe(
      "… 5 earlier messages not included\n\n**bob**: second\n[files: a.pdf, b.png]\n\n**ann**: third",
    );
    expect(thread).toMatchObject({ included: 2, omitted: 5 });
  });

  it("stays within its size: the newest messages that fit, the newest one always (cut)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 300 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 100, max: 3000 }),
        (texts, maxChars) => {
          const thread = renderThread(
            texts.map((t, i) => msg(i, t)),
            0,
            { maxMessages: 50, maxChars },
          );
          const head = thread.omitted > 0 ? 40 : 0;
          expect(thread.markdown.length).toBeLessThanOrEqual(maxChars + head);
          expect(thread.included + thread.omitted).toBe(texts.length);
          expect(thread.included).toBeGreaterThanOrEqual(1);
        },
      ),
    );
  });

  it("reads Slack's markup as text: people, channels, links and escapes", () => {
    const names = new Map([["U1", "Ann Lee"]]);
    expect(
      plainText(
        "hi <@U1>, see <#C9|general> &amp; <https://x.io|the doc> or <https://y.io> <!here> &lt;b&gt; <@U2>",
        (id) => names.get(id),
      ),
    ).toBe("hi @Ann Lee, see #general & the doc (https://x.io) or https://y.io @here <b> @U2");
  });
});

describe("a task with its thread", () => {
  it("puts a short thread before the prompt and says how many messages it read", async () => {
    const history = new FakeThreadHistory();
    history.add("C1", "100.000100", [msg(0, "root"), msg(1, "reply")]);
    const out = await withThreadContext(deps(history), ask, "sum up", []);
    expect(out.prompt).toMatch(/^Earlier messages[\s\S]*\*\*ann\*\*: reply\n\n---\n\nsum up$/);
    expect(out.files).toEqual([]);
    expect(out.remark).toBe("Read 2 messages of this thread.");
  });

  it("attaches a long thread as thread.md and keeps the prompt as typed, with a pointer", async () => {
    const history = new FakeThreadHistory();
    history.add("C1", "100.000100", [msg(0, "x".repeat(3000)), msg(1, "y".repeat(3000))]);
    const out = await withThreadContext(deps(history), ask, "sum up", []);
    expect(out.prompt).toMatch(/^sum up\n\n\(The earlier messages .* attached as thread\.md\.\)$/);
    expect(out.files.map((f) => [f.name, f.contentType])).toEqual([["thread.md", "text/markdown"]]);
    const chunks: Uint8Array[] = [];
    for await (const c of out.files[0]?.open() ?? []) chunks.push(c);
    const text = Buffer.concat(chunks).toString("utf8");
    expect(text).toContain(`**ann**: ${"y".repeat(3000)}`);
    expect(Buffer.byteLength(text)).toBe(out.files[0]?.size);
    expect(out.remark).toBe("Read 2 messages of this thread, attached as thread.md.");
  });

  it("goes alone, saying why, when the thread cannot be read or cannot go along", async () => {
    const history = new FakeThreadHistory();
    history.refuse = new ThreadUnreadable("Slack's rate limit for reading threads");
    const refused = await withThreadContext(deps(history), ask, "sum up", []);
    expect(refused).toEqual({
      prompt: "sum up",
      files: [],
      remark:
        "Only your message was sent: the thread's earlier messages could not be read (Slack's rate limit for reading threads).",
    });
    history.refuse = undefined;
    history.add("C1", "100.000100", [msg(0, "z".repeat(3000)), msg(1, "w".repeat(3000))]);
    const ten = Array.from({ length: 10 }, (_, i) => ({
      name: `f${i}.txt`,
      size: 0,
      async *open() {},
    }));
    const full = await withThreadContext(deps(history), ask, "sum up", ten);
    expect(full.files).toHaveLength(10);
    expect(full.remark).toMatch(/it has 10 files, the most one task takes/);
  });

  it("reads nothing when THREAD_CONTEXT=off", async () => {
    const history = new FakeThreadHistory();
    const out = await withThreadContext(deps(history, { ...config, enabled: false }), ask, "x", []);
    expect(out).toEqual({ prompt: "x", files: [] });
    expect(history.reads).toBe(0);
  });
});
