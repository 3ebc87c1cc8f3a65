/**
 * ARCHITECTURE.md's drawing of a run's fate is the code's: each of its edges is a row of
 * `TRANSITIONS` (runs/fate.ts) and each row is an edge; and a fate driven into each state
 * moves, by each transition, where the table says (or stays where it is when the table lists
 * no move).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { personStop } from "../../src/store/types.ts";
import { type FateKind, RunFate, type Transition, TRANSITIONS } from "../../src/runs/fate.ts";

const ROOT = join(import.meta.dirname, "..", "..");

/** The edges of the Mermaid state diagram in `markdown` (start and end markers left out). */
function drawnEdges(markdown: string): string[] {
  const block = /```mermaid\n(stateDiagram-v2\n[\s\S]*?)```/.exec(markdown)?.[1];
  if (block === undefined) throw new Error("ARCHITECTURE.md has no Mermaid state diagram");
  const edges: string[] = [];
  for (const line of block.split("\n")) {
    const edge = /^\s*(\w+) --> (\w+): (\w+)\(\)\s*$/.exec(line);
    if (edge) edges.push(`${edge[1]} --${edge[3]}--> ${edge[2]}`);
    else if (line.includes("-->") && !line.includes("[*]")) {
      throw new Error(`an edge the test cannot read: ${line.trim()}`);
    }
  }
  return edges.sort();
}

/** A fate in each state, reached by transitions alone. */
const REACH: Record<FateKind, (fate: RunFate) => void> = {
  running: () => undefined,
  stopping: (fate) => fate.stop(personStop("U1")),
  stoppingHandingOver: (fate) => {
    fate.stop(personStop("U1"));
    fate.handOver("handing over");
  },
  handingOver: (fate) => fate.handOver("handing over"),
  ending: (fate) => fate.end(),
  forgotten: (fate) => fate.forget("its workspace uninstalled the app"),
};

const APPLY: Record<Transition, (fate: RunFate) => void> = {
  stop: (fate) => fate.stop(personStop("U2")),
  refused: (fate) => fate.refused(),
  unanswered: (fate) => fate.unanswered(),
  stoppedElsewhere: (fate) => fate.stoppedElsewhere(personStop("U3")),
  handOver: (fate) => fate.handOver("lease lost"),
  end: (fate) => fate.end(),
  forget: (fate) => fate.forget("its records are forgotten"),
};

describe("the drawing of a run's fate", () => {
  it("has every move of the code's table, and no other", () => {
    const markdown = readFileSync(join(ROOT, "ARCHITECTURE.md"), "utf8");
    const table = TRANSITIONS.map(([from, by, to]) => `${from} --${by}--> ${to}`).sort();
    expect(drawnEdges(markdown)).toEqual(table);
  });

  it("is what a fate does: each state moves by each transition as the table says", () => {
    const states = Object.keys(REACH) as FateKind[];
    const transitions = Object.keys(APPLY) as Transition[];
    for (const from of states) {
      const reached = new RunFate();
      REACH[from](reached);
      expect(reached.now.kind).toBe(from);
      for (const by of transitions) {
        const fate = new RunFate();
        REACH[from](fate);
        APPLY[by](fate);
        const to = TRANSITIONS.find(([f, t]) => f === from && t === by)?.[2] ?? from;
        expect({ from, by, to: fate.now.kind }).toEqual({ from, by, to });
      }
    }
  });
});
