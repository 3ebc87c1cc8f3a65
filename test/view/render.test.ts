/**
 * What a run looks like in Slack: the answer in `markdown` blocks split across messages
 * Slack accepts, a status line, a Stop button while running, the files of the run, and the
 * prompt echo that opens the thread. Limits are Slack's (50 blocks and about 12,000 characters of
 * markdown per message: Slack's chat.postMessage and Block Kit reference pages).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeStopValue,
  encodeStopValue,
  type FileNote,
  formatDuration,
  MESSAGE_MARKDOWN_LIMIT,
  type MessagePayload,
  type RunView,
  renderContinued,
  renderPrompt,
  renderRun,
  STOP_ACTION_ID,
  USAGE,
} from "../../src/view/render.ts";
import type { RunState } from "../../src/store/types.ts";
import { mrkdwnText, neutralizeMentions } from "../../src/view/sanitize.ts";

const SLACK = {
  blocksPerMessage: 50,
  sectionText: 3_000,
  contextText: 3_000,
  contextElements: 10,
  actionsElements: 25,
  buttonValue: 2_000,
  buttonText: 75,
  actionId: 255,
  blockId: 255,
  markdownPerPayload: 12_000,
  fallbackText: 4_000,
};

type TextObject = { type: string; text: string };
interface Element {
  type: string;
  text?: string | TextObject;
  value?: string;
  action_id?: string;
  style?: string;
}
interface Shape {
  type: string;
  block_id?: string;
  text?: string | TextObject;
  elements?: Element[];
}

const blocksOf = (p: MessagePayload) => p.blocks as unknown as Shape[];
const textOf = (t: string | TextObject | undefined) =>
  typeof t === "string" ? t : (t?.text ?? "");
const markdownOf = (p: MessagePayload) =>
  blocksOf(p)
    .filter((b) => b.type === "markdown")
    .map((b) => textOf(b.text));
const contextsOf = (p: MessagePayload) =>
  blocksOf(p)
    .filter((b) => b.type === "context")
    .flatMap((b) => (b.elements ?? []).map((e) => textOf(e.text)));
const buttonsOf = (p: MessagePayload) =>
  blocksOf(p)
    .filter((b) => b.type === "actions")
    .flatMap((b) => b.elements ?? []);
/** Every string a person (or Slack's mention parser) can see in a payload. */
const visibleTexts = (p: MessagePayload) => [
  p.text,
  ...blocksOf(p).flatMap((b) => [textOf(b.text), ...(b.elements ?? []).map((e) => textOf(e.text))]),
];

/** The problems Slack would refuse a payload for; [] when it is acceptable. */
function slackObjections(p: MessagePayload): string[] {
  const out: string[] = [];
  const blocks = blocksOf(p);
  if (blocks.length > SLACK.blocksPerMessage) out.push(`${blocks.length} blocks`);
  if (p.text.length === 0 || p.text.length > SLACK.fallbackText) out.push(`text ${p.text.length}`);
  const markdown = markdownOf(p);
  const total = markdown.reduce((n, t) => n + t.length, 0);
  if (total > SLACK.markdownPerPayload) out.push(`markdown ${total}`);
  if (markdown.some((t) => t.trim() === "")) out.push("empty markdown block");
  for (const b of blocks) {
    if (b.block_id !== undefined && b.block_id.length > SLACK.blockId) out.push("block_id");
    if (b.type === "section") {
      const n = textOf(b.text).length;
      if (n < 1 || n > SLACK.sectionText) out.push(`section ${n}`);
    }
    if (b.type === "context") {
      if ((b.elements ?? []).length > SLACK.contextElements) out.push("context elements");
      for (const e of b.elements ?? []) {
        const n = textOf(e.text).length;
        if (n < 1 || n > SLACK.contextText) out.push(`context ${n}`);
      }
    }
    if (b.type === "actions") {
      if ((b.elements ?? []).length > SLACK.actionsElements) out.push("actions elements");
      for (const e of b.elements ?? []) {
        if (textOf(e.text).length > SLACK.buttonText) out.push("button text");
        if ((e.value ?? "").length > SLACK.buttonValue) out.push("button value");
        if ((e.action_id ?? "").length > SLACK.actionId) out.push("action_id");
      }
    }
  }
  return out;
}

/** A mention Slack would resolve: <!channel>, <!here>, <@U…>, <#C…>, or a bare @here word. */
const LIVE_MENTION = /<[!@#]|(^|[^\w])@(channel|here|everyone)\b/i;

const noSpace = (s: string) => s.replace(/\s+/g, "");
function isSubsequence(needle: string, hay: string): boolean {
  let j = 0;
  for (let i = 0; i < hay.length && j < needle.length; i++) if (hay[i] === needle[j]) j++;
  return j === needle.length;
}

const run = (over: Partial<RunView>): RunView => ({
  text: "",
  state: "completed",
  elapsedMs: 0,
  ...over,
});
const STOP = encodeStopValue({ channelId: "C0123", threadTs: "1700000000.000100", runId: "run_1" });

describe("renderRun: the answer and its controls", () => {
  it("shows the answer in a Slack markdown block, with a mrkdwn notification", () => {
    const [only, ...more] = renderRun(run({ text: "Hello **world**", elapsedMs: 4_000 }));
    expect(more).toEqual([]);
    expect(only?.blocks[0]).toEqual({ type: "markdown", text: "Hello **world**" });
    // The notification text is mrkdwn: no ** for Slack to show raw.
    expect(only?.text).toBe("Hello *world*");
    expect(contextsOf(only as MessagePayload)).toEqual([":white_check_mark: Completed in 4s"]);
  });

  it("shows a Stop button while running", () => {
    const [p] = renderRun(run({ text: "Thinking", state: "running", stopValue: STOP }));
    const payload = p as MessagePayload;
    expect(contextsOf(payload)).toEqual([":hourglass_flowing_sand: Working… 0s"]);
    const actions = blocksOf(payload).find((b) => b.type === "actions");
    expect(actions?.block_id).toBe("task_controls");
    expect(buttonsOf(payload)).toEqual([
      {
        type: "button",
        action_id: STOP_ACTION_ID,
        text: { type: "plain_text", text: "Stop", emoji: true },
        style: "danger",
        value: STOP,
      },
    ]);
    expect(decodeStopValue(buttonsOf(payload)[0]?.value)).toEqual({
      channelId: "C0123",
      threadTs: "1700000000.000100",
      runId: "run_1",
    });
  });

  it.each<RunState>(["completed", "failed", "stopped", "error"])(
    "takes the Stop button away once the run is %s",
    (state) => {
      for (const p of renderRun(run({ text: "Answer", state, stopValue: STOP }))) {
        expect(buttonsOf(p)).toEqual([]);
      }
    },
  );

  it("shows the agent's steps as its stream does: a plan of the latest five, or the latest in a timeline's status", () => {
    const titles = ["read brief", "plan", "write index.html", "write `style.css`", "test", "fix"];
    const steps = { count: 7, last: "fix", recent: titles.slice(-5) };
    const [plan] = renderRun(run({ state: "running", steps: { ...steps, as: "plan" } }));
    expect(contextsOf(plan as MessagePayload)).toEqual([
      [
        "*Plan* · 7 steps",
        "…and 2 earlier",
        ":white_check_mark: `plan`",
        ":white_check_mark: `write index.html`",
        ":white_check_mark: `write 'style.css'`",
        ":white_check_mark: `test`",
        ":hourglass_flowing_sand: `fix`",
      ].join("\n"),
      ":hourglass_flowing_sand: Working… 0s",
    ]);
    const [timeline] = renderRun(run({ state: "running", steps: { ...steps, as: "timeline" } }));
    expect(contextsOf(timeline as MessagePayload)).toEqual([
      ":hourglass_flowing_sand: Working… 0s · step 7: `fix`",
    ]);
    // Once the run ended, neither shows.
    const [done] = renderRun(
      run({ text: "x", state: "completed", steps: { ...steps, as: "plan" } }),
    );
    expect(contextsOf(done as MessagePayload)).toEqual([":white_check_mark: Completed in 0s"]);
  });

  it("shows no Stop button when there is nothing to stop", () => {
    expect(buttonsOf(renderRun(run({ text: "x", state: "running" }))[0] as MessagePayload)).toEqual(
      [],
    );
  });

  it("says it is working before the first words arrive", () => {
    const [p] = renderRun(run({ state: "running", elapsedMs: 2_400, stopValue: STOP }));
    expect(markdownOf(p as MessagePayload)).toEqual(["_Working on it…_"]);
    expect(p?.text).toBe("Working… 2s");
    expect(buttonsOf(p as MessagePayload)).toHaveLength(1);
  });

  it("says when a task finished without a text answer", () => {
    const [p] = renderRun(run({ text: "  \n ", elapsedMs: 65_000 }));
    expect(markdownOf(p as MessagePayload)).toEqual(["_The task finished without a text answer._"]);
    expect(p?.text).toBe("Completed in 1m 05s");
  });

  it("shows only the files when a task answered with files and no text", () => {
    const [p] = renderRun(run({ files: [{ name: "site.zip", size: 2048, attached: true }] }));
    expect(markdownOf(p as MessagePayload)).toEqual([]);
    expect(blocksOf(p as MessagePayload).map((b) => b.type)).toEqual(["section", "context"]);
  });

  it("tells why a run failed, who stopped it, and what went wrong", () => {
    const status = (v: Partial<RunView>) =>
      contextsOf(renderRun(run({ text: "Partial answer", ...v })).at(-1) as MessagePayload);
    expect(
      status({ state: "failed", elapsedMs: 3_000, reason: "build <failed> & exited" }),
    ).toEqual([":x: Failed after 3s: build &lt;failed&gt; &amp; exited"]);
    expect(status({ state: "failed", elapsedMs: 3_000 })).toEqual([":x: Failed after 3s"]);
    expect(status({ state: "stopped", elapsedMs: 12_000, stoppedBy: "U024BE7LH" })).toEqual([
      ":black_square_for_stop: Stopped by <@U024BE7LH> after 12s",
    ]);
    expect(status({ state: "stopped", elapsedMs: 12_000 })).toEqual([
      ":black_square_for_stop: Stopped after 12s",
    ]);
    expect(status({ state: "error", reason: "The task service could not be reached." })).toEqual([
      ":warning: The task service could not be reached.",
    ]);
    expect(status({ state: "error" })).toEqual([":warning: Something went wrong."]);
  });

  it("uses the reason as the notification when a task could not start", () => {
    const [p] = renderRun(run({ state: "error", reason: "The task service is out of credits." }));
    expect(p?.text).toBe("The task service is out of credits.");
    expect(markdownOf(p as MessagePayload)).toEqual([]);
  });

  it("says something in every notification and status when the answer or reason converts to nothing (found by property testing)", () => {
    // A blank reason, or a heading with no words, is no text in mrkdwn.
    for (const reason of [" ", "#", "## \n#"]) {
      const [p] = renderRun(run({ state: "error", reason }));
      expect(p?.text).toBe("Something went wrong.");
      expect(JSON.stringify(p?.blocks)).toContain(":warning: Something went wrong.");
      expect(renderRun(run({ state: "failed", reason }))[0]?.text).toBe("Failed after 0s");
    }
    const [answer] = renderRun(run({ text: "#", state: "completed" }));
    expect(answer?.text).toBe("Completed in 0s");
  });

  it("repairs a half-streamed answer while running, and shows the final answer verbatim", () => {
    const half = "Here:\n```ts\nconst a = 1;";
    expect(
      markdownOf(renderRun(run({ text: half, state: "running" }))[0] as MessagePayload),
    ).toEqual([`${half}\n\`\`\``]);
    expect(
      markdownOf(renderRun(run({ text: "So **bo", state: "running" }))[0] as MessagePayload),
    ).toEqual(["So bo"]);
    expect(markdownOf(renderRun(run({ text: half }))[0] as MessagePayload)).toEqual([half]);
  });

  it("shows a short remark under the answer", () => {
    const [p] = renderRun(
      run({ text: "Done", remark: "2 attachments were not sent: <too big> & late" }),
    );
    expect(contextsOf(p as MessagePayload)[0]).toBe(
      "2 attachments were not sent: &lt;too big&gt; &amp; late",
    );
  });

  it("splits a 60,000-character answer into messages Slack accepts; the last one has status and Stop", () => {
    const answer = Array.from(
      { length: 400 },
      (_, i) => `${i}. ${"A sentence of the answer. ".repeat(6).trim()}`,
    ).join("\n\n");
    expect(answer.length).toBeGreaterThan(60_000);
    const payloads = renderRun(run({ text: answer, state: "running", stopValue: STOP }));
    expect(payloads.length).toBeGreaterThanOrEqual(7);
    for (const [i, p] of payloads.entries()) {
      expect(slackObjections(p)).toEqual([]);
      expect(markdownOf(p)[0]?.length).toBeLessThanOrEqual(MESSAGE_MARKDOWN_LIMIT);
      const last = i === payloads.length - 1;
      expect(blocksOf(p).map((b) => b.type)).toEqual(
        last ? ["markdown", "context", "actions"] : ["markdown"],
      );
      if (i > 0) expect(p.text.startsWith("(continued) ")).toBe(true);
      expect(p.text.length).toBeLessThanOrEqual(312);
    }
    expect(markdownOf(payloads.at(-1) as MessagePayload)[0]).toMatch(/^\d+\. A sentence/);
    expect(payloads.flatMap(markdownOf).join("\n\n")).toBe(answer);
  });

  it("honours a smaller per-message limit", () => {
    const payloads = renderRun(run({ text: "word ".repeat(2_000) }), 1_000);
    for (const p of payloads) expect(markdownOf(p)[0]?.length).toBeLessThanOrEqual(1_000);
  });
});

describe("renderRun: files of a run", () => {
  it("lists attached files with their size, and says why the others were not attached", () => {
    const files: FileNote[] = [
      { name: "report.pdf", size: 1024, attached: true },
      {
        name: "video.mp4",
        size: 80 * 1024 * 1024,
        attached: false,
        reason: "too large to attach here",
        url: "https://files.example.com/v?a=1|b>c",
      },
      { name: "notes.txt", size: undefined, attached: false, url: "http://insecure.example/n" },
    ];
    const [p] = renderRun(run({ text: "Done", files }));
    const section = blocksOf(p as MessagePayload).find((b) => b.type === "section");
    expect(textOf(section?.text)).toBe(
      [
        "*Files*",
        "• `report.pdf` (1.0 KB): attached below",
        "• `video.mp4` (80.0 MB): too large to attach here <https://files.example.com/v?a=1%7Cb%3Ec|download>",
        "• `notes.txt`: not attached",
      ].join("\n"),
    );
    // The file list sits between the answer and the status.
    expect(blocksOf(p as MessagePayload).map((b) => b.type)).toEqual([
      "markdown",
      "section",
      "context",
    ]);
  });

  it("keeps a download link from carrying a mention (found by fuzzing)", () => {
    const files: FileNote[] = [
      { name: "a.txt", size: 1, attached: false, url: "https://files.example/<!channel>|x>" },
    ];
    const [p] = renderRun(run({ text: "Done", files }));
    const section = blocksOf(p as MessagePayload).find((b) => b.type === "section");
    expect(textOf(section?.text)).toContain(
      "<https://files.example/%3C!channel%3E%7Cx%3E|download>",
    );
  });

  it("shows at most 20 files and counts the rest", () => {
    const files = Array.from({ length: 27 }, (_, i) => ({
      name: `f${i}.txt`,
      size: i,
      attached: true,
    }));
    const section = blocksOf(renderRun(run({ files }))[0] as MessagePayload)[0];
    const lines = textOf(section?.text).split("\n");
    expect(lines).toHaveLength(1 + 20 + 1);
    expect(lines.at(-1)).toBe("…and 7 more");
  });

  it("escapes file names so they cannot break out of their code span or ping anyone", () => {
    const [p] = renderRun(
      run({ files: [{ name: "<!channel> `x` & y.txt", size: 1, attached: true }] }),
    );
    const text = textOf(blocksOf(p as MessagePayload)[0]?.text);
    expect(text).toContain("`&lt;!channel&gt; 'x' &amp; y.txt` (1 B)");
    expect(text).not.toMatch(LIVE_MENTION);
  });

  it("keeps a long file list within a section's 3,000 characters", () => {
    const files = Array.from({ length: 20 }, (_, i) => ({
      name: `${"n".repeat(300)}${i}`,
      size: 1,
      attached: false,
      reason: "r".repeat(400),
    }));
    expect(slackObjections(renderRun(run({ files }))[0] as MessagePayload)).toEqual([]);
  });
});

describe("renderRun: model output never pings anyone", () => {
  const forms = [
    "<!channel>",
    "<!here>",
    "<!everyone>",
    "<!subteam^S0614TZR7|@team>",
    "<@U024BE7LH>",
    "<@W0123ABC>",
    "<#C024BE7LR|general>",
    "@channel",
    "@here",
    "@everyone",
    "@Channel",
  ];

  it.each(forms)("never pings from %s in the answer", (form) => {
    for (const state of ["running", "completed"] as const) {
      for (const p of renderRun(run({ text: `Hey ${form}, done.\n\n${form}`, state }))) {
        for (const t of visibleTexts(p)) expect(t).not.toMatch(LIVE_MENTION);
        expect(markdownOf(p)[0]?.replace(/\u200B/g, "")).toBe(`Hey ${form}, done.\n\n${form}`);
      }
    }
  });

  it("never pings when a half-streamed marker sits inside a mention", () => {
    // Repair drops the unpaired ` or ** while streaming; it must not leave a live mention.
    for (const text of ["Ping <`!channel> now", "<**!here>", "a <~~@U024BE7LH> b", "@**everyone"]) {
      for (const p of renderRun(run({ text, state: "running" }))) {
        for (const t of visibleTexts(p)) expect(t).not.toMatch(LIVE_MENTION);
      }
    }
  });

  it("never pings from a failure reason, a remark or an error", () => {
    for (const state of ["failed", "error"] as const) {
      const payloads = renderRun(
        run({ state, reason: "<!channel> says @here", remark: "<@U024BE7LH> <!everyone>" }),
      );
      for (const p of payloads)
        for (const t of visibleTexts(p)) expect(t).not.toMatch(LIVE_MENTION);
    }
  });

  it("keeps a status line full of < and & within a context block's 3,000 characters", () => {
    for (const state of ["failed", "error"] as const) {
      for (const reason of ["<".repeat(5_000), "&".repeat(5_000), "@here ".repeat(900)]) {
        for (const text of ["", "Partial answer"]) {
          for (const p of renderRun(run({ text, state, reason }))) {
            expect(slackObjections(p)).toEqual([]);
          }
        }
      }
    }
  });
});

describe("renderRun: every payload is one Slack accepts (property)", () => {
  const word = fc.constantFrom(
    "answer",
    "**bold**",
    "**",
    "`",
    "~~",
    "__",
    "`code`",
    "[link](https://example.com",
    "😀",
    "👨‍👩‍👧",
    "<!channel>",
    "<!here>",
    "<!everyone>",
    "<@U024BE7LH>",
    "<#C024BE7LR>",
    "@channel",
    "@here",
    "<",
    "!",
    "@",
    "&",
    ">",
    "!channel>",
    "@U024BE7LH>",
    "here",
  );
  const line = fc
    .tuple(fc.array(word, { minLength: 1, maxLength: 30 }), fc.constantFrom(" ", ""))
    .map(([ws, sep]) => ws.join(sep));
  const block = fc.oneof(
    {
      weight: 5,
      arbitrary: fc.array(line, { minLength: 1, maxLength: 5 }).map((l) => l.join("\n")),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom("```", "```ts", "~~~py", "````md"),
          fc.array(line, { maxLength: 200 }),
        )
        .map(([open, code]) => `${open}\n${code.join("\n")}\n${open.replace(/[a-z]+$/, "")}`),
    },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 14_000 }).map((n) => "y".repeat(n)) },
  );
  const answer = fc
    .tuple(fc.array(block, { maxLength: 16 }), fc.boolean())
    .map(([blocks, crlf]) => {
      const text = blocks.join("\n\n");
      return crlf ? text.replace(/\n/g, "\r\n") : text;
    });
  const userId = fc.stringMatching(/^[UW][A-Z0-9]{8,10}$/);
  const note = fc.oneof(
    fc.string({ maxLength: 4_000 }),
    fc.array(word, { maxLength: 1_000 }).map((ws) => ws.join("")),
  );
  const file = fc.record({
    name: fc.string({ minLength: 1, maxLength: 300 }),
    size: fc.option(fc.nat({ max: 300 * 1024 * 1024 }), { nil: undefined }),
    attached: fc.boolean(),
    reason: fc.option(fc.string({ maxLength: 500 }), { nil: undefined }),
    url: fc.option(fc.webUrl(), { nil: undefined }),
  });
  const view = fc.record({
    text: answer,
    state: fc.constantFrom<RunState>("running", "completed", "failed", "stopped", "error"),
    elapsedMs: fc.nat({ max: 10 * 3_600_000 }),
    stoppedBy: fc.option(userId, { nil: undefined }),
    reason: fc.option(
      fc.oneof(
        fc.string({ minLength: 1, maxLength: 3_000 }),
        fc.array(word, { minLength: 1, maxLength: 1_500 }).map((ws) => ws.join("")),
      ),
      { nil: undefined },
    ),
    stopValue: fc.option(
      fc
        .record({
          channelId: fc.stringMatching(/^[CDG][A-Z0-9]{8,10}$/),
          threadTs: fc.stringMatching(/^\d{10}\.\d{6}$/),
          runId: fc.uuid(),
        })
        .map(encodeStopValue),
      { nil: undefined },
    ),
    files: fc.option(fc.array(file, { maxLength: 30 }), { nil: undefined }),
    remark: fc.option(note, { nil: undefined }),
  });

  it("never exceeds Slack's limits, keeps the whole answer and never pings", () => {
    fc.assert(
      fc.property(view, (v) => {
        const payloads = renderRun(v);
        expect(payloads.length).toBeGreaterThan(0);
        for (const p of payloads) {
          expect(slackObjections(p)).toEqual([]);
          const own = v.state === "stopped" && v.stoppedBy ? `<@${v.stoppedBy}>` : "\0";
          for (const t of visibleTexts(p)) {
            expect(
              t
                .split(own)
                .join("")
                .replace(/<https:[^>]*>/g, ""),
            ).not.toMatch(LIVE_MENTION);
          }
        }
        // Only the last message has status and controls.
        for (const p of payloads.slice(0, -1)) {
          expect(blocksOf(p).map((b) => b.type)).toEqual(["markdown"]);
        }
        // The answer is all there (while running: every line that is complete).
        const shown = noSpace(payloads.flatMap(markdownOf).join(""));
        const expected =
          v.state === "running" ? v.text.slice(0, v.text.lastIndexOf("\n") + 1) : v.text;
        expect(isSubsequence(noSpace(neutralizeMentions(expected)), shown)).toBe(true);
      }),
      { numRuns: 120 },
    );
  });
});

describe("Stop button value", () => {
  it("round-trips the channel, thread and run", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (channelId, threadTs, runId) => {
        const ref = { channelId, threadTs, runId };
        expect(decodeStopValue(encodeStopValue(ref))).toEqual(ref);
      }),
      { numRuns: 200 },
    );
  });

  it("fits in a button value for real ids", () => {
    const value = encodeStopValue({
      channelId: "C0123456789AB",
      threadTs: "1700000000.123456",
      runId: "0f8fad5b-d9cb-469f-a165-70867728950e",
    });
    expect(value.length).toBeLessThan(SLACK.buttonValue);
  });

  it.each([
    undefined,
    "",
    "stop",
    "{",
    "null",
    "42",
    '"C0123"',
    "[]",
    "{}",
    '{"c":"C1","t":"1.2"}',
    '{"c":1,"t":"1.2","r":"run"}',
    '{"c":"C1","t":null,"r":"run"}',
  ])("rejects %j", (value) => {
    expect(decodeStopValue(value)).toBeUndefined();
  });
});

describe("formatDuration", () => {
  it.each([
    [0, "0s"],
    [-5_000, "0s"],
    [499, "0s"],
    [500, "1s"],
    [1_000, "1s"],
    [59_000, "59s"],
    [59_499, "59s"],
    [59_500, "1m 00s"],
    [61_000, "1m 01s"],
    [65_000, "1m 05s"],
    [3_599_000, "59m 59s"],
    [3_600_000, "1h 00m"],
    [3_661_000, "1h 01m"],
    [7_325_000, "2h 02m"],
    [90_061_000, "25h 01m"],
  ])("%i ms reads %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe("mrkdwnText", () => {
  it("escapes &, < and > and breaks mentions", () => {
    expect(mrkdwnText("a & b <c> <!here> @channel")).toBe(
      "a &amp; b &lt;c&gt; &lt;!here&gt; @\u200Bchannel",
    );
  });
});

describe("renderPrompt: the message that opens a task thread", () => {
  it("says who asked and quotes every line of the prompt", () => {
    const p = renderPrompt("U024BE7LH", "Build a landing page\nwith a form");
    expect(p.blocks).toEqual([
      { type: "section", text: { type: "mrkdwn", text: "<@U024BE7LH> asked the task agent:" } },
      { type: "markdown", text: "> Build a landing page\n> with a form" },
    ]);
    expect(p.text).toBe("<@U024BE7LH> asked: Build a landing page\nwith a form");
  });

  it.each([
    "<!channel>",
    "<!here>",
    "<!everyone>",
    "<!subteam^S0614TZR7>",
    "<@U0SOMEONE>",
    "<#C024BE7LR>",
    "@channel",
    "@here",
    "@everyone",
  ])("never pings from %s in the prompt echo", (form) => {
    const p = renderPrompt("U024BE7LH", `please tell ${form} about it\n${form}`);
    for (const t of visibleTexts(p)) {
      expect(t.replace("<@U024BE7LH>", "")).not.toMatch(LIVE_MENTION);
    }
    expect(markdownOf(p)[0]?.replace(/\u200B/g, "")).toBe(
      `> please tell ${form} about it\n> ${form}`,
    );
  });

  it("keeps the notification short for a long prompt", () => {
    const p = renderPrompt("U1", "x".repeat(5_000));
    expect(p.text.length).toBeLessThanOrEqual("<@U1> asked: ".length + 300);
    expect(slackObjections(p)).toEqual([]);
  });
});

describe("USAGE", () => {
  it("explains the command, threads and Stop", () => {
    expect(USAGE).toContain("/task");
    expect(USAGE).toContain("thread");
    expect(USAGE).toContain("*Stop*");
  });
});

describe("renderContinued: a follow-up from the Continue form, in its thread", () => {
  it("says who continued, quotes what they asked, and names the files", () => {
    const p = renderContinued("U024BE7LH", "Make it blue\n<!channel> too", ["a&b.png"]);
    expect(p.text).toBe(
      "<@U024BE7LH> continued the task:\n> Make it blue\n> &lt;!channel&gt; too\n:paperclip: a&amp;b.png",
    );
    expect(p.blocks).toEqual([{ type: "section", text: { type: "mrkdwn", text: p.text } }]);
  });

  it("cuts a long follow-up to a section's 3,000 characters with …, never inside an emoji", () => {
    // Found by fuzzing: the 3,000th character could be the first half of an emoji.
    const p = renderContinued("U024BE7LH", `:${"😀".repeat(2000)}`, []);
    expect(p.text.startsWith(`<@U024BE7LH> continued the task:\n> :${"😀".repeat(1000)}`)).toBe(
      true,
    );
    expect(p.text.length).toBeLessThanOrEqual(3000);
    expect(p.text.endsWith("…")).toBe(true);
    expect(p.text.isWellFormed()).toBe(true);
  });
});
