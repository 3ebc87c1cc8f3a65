/** Records of a workspace written into an app's store, for tests of what is kept and forgotten. */
import type { ThreadStore } from "../../src/store/types.ts";

/**
 * A workspace's records (not its runs: the resumer would take those up), written through the
 * store as the app writes them: a thread, recent tasks, defaults, a claim, a setting.
 */
export async function seedWorkspace(store: ThreadStore, teamId: string): Promise<void> {
  await store.putThread({
    teamId,
    channelId: "C0OTHER",
    threadTs: "1700000000.000100",
    service: { projectId: "proj_other", threadId: "thr_other" },
    surface: "channel",
    ownerUserId: "U0B",
    active: { kind: "idle" },
    lastRunId: "run_other",
    queue: [],
    createdAt: 1,
    updatedAt: 1,
  });
  await store.putRecentTask(teamId, "U0B", {
    channelId: "C0OTHER",
    threadTs: "1700000000.000100",
    prompt: "Other work",
    status: "completed",
    startedAt: 1,
    updatedAt: 2,
  });
  await store.putDefaults(teamId, { kind: "user", userId: "U0B" }, { model: "m-other" });
  await store.putDefaults(teamId, { kind: "channel", channelId: "C0OTHER" }, { effort: "low" });
  await store.claimOnce(teamId, "event:EvOther", 3600_000);
  // A record beside the installation (as a workspace's settings are kept).
  await store.putRecord(`t:${teamId}:usage-policy`, { who: "everyone" });
}
