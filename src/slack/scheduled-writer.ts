/**
 * A SlackWriter whose every call goes through the workspace's SlackScheduler: edits coalesced per
 * message, everything else waiting for its method's budget, 429s pausing the method (the inner
 * writer's WebClient has `rejectRateLimitedCalls: true`, so they reach the scheduler).
 */
import {
  BudgetWaitExceeded,
  type ScheduleOptions,
  type SlackScheduler,
  StreamChoice,
} from "./scheduler/index.ts";
import type { SlackWriter, StreamBudget, UploadItem } from "../runs/ports.ts";
import { slackErrorCode } from "../view/errors.ts";
import { UPLOAD_BATCH } from "./web-writer.ts";

/**
 * A stream starts "at once" when its start gets a token within this long (a bucket in Redis
 * answers in a round trip; shared buckets add up to 100 ms of jitter).
 */
const START_AT_ONCE_MS = 250;

/** Slack's answers when it ended a stream itself. */
const STREAM_ENDED = new Set(["message_not_in_streaming_state", "stopped_by_user"]);

/** A call of the workspace's, sent when its method's budget allows. */
type Run = <T>(method: string, fn: () => Promise<T>, options?: ScheduleOptions) => Promise<T>;

export function scheduledWriter(
  inner: SlackWriter,
  scheduler: SlackScheduler,
  teamId: string,
): SlackWriter {
  const run: Run = (method, fn, options = {}) => scheduler.schedule(teamId, method, fn, options);
  const choice = new StreamChoice(scheduler, teamId);
  const { opened, closed } = streamEvents(choice, scheduler, teamId);

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
        await uploadBatch(inner, run, channelId, threadTs, files.slice(i, i + UPLOAD_BATCH));
      }
    },
    startStream: (channelId, threadTs, recipient, markdown, display) =>
      run("chat.startStream", () =>
        inner.startStream(channelId, threadTs, recipient, markdown, display),
      ).then(opened),
    // An append with more to come is an interim text: paced (scheduler/windows.ts).
    appendStream: (channelId, ts, markdown, steps, last) =>
      run("chat.appendStream", () => inner.appendStream(channelId, ts, markdown, steps), {
        pace: { unit: ts, last: last === true },
      }).catch((err: unknown) => {
        if (STREAM_ENDED.has(slackErrorCode(err) ?? "")) closed(ts);
        throw err;
      }),
    stopStream: (channelId, ts, end) =>
      run("chat.stopStream", () => inner.stopStream(channelId, ts, end)).finally(() => closed(ts)),
    hurryStream: (_channelId, ts) => scheduler.hurry(teamId, "chat.appendStream", ts),
    streams: streamBudget(inner, run, choice, opened),
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
}

/** A stream started (its ts passed on), or ended: it then owes the append budget nothing more. */
function streamEvents(choice: StreamChoice, scheduler: SlackScheduler, teamId: string) {
  return {
    opened: (ts: string) => {
      choice.opened(ts);
      return ts;
    },
    closed: (ts: string) => {
      choice.closed(ts);
      scheduler.closeUnit(teamId, "chat.appendStream", ts);
    },
  };
}

/**
 * Auto streaming: a run streams when the choice (scheduler/stream-choice.ts) says its share of
 * the stream budgets beats its share of the edit budget and the start bucket gives a token at
 * once (a start waiting before it goes first); otherwise it edits, on the Tier 3 budget.
 */
function streamBudget(
  inner: SlackWriter,
  run: Run,
  choice: StreamChoice,
  opened: (ts: string) => string,
): StreamBudget {
  const startAtOnce = async (...args: Parameters<SlackWriter["startStream"]>) => {
    try {
      const start = () => inner.startStream(...args);
      return opened(await run("chat.startStream", start, { maxWaitMs: START_AT_ONCE_MS }));
    } catch (err) {
      if (err instanceof BudgetWaitExceeded) return undefined;
      throw err;
    }
  };
  return {
    async tryStart(...args) {
      const ts = choice.stream() ? await startAtOnce(...args) : undefined;
      if (ts === undefined) choice.edited();
      return ts;
    },
    tryNext: async (...args) => (choice.stopsKeepUp() ? startAtOnce(...args) : undefined),
  };
}

/**
 * An upload is one files.getUploadURLExternal per file, then one files.completeUploadExternal: a
 * token per file first, then the batch in the complete budget. A 429 inside it pauses (and
 * retries the batch in) that budget: files never completed are not shared.
 */
async function uploadBatch(
  inner: SlackWriter,
  run: Run,
  channelId: string,
  threadTs: string,
  batch: readonly UploadItem[],
): Promise<void> {
  await Promise.all(batch.map(() => run("files.getUploadURLExternal", async () => {})));
  await run("files.completeUploadExternal", () => inner.upload(channelId, threadTs, batch));
}
