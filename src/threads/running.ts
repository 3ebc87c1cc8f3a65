/**
 * A thread's record once its run runs: what the start of a run (runs/start.ts, a fresh start
 * or one another instance finishes) reports through the `RunningThreads` port. The thread
 * layer owns its record; the run layer only says where the run is and who asked for it.
 */
import { activityOf } from "../runs/record.ts";
import type { PersonStop } from "../store/types.ts";
import type { RunningThreads, ThreadStore } from "./ports.ts";

/**
 * Records a thread as running the service's run: a new task's thread gets its conversation
 * (and is written whole if the instance that posted its prompt died before it was); a
 * follow-up's thread only while it still waits for that run.
 */
export function runningThreads(deps: {
  readonly store: Pick<ThreadStore, "updateThread" | "putThread">;
  readonly now: () => number;
}): RunningThreads {
  return {
    async running(record, plan) {
      const { store } = deps;
      const { key, ref } = record;
      const active = activityOf(record);
      let stop: PersonStop | undefined;
      const updated = await store.updateThread(key, (rec) => {
        const starting = rec.active.kind === "starting" ? rec.active : undefined;
        if (plan.replyTs !== undefined && starting?.replyTs !== plan.replyTs) return undefined;
        stop = starting?.stop;
        if (plan.replyTs !== undefined) return { ...rec, active };
        return { ...rec, service: ref, active };
      });
      if (updated || plan.replyTs !== undefined) return stop;
      const now = deps.now();
      await store.putThread({
        ...key,
        service: ref,
        ownerUserId: plan.userId,
        surface: plan.surface,
        active,
        lastRunId: undefined,
        queue: [],
        createdAt: now,
        updatedAt: now,
      });
      return undefined;
    },
  };
}
