/**
 * A SlackWriter whose every call goes through the workspace's SlackScheduler: edits are
 * coalesced per message, everything else waits for its method's budget, and 429s pause the
 * method instead of failing the call. The inner writer should use a WebClient with
 * `rejectRateLimitedCalls: true`, so that 429s reach the scheduler instead of WebClient's queue.
 */
import {
  BudgetWaitExceeded,
  type ScheduleOptions,
  type SlackScheduler,
} from "./scheduler/index.ts";
import type { SlackWriter, StreamBudget, UploadItem } from "../runs/ports.ts";

/** Files per filesUploadV2 call, as webClientWriter batches them. */
const UPLOAD_BATCH = 10;

/**
 * A stream starts "at once" when its start gets a token within this long (a bucket in Redis
 * answers in a round trip; shared buckets add up to 100 ms of jitter).
 */
const START_AT_ONCE_MS = 250;

/** A stream may start while the stops waiting would all go within this long. */
const STOPS_WITHIN_MS = 10_000;

export function scheduledWriter(
  inner: SlackWriter,
  scheduler: SlackScheduler,
  teamId: string,
): SlackWriter {
  const run = <T>(method: string, fn: () => Promise<T>, options: ScheduleOptions = {}) =>
    scheduler.schedule(teamId, method, fn, options);

  return {
    // A task's posts keep its command's place in the channel's queue (first come, first served).
    post: (channelId, payload, threadTs, order) =>
      run("chat.postMessage", () => inner.post(channelId, payload, threadTs), {
        key: channelId,
        ...(order ? { since: order.since } : {}),
      }),
    async update(channelId, ts, payload, options) {
      // "superseded" is success too: a newer text of the same message is queued and will be sent.
      await scheduler.scheduleEdit(
        teamId,
        `${channelId}:${ts}`,
        () => inner.update(channelId, ts, payload, options),
        { final: options?.final === true },
      );
    },
    remove(channelId, ts) {
      // An edit of a message about to be deleted need not spend a call of the budget.
      scheduler.cancelEdit(teamId, `${channelId}:${ts}`);
      return run("chat.delete", () => inner.remove(channelId, ts));
    },
    ephemeral: (channelId, userId, text, threadTs) =>
      run("chat.postEphemeral", () => inner.ephemeral(channelId, userId, text, threadTs)),
    react: (channelId, ts, name) => run("reactions.add", () => inner.react(channelId, ts, name)),
    unreact: (channelId, ts, name) =>
      run("reactions.remove", () => inner.unreact(channelId, ts, name)),
    async upload(channelId, threadTs, files) {
      for (let i = 0; i < files.length; i += UPLOAD_BATCH) {
        await uploadBatch(channelId, threadTs, files.slice(i, i + UPLOAD_BATCH));
      }
    },
    startStream: (channelId, threadTs, recipient, markdown) =>
      run("chat.startStream", () => inner.startStream(channelId, threadTs, recipient, markdown)),
    appendStream: (channelId, ts, markdown, steps) =>
      run("chat.appendStream", () => inner.appendStream(channelId, ts, markdown, steps)),
    stopStream: (channelId, ts, end) =>
      run("chat.stopStream", () => inner.stopStream(channelId, ts, end)),
    streams: streamBudget(),
    // One token for the whole read: threads of more than one page (200 messages) are rare.
    sharedFileNames: (channelId, threadTs, sinceTs) =>
      run("conversations.replies", () => inner.sharedFileNames(channelId, threadTs, sinceTs)),
    setStatus: (channelId, threadTs, status, loading) =>
      run("assistant.threads.setStatus", () =>
        inner.setStatus(channelId, threadTs, status, loading),
      ),
    setTitle: (channelId, threadTs, title) =>
      run("assistant.threads.setTitle", () => inner.setTitle(channelId, threadTs, title)),
    setSessionStatus: (channelId, threadTs, status, title) =>
      run("agents.sessions.setStatus", () =>
        inner.setSessionStatus(channelId, threadTs, status, title),
      ),
    join: (channelId) => run("conversations.join", () => inner.join(channelId)),
    isAdmin: (userId) => run("users.info", () => inner.isAdmin(userId)),
    // Mostly answered from memory: only a lookup takes a token.
    person: (userId) => inner.person(userId),
  };

  /**
   * Tier 2's budget for auto streaming: a start goes if the start bucket gives a token at once
   * (first come, first served: a start waiting before it goes first) and the stops keep up; a
   * run that cannot start edits instead, on the Tier 3 budget, and nobody waits for Tier 2.
   */
  function streamBudget(): StreamBudget {
    return {
      async tryStart(channelId, threadTs, recipient, markdown) {
        if (!scheduler.keepsUp(teamId, "chat.stopStream", STOPS_WITHIN_MS)) return undefined;
        try {
          return await run(
            "chat.startStream",
            () => inner.startStream(channelId, threadTs, recipient, markdown),
            { maxWaitMs: START_AT_ONCE_MS },
          );
        } catch (err) {
          if (err instanceof BudgetWaitExceeded) return undefined;
          throw err;
        }
      },
    };
  }

  /**
   * filesUploadV2 makes one files.getUploadURLExternal call per file, then one
   * files.completeUploadExternal: take a token per file first, then run the batch in the
   * complete budget. A 429 inside the batch pauses (and retries the batch in) the complete
   * budget; retrying is safe because files that were never completed are not shared.
   */
  async function uploadBatch(
    channelId: string,
    threadTs: string,
    batch: readonly UploadItem[],
  ): Promise<void> {
    await Promise.all(batch.map(() => run("files.getUploadURLExternal", async () => {})));
    await run("files.completeUploadExternal", () => inner.upload(channelId, threadTs, batch));
  }
}
