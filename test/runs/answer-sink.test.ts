/**
 * Where a run's answer goes, as the thread shows it: edits of the run's message, or Slack's
 * native stream to the person who asked, which hands the answer back to edits of the same
 * message when Slack ends or refuses the stream; the final answer is always an edit, and the
 * "working…" message a stream replaced goes.
 */
import { pino } from "pino";
import { beforeEach, describe, expect, it } from "vitest";
import {
  type AnswerSink,
  openAnswerSink,
  type RunningAnswer,
  type StreamingMode,
} from "../../src/runs/answer/index.ts";
import type { MessagePayload } from "../../src/view/render.ts";
import { FakeSlackWriter } from "../support/fakes/slack-writer.ts";
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

function sink(mode: StreamingMode, extra: { resumed?: boolean; owner?: string } = {}) {
  return openAnswerSink({
    mode,
    writer,
    channelId: "C1",
    threadTs: THREAD,
    initial: [working],
    controlTs: undefined,
    recipient: { userId: "owner" in extra ? extra.owner : "U1", teamId: "T1" },
    resumed: extra.resumed ?? false,
    log: pino({ level: "silent" }),
    onMoved: async () => void moved++,
    reshow: () => void reshown++,
  });
}

/** The running answer as a run hands it over: its text, or its rendering with a status line. */
function answer(text: string): RunningAnswer {
  return { text: () => text, render: () => [payload(`${text}_Working…_`)] };
}

const payload = (text: string): MessagePayload => ({ text, blocks: [] });
const shown = (ts: string | undefined) => writer.messages.find((m) => m.ts === ts);

async function showAndSend(s: AnswerSink, text: string): Promise<void> {
  const sent = s.show(answer(text));
  await writer.flush();
  await sent;
}

describe("the answer sink", () => {
  it("edits the working message in edit mode, and never streams", async () => {
    const s = sink("edit");
    await showAndSend(s, line(1));
    expect(await s.final([payload(`${line(1)}Completed`)])).toBe(true);
    expect(s.ts).toEqual([working]);
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
    const [streamTs] = s.ts;
    expect(streamTs).not.toBe(working);
    expect(s.controlTs).toBe(working);
    expect(moved).toBe(1); // the run records the stream message once
    expect(shown(streamTs)?.payload.text).toBe(line(1) + line(2));

    expect(await s.final([payload(`${line(1)}${line(2)}Completed`)])).toBe(true);
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
    await s.final([payload("done")]);
    expect(writer.steps).toContainEqual({
      id: "step-1",
      title: "read index.html",
      status: "in_progress",
    });
  });

  it("edits a resumed run's messages, and a run whose asker is unknown, even in native mode", async () => {
    for (const s of [sink("native", { resumed: true }), sink("native", { owner: undefined })]) {
      await showAndSend(s, line(1));
      expect(s.ts).toEqual([working]);
    }
    expect(writer.calls).not.toContain("chat.startStream");
  });

  it("goes on by editing the working message when Slack refuses to start a stream", async () => {
    writer.refuseNextStream = "not_allowed_token_type";
    const s = sink("native");
    expect(await s.show(answer(line(1)))).toBe(false);
    await until("the run is asked to show its answer again", () => reshown === 1); // by an edit now
    await showAndSend(s, line(1));
    expect(s.ts).toEqual([working]);
    expect(shown(working)?.payload.text).toBe(`${line(1)}_Working…_`);
    await s.final([payload("done")]);
    await s.removeControl();
    expect(shown(working)?.deleted).toBe(false);
  });

  it("edits the stream message with the whole answer when Slack ends the stream", async () => {
    const s = sink("native");
    await s.show(answer(line(1)));
    const [streamTs = ""] = s.ts;
    writer.endStream(streamTs);
    expect(await s.show(answer(line(1) + line(2)))).toBe(false);
    await until("the run is asked to show its answer again", () => reshown === 1);
    await showAndSend(s, line(1) + line(2) + line(3));
    expect(s.ts).toEqual([streamTs]);
    expect(shown(streamTs)?.payload.text).toBe(`${line(1)}${line(2)}${line(3)}_Working…_`);
    await s.final([payload("all of it")]);
    expect(shown(streamTs)?.payload.text).toBe("all of it");
    expect(writer.calls.filter((c) => c === "chat.startStream")).toHaveLength(1);
  });

  it("stops the stream when the run is handed over, leaving its message to be edited", async () => {
    const s = sink("native");
    await s.show(answer(line(1)));
    await s.leave("handing over");
    expect(writer.streaming(s.ts[0] ?? "")).toBe(false);
    expect(writer.calls.at(-1)).toBe("chat.stopStream");
  });

  it("posts the final answer anew when its message can no longer be edited", async () => {
    const s = sink("edit");
    writer.messages.splice(0); // the working message is gone (deleted in Slack)
    expect(await s.final([payload("the answer")])).toBe(true);
    expect(s.ts).toHaveLength(1);
    expect(s.ts[0]).not.toBe(working);
    expect(shown(s.ts[0])?.payload.text).toBe("the answer");
  });
});
