/**
 * A run's fate in this process: one state, moved only by its named transitions (Stop, a
 * refused Stop, shutdown or a lost lease, the workspace uninstalled).
 */
import { describe, expect, it } from "vitest";
import { RunFate } from "../../src/runs/fate.ts";

describe("a run's fate", () => {
  it("runs until someone stops it, then says who and why", () => {
    const fate = new RunFate();
    expect(fate.now).toEqual({ kind: "running" });
    expect(fate.stop("U1", "it reached the maximum run time")).toBe(true);
    expect(fate.now).toEqual({
      kind: "stopping",
      by: "U1",
      reason: "it reached the maximum run time",
    });
    expect(fate.stoppedBy).toBe("U1");
    // A second Stop changes nothing: the first one is shown.
    expect(fate.stop("U2")).toBe(false);
    expect(fate.stoppedBy).toBe("U1");
  });

  it("is stopped by the app itself (its maximum run time) with a reason and nobody named", () => {
    const fate = new RunFate();
    expect(fate.stop(undefined, "it reached the maximum run time of 4h")).toBe(true);
    expect(fate.stopping).toBe(true);
    expect(fate.stoppedBy).toBeUndefined();
    expect(fate.now).toEqual({ kind: "stopping", reason: "it reached the maximum run time of 4h" });
  });

  it("goes on running when the service refuses the stop, and may be stopped again", () => {
    const fate = new RunFate();
    fate.stop("U1");
    fate.refused();
    expect(fate.now).toEqual({ kind: "running" });
    expect(fate.stop("U2")).toBe(true);
    expect(fate.stoppedBy).toBe("U2");
  });

  it("is handed over on shutdown, and stops following the service at once", () => {
    const fate = new RunFate();
    fate.handOver("handing over");
    expect(fate.now).toEqual({ kind: "handingOver" });
    expect(fate.abort.signal.aborted).toBe(true);
  });

  it("ends here as stopped when Stop and shutdown meet, whichever came first", () => {
    const stoppedFirst = new RunFate();
    stoppedFirst.stop("U1");
    stoppedFirst.handOver("handing over");
    expect(stoppedFirst.now.kind).toBe("stopping");
    const handedFirst = new RunFate();
    handedFirst.handOver("handing over");
    expect(handedFirst.stop("U1")).toBe(true);
    expect(handedFirst.now.kind).toBe("stopping");
    // Refused: it goes back to being handed over, not to running here.
    handedFirst.refused();
    expect(handedFirst.now).toEqual({ kind: "handingOver" });
  });

  it("is forgotten from any state, and a forgotten run is neither stopped nor handed over", () => {
    for (const before of ["running", "stopping", "handingOver"] as const) {
      const fate = new RunFate();
      if (before === "stopping") fate.stop("U1");
      if (before === "handingOver") fate.handOver("lease lost");
      fate.forget("its workspace uninstalled the app");
      expect(fate.now).toEqual({ kind: "forgotten" });
      expect(fate.abort.signal.aborted).toBe(true);
      expect(fate.stop("U2")).toBe(false);
      fate.handOver("handing over");
      expect(fate.now).toEqual({ kind: "forgotten" });
    }
  });

  it("starts stopping when its record says someone pressed Stop, and learns of a Stop made elsewhere", () => {
    expect(new RunFate({ stoppedBy: "U1" }).now).toEqual({ kind: "stopping", by: "U1" });
    const fate = new RunFate();
    fate.stoppedElsewhere("U3");
    expect(fate.stoppedBy).toBe("U3");
  });
});
