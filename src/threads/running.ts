/** A thread's record once its run runs, as runs/start.ts reports it (the `RunningThreads` port). */
import { activityOf } from "../runs/record.ts";
import type { PersonStop } from "../store/types.ts";
import type { RunningThreads, ThreadStore } from "./ports.ts";

// A new task's thread gets its conversation (written whole if the instance that posted its prompt
// died before recording it); a follow-up's thread is updated only while it still waits for the run.
export function runningThreads(deps: {
  readonly store: Pick<ThreadStore, "updateThread" | "putThread">;
  readonly now: () => number;
}): RunningThreads {
  return {
    async running(record, plan) {
      const { key, ref } = record;
      const active = activityOf(record);
      let stop: PersonStop | undefined;
      const updated = await deps.store.updateThread(key, (rec) => {
        const starting = rec.active.kind === "starting" ? rec.active : undefined;
        if (plan.replyTs !== undefined && starting?.replyTs !== plan.replyTs) return undefined;
        stop = starting?.stop;
        return plan.replyTs !== undefined ? { ...rec, active } : { ...rec, service: ref, active };
      });
      if (updated || plan.replyTs !== undefined) return stop;
      const now = deps.now();
      await deps.store.putThread({
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
