/**
 * Where a run's answer goes, as the thread shows it: edits of the run's message, or Slack's
 * native stream to the person who asked, which hands the answer back to edits of the same
 * message when Slack ends or refuses the stream; the final answer is always an edit, and the
 * "working…" message a stream replaced goes.
 */
import { pino } from "pino";
import { beforeEach, describe, expect, it } from "vitest";
import { openAnswerSink, type StreamingMode } from "../../src/runs/answer/index.ts";
import type {
  AnswerPlace,
  AnswerSink,
  FinalAnswer,
  RunningAnswer,
} from "../../src/runs/answer/sink.ts";
import { type Clock, systemClock } from "../../src/util/clock.ts";
import type { MessagePayload } from "../../src/view/render.ts";
import { FakeSlackWriter } from "../support/fakes/slack-writer.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { until } from "../support/until.ts";

const THREAD = "1700000000.000001";
const line = (n: number) => `Line ${n} of the answer.\n`;
let writer: FakeSlackWriter;
let working: string;
let moved: number;
let reshown: number;

beforeEach(async () => {
  writer = new FakeSlackWriter({ edits: "scheduled" });
  working = await writer.post("C1", { text: "Working…", blocks: [] }, THREAD);
  moved = 0;
  reshown = 0;
});

interface Extra {
  readonly resumed?: boolean;
  readonly owner?: string | undefined;
  readonly initial?: AnswerPlace;
  readonly clock?: Clock;
  readonly rotateMs?: number;
}

function sink(mode: StreamingMode, extra: Extra = {}) {
  return openAnswerSink({
    mode,
    writer,
    channelId: "C1",
    threadTs: THREAD,
    initial: extra.initial ?? { messageTs: [working] },
    recipient: { userId: "owner" in extra ? extra.owner : "U1", teamId: "T1" },
    resumed: extra.resumed ?? false,
    log: pino({ level: "silent" }),
    clock: extra.clock ?? systemClock,
    rotateMs: extra.rotateMs,
    onMoved: async () => void moved++,
    reshow: () => void reshown++,
  });
}

/** The running answer as a run hands it over: its text, or its rendering with a status line. */
function answer(text: string): RunningAnswer {
  return { text: () => text, render: (from) => [payload(`${text.slice(from)}_Working…_`)] };
}

/** The final answer, with its status line. */
function done(text: string, status = "Completed"): FinalAnswer {
  return { text, render: (from) => [payload(`${text.slice(from)}${status}`)] };
}

const payload = (text: string): MessagePayload => ({ text, blocks: [] });
const shown = (ts: string | undefined) => writer.messages.find((m) => m.ts === ts);

/** Shows the answer and sends the edit it queued, as a budget refill would. */
async function showAndSend(s: AnswerSink, text: string): Promise<void> {
  let sent = false;
  const showing = s.show(answer(text)).then(() => (sent = true));
  await until("the edit is sent", async () => {
    await writer.flush();
    return sent;
  });
  await showing;
}

describe("the answer sink", () => {
  it("edits the working message in edit mode, and never streams", async () => {
    const s = sink("edit");
    await showAndSend(s, line(1));
    expect(await s.final(done(line(1)))).toBe(true);
    expect(s.place.messageTs).toEqual([working]);
    expect(shown(working)?.payload.text).toBe(`${line(1)}Completed`);
    expect(writer.calls.filter((c) => c.startsWith("chat."))).toEqual([
      "chat.postMessage",
      "chat.update",
      "chat.update",
    ]);
  });

  it("streams to the asker in native mode: the stream message takes over from the working message, which goes at the end", async () => {
    const s = sink("native");
    expect(await s.show(answer(line(1)))).toBe(true);
    expect(await s.show(answer(line(1) + line(2)))).toBe(true);
    const [streamTs] = s.place.messageTs;
    expect(streamTs).not.toBe(working);
    expect(s.place.controlTs).toBe(working);
    expect(moved).toBe(1); // the run records the stream message once
    expect(shown(streamTs)?.payload.text).toBe(line(1) + line(2));

    expect(await s.final(done(line(1) + line(2)))).toBe(true);
    await s.removeControl();
    expect(writer.calls).toEqual([
      "chat.postMessage",
      "chat.startStream",
      "chat.appendStream",
      "chat.stopStream",
      "chat.update",
    ]);
    expect(shown(streamTs)?.payload.text).toBe(`${line(1)}${line(2)}Completed`);
    expect(shown(working)?.deleted).toBe(true);
  });

  it("shows the agent's steps in the stream as a plan", async () => {
    const s = sink("native");
    await s.show(answer(line(1)));
    s.step("read index.html");
    await s.show(answer(line(1) + line(2)));
    await s.final(done(""));
    expect(writer.steps).toContainEqual({
      id: "step-1",
      title: "read index.html",
      status: "in_progress",
    });
  });

  it("edits a resumed run's messages, and a run whose asker is unknown, even in native mode", async () => {
    for (const s of [sink("native", { resumed: true }), sink("native", { owner: undefined })]) {
      await showAndSend(s, line(1));
      expect(s.place.messageTs).toEqual([working]);
    }
    expect(writer.calls).not.toContain("chat.startStream");
  });

  it("goes on by editing the working message when Slack refuses to start a stream", async () => {
    writer.refuseNextStream = "not_allowed_token_type";
    const s = sink("native");
    expect(await s.show(answer(line(1)))).toBe(false);
    await until("the run is asked to show its answer again", () => reshown === 1); // by an edit now
    await showAndSend(s, line(1));
    expect(s.place.messageTs).toEqual([working]);
    expect(shown(working)?.payload.text).toBe(`${line(1)}_Working…_`);
    await s.final(done(""));
    await s.removeControl();
    expect(shown(working)?.deleted).toBe(false);
  });

  it("edits the stream message with the whole answer when Slack ends the stream", async () => {
    const s = sink("native");
    await s.show(answer(line(1)));
    const [streamTs = ""] = s.place.messageTs;
    writer.endStream(streamTs);
    expect(await s.show(answer(line(1) + line(2)))).toBe(false);
    await until("the run is asked to show its answer again", () => reshown === 1);
    await showAndSend(s, line(1) + line(2) + line(3));
    expect(s.place.messageTs).toEqual([streamTs]);
    expect(shown(streamTs)?.payload.text).toBe(`${line(1)}${line(2)}${line(3)}_Working…_`);
    await s.final(done("all of it", ""));
    expect(shown(streamTs)?.payload.text).toBe("all of it");
    expect(writer.calls.filter((c) => c === "chat.startStream")).toHaveLength(1);
  });

  it("stops the stream when the run is handed over, leaving its message to be edited", async () => {
    const s = sink("native");
    await s.show(answer(line(1)));
    await s.leave("handing over");
    expect(writer.streaming(s.place.messageTs[0] ?? "")).toBe(false);
    expect(writer.calls.at(-1)).toBe("chat.stopStream");
  });

  it("posts the final answer anew when its message can no longer be edited", async () => {
    const s = sink("edit");
    writer.messages.splice(0); // the working message is gone (deleted in Slack)
    expect(await s.final(done("the answer", ""))).toBe(true);
    expect(s.place.messageTs).toHaveLength(1);
    expect(s.place.messageTs[0]).not.toBe(working);
    expect(shown(s.place.messageTs[0])?.payload.text).toBe("the answer");
  });
});

describe("the answer sink in auto mode", () => {
  it("streams natively when the stream budget lets a stream start at once", async () => {
    writer.allowStreams(1);
    const s = sink("auto");
    expect(await s.show(answer(line(1)))).toBe(true);
    expect(s.place.messageTs).not.toEqual([working]);
    expect(writer.calls).toContain("chat.startStream");
  });

  it("edits the working message when the stream budget has no start free now", async () => {
    writer.allowStreams(0);
    const s = sink("auto");
    expect(await s.show(answer(line(1)))).toBe(false);
    await until("the run is asked to show its answer again", () => reshown === 1);
    await showAndSend(s, line(1));
    expect(s.place.messageTs).toEqual([working]);
    expect(shown(working)?.payload.text).toBe(`${line(1)}_Working…_`);
    expect(writer.calls).not.toContain("chat.startStream");
  });

  it("edits when the writer knows no stream budget", async () => {
    const s = sink("auto");
    await showAndSend(s, line(1));
    expect(s.place.messageTs).toEqual([working]);
    expect(writer.calls).not.toContain("chat.startStream");
  });
});

describe("a native stream past its rotation time", () => {
  const settle = async () => undefined;

  it("goes on in a new stream message, the one before sealed with its part, then ends in the last", async () => {
    const clock = new FakeClock();
    writer.allowStreams(5);
    const s = sink("auto", { clock, rotateMs: 1000 });
    await s.show(answer(line(1)));
    const [first = ""] = s.place.messageTs;
    await clock.advance(1000, settle);
    await s.show(answer(line(1) + line(2)));
    const [, second = ""] = s.place.messageTs;
    expect(s.place).toEqual({
      messageTs: [first, second],
      controlTs: working,
      sealed: { messages: 1, chars: line(1).length },
    });
    expect(moved).toBe(2);
    await until("the first stream is stopped", () => !writer.streaming(first));
    expect(shown(first)?.payload.text).toBe(line(1));
    expect(shown(second)?.payload.text).toBe(line(2));

    await s.show(answer(line(1) + line(2) + line(3)));
    expect(await s.final(done(line(1) + line(2) + line(3) + line(4)))).toBe(true);
    // The sealed part is left as it is; the last message ends with the rest and the status.
    expect(shown(first)?.payload.text).toBe(line(1));
    expect(shown(second)?.payload.text).toBe(`${line(2)}${line(3)}${line(4)}Completed`);
    expect(writer.calls.filter((c) => c === "chat.startStream")).toHaveLength(2);
    expect(writer.calls.filter((c) => c === "chat.stopStream")).toHaveLength(2);
  });

  it("keeps streaming into the same message while no new stream can start", async () => {
    const clock = new FakeClock();
    writer.allowStreams(1);
    const s = sink("auto", { clock, rotateMs: 1000 });
    await s.show(answer(line(1)));
    await clock.advance(1000, settle);
    expect(await s.show(answer(line(1) + line(2)))).toBe(true);
    expect(s.place.messageTs).toHaveLength(1);
    expect(shown(s.place.messageTs[0])?.payload.text).toBe(line(1) + line(2));
    expect(reshown).toBe(0);
  });

  it("is continued after a crash by editing only the part after the sealed ones", async () => {
    const first = await writer.post("C1", payload(line(1)), THREAD);
    // The run's owner died while it streamed into its second message.
    const second = await writer.startStream("C1", THREAD, { userId: "U1", teamId: "T1" }, line(2));
    const s = sink("auto", {
      resumed: true,
      initial: {
        messageTs: [first, second],
        controlTs: working,
        sealed: { messages: 1, chars: line(1).length },
      },
    });
    await showAndSend(s, line(1) + line(2) + line(3));
    // The stream is stopped before the message is edited.
    expect(writer.streaming(second)).toBe(false);
    expect(writer.calls.slice(-2)).toEqual(["chat.stopStream", "chat.update"]);
    expect(shown(first)?.payload.text).toBe(line(1));
    expect(shown(second)?.payload.text).toBe(`${line(2)}${line(3)}_Working…_`);
    await s.final(done(line(1) + line(2) + line(3)));
    await s.removeControl();
    expect(shown(second)?.payload.text).toBe(`${line(2)}${line(3)}Completed`);
    expect(shown(working)?.deleted).toBe(true);
    expect(writer.calls.filter((c) => c === "chat.startStream")).toHaveLength(1); // the dead owner's
  });
});

describe("the end of a native stream", () => {
  it("adds the status below the streamed answer with its stop, without an edit", async () => {
    const s = sink("native");
    await s.show(answer(line(1)));
    const [streamTs] = s.place.messageTs;
    const status = {
      type: "context" as const,
      elements: [{ type: "mrkdwn" as const, text: "Completed" }],
    };
    const final: FinalAnswer = {
      text: line(1) + line(2),
      render: (from) => [
        {
          text: "Completed",
          blocks: [{ type: "markdown", text: (line(1) + line(2)).slice(from) }, status],
          metadata: { event_type: "task_completed", event_payload: {} },
        },
      ],
    };
    expect(await s.final(final)).toBe(true);
    expect(writer.calls).toEqual([
      "chat.postMessage",
      "chat.startStream",
      "chat.appendStream",
      "chat.stopStream",
    ]);
    expect(shown(streamTs)?.payload).toMatchObject({
      text: line(1) + line(2),
      blocks: [status],
      metadata: { event_type: "task_completed" },
    });
  });

  it("appends the rest of the final answer at once, before its stop waits for the budget", async () => {
    let release = () => {};
    writer.stopsWaitFor = new Promise<void>((r) => (release = r));
    const s = sink("native");
    await s.show(answer(line(1)));
    const [streamTs] = s.place.messageTs;
    const ending = s.final(done(`${line(1)}The last words`));
    await until("the last words show", () =>
      Boolean(shown(streamTs)?.payload.text.includes("The last words")),
    );
    expect(writer.calls).not.toContain("chat.stopStream");
    release();
    expect(await ending).toBe(true);
    expect(writer.calls.slice(-2)).toEqual(["chat.stopStream", "chat.update"]);
    expect(shown(streamTs)?.payload.text).toBe(`${line(1)}The last wordsCompleted`);
  });

  it("spends no stop on a stream its reader stopped, and goes on by editing it", async () => {
    const s = sink("native");
    await s.show(answer(line(1)));
    const [streamTs = ""] = s.place.messageTs;
    writer.endStream(streamTs, "stopped_by_user");
    expect(await s.show(answer(line(1) + line(2)))).toBe(false);
    await until("the run is asked to show its answer again", () => reshown === 1);
    await showAndSend(s, line(1) + line(2));
    expect(shown(streamTs)?.payload.text).toBe(`${line(1)}${line(2)}_Working…_`);
    await s.final(done(line(1) + line(2)));
    expect(writer.calls).not.toContain("chat.stopStream");
  });
});
