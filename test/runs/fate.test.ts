/**
 * A run's fate in this process: one state, moved only by its named transitions (Stop, a
 * refused Stop, shutdown or a lost lease, the workspace uninstalled).
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { personStop, type StopRequest } from "../../src/store/types.ts";
import { awaitStopAnswer, RunFate, STOP_ANSWER_MS } from "../../src/runs/fate.ts";
import { FakeClock } from "../support/fake-clock.ts";

describe("a run's fate", () => {
  it("runs until someone stops it, then says who and why", () => {
    const fate = new RunFate();
    expect(fate.now).toEqual({ kind: "running" });
    expect(fate.stop(personStop("U1"))).toBe(true);
    expect(fate.now).toEqual({ kind: "stopping", stop: personStop("U1") });
    expect(fate.stopHeld).toEqual(personStop("U1"));
    // A second Stop changes nothing: the first one is shown.
    expect(fate.stop(personStop("U2"))).toBe(false);
    expect(fate.stopHeld).toEqual(personStop("U1"));
  });

  it("is stopped by the app itself (its maximum run time) with a reason and nobody named", () => {
    const fate = new RunFate();
    expect(fate.stop({ kind: "app", reason: "it reached the maximum run time of 4h" })).toBe(true);
    expect(fate.stopping).toBe(true);
    expect(fate.stopHeld?.kind).toBe("app");
    expect(fate.now).toEqual({
      kind: "stopping",
      stop: { kind: "app", reason: "it reached the maximum run time of 4h" },
    });
  });

  it("goes on running when the service refuses the stop, and may be stopped again", () => {
    const fate = new RunFate();
    fate.stop(personStop("U1"));
    fate.refused();
    expect(fate.now).toEqual({ kind: "running" });
    expect(fate.stop(personStop("U2"))).toBe(true);
    expect(fate.stopHeld).toEqual(personStop("U2"));
  });

  it("is handed over on shutdown, and stops following the service at once", () => {
    const fate = new RunFate();
    fate.handOver("handing over");
    expect(fate.now).toEqual({ kind: "handingOver" });
    expect(fate.signal.aborted).toBe(true);
  });

  it("waits for the service's answer to a Stop when following is cut, and no longer than its bound", async () => {
    const clock = new FakeClock();
    const asked: (string | StopRequest)[] = [];
    const deps = {
      clock,
      store: {
        requestStop: async (runId: string, by: StopRequest) => void asked.push(runId, by),
      },
      log: pino({ level: "silent" }),
      runId: "run_1",
    };
    // Answered (taken): it stays stopping, and ends here as stopped.
    const taken = new RunFate();
    taken.stop(personStop("U1"));
    taken.asking(Promise.resolve());
    await awaitStopAnswer(taken, deps);
    expect(taken.now.kind).toBe("stopping");
    // No answer: handed over once the bound has passed, with who pressed Stop recorded.
    const silent = new RunFate();
    silent.stop(personStop("U1"));
    silent.handOver("handing over");
    silent.asking(new Promise(() => undefined));
    const waiting = awaitStopAnswer(silent, deps);
    await clock.advance(STOP_ANSWER_MS - 1, async () => undefined);
    expect(silent.now.kind).toBe("stoppingHandingOver");
    await clock.advance(1, async () => undefined);
    await waiting;
    expect(silent.now).toEqual({ kind: "handingOver" });
    expect(asked).toEqual(["run_1", personStop("U1")]);
    // Forgotten meanwhile: it waits no more, and stays forgotten.
    const gone = new RunFate();
    gone.stop(personStop("U1"));
    gone.asking(new Promise(() => undefined));
    const forgetting = awaitStopAnswer(gone, deps);
    gone.forget("uninstalled");
    await forgetting;
    expect(gone.now.kind).toBe("forgotten");
  });

  it("ends here as stopped when Stop and shutdown meet, whichever came first", () => {
    const stoppedFirst = new RunFate();
    stoppedFirst.stop(personStop("U1"));
    stoppedFirst.handOver("handing over");
    expect(stoppedFirst.now.kind).toBe("stoppingHandingOver");
    const handedFirst = new RunFate();
    handedFirst.handOver("handing over");
    expect(handedFirst.stop(personStop("U1"))).toBe(true);
    expect(handedFirst.now.kind).toBe("stoppingHandingOver");
    // Refused: it goes back to being handed over, not to running here.
    handedFirst.refused();
    expect(handedFirst.now).toEqual({ kind: "handingOver" });
  });

  it("is forgotten from any state, and a forgotten run is neither stopped nor handed over", () => {
    for (const before of ["running", "stopping", "handingOver"] as const) {
      const fate = new RunFate();
      if (before === "stopping") fate.stop(personStop("U1"));
      if (before === "handingOver") fate.handOver("lease lost");
      fate.forget("its workspace uninstalled the app");
      expect(fate.now).toEqual({ kind: "forgotten" });
      expect(fate.signal.aborted).toBe(true);
      expect(fate.stop(personStop("U2"))).toBe(false);
      fate.handOver("handing over");
      expect(fate.now).toEqual({ kind: "forgotten" });
    }
  });

  it("learns of a Stop made elsewhere", () => {
    const fate = new RunFate();
    fate.stoppedElsewhere(personStop("U3"));
    expect(fate.stopHeld).toEqual(personStop("U3"));
  });

  it("ends here once: its end is neither handed over nor let go, and keeps who stopped it", () => {
    const fate = new RunFate();
    fate.stop(personStop("U1"));
    fate.end();
    expect(fate.now).toEqual({ kind: "ending", stop: personStop("U1") });
    expect(fate.over).toBe(true);
    fate.handOver("lease lost");
    expect(fate.now).toEqual({ kind: "ending", stop: personStop("U1") });
    expect(fate.signal.aborted).toBe(false);
    // A refusal arriving late: it no longer counts as stopped.
    fate.refused();
    expect(fate.now).toEqual({ kind: "ending" });
    // A Stop pressed while its end is shown still stops it (the service is asked).
    expect(fate.stop(personStop("U2"))).toBe(true);
    expect(fate.stopHeld).toEqual(personStop("U2"));
    fate.forget("its workspace uninstalled the app");
    expect(fate.now).toEqual({ kind: "forgotten" });
  });
});
