/** A SlackWriter whose calls wait for their method's budget; edits coalesce, a 429 pauses them. */
import {
  BudgetWaitExceeded,
  type ScheduleOptions,
  type SlackScheduler,
  StreamChoice,
} from "./scheduler/index.ts";
import type { SlackWriter, StreamBudget } from "../runs/ports.ts";
import { slackErrorCode } from "../view/errors.ts";
import { UPLOAD_BATCH } from "./web-writer.ts";

/** A start "at once" gets its token within this long (a Redis round trip, 100 ms of jitter). */
const START_AT_ONCE_MS = 250;

/** Slack's answers when it ended a stream itself. */
const STREAM_ENDED = new Set(["message_not_in_streaming_state", "stopped_by_user"]);

type Run = <T>(method: string, fn: () => Promise<T>, options?: ScheduleOptions) => Promise<T>;

export function scheduledWriter(
  inner: SlackWriter,
  scheduler: SlackScheduler,
  teamId: string,
): SlackWriter {
  const run: Run = (method, fn, options = {}) => scheduler.schedule(teamId, method, fn, options);
  const { opened, closed, budget } = streaming(inner, run, scheduler, teamId);

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
    // A token per file (files.getUploadURLExternal), then the batch in the complete budget: a 429
    // inside it pauses and retries the batch there (files never completed are not shared).
    async upload(channelId, threadTs, files) {
      for (let i = 0; i < files.length; i += UPLOAD_BATCH) {
        const batch = files.slice(i, i + UPLOAD_BATCH);
        await Promise.all(batch.map(() => run("files.getUploadURLExternal", async () => {})));
        await run("files.completeUploadExternal", () => inner.upload(channelId, threadTs, batch));
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
    streams: budget,
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

/**
 * Streams opened and closed, and auto streaming: a run streams when the choice
 * (scheduler/stream-choice.ts) says so and its start gets a token at once; else it edits.
 */
function streaming(inner: SlackWriter, run: Run, scheduler: SlackScheduler, teamId: string) {
  const choice = new StreamChoice(scheduler, teamId);
  const opened = (ts: string) => {
    choice.opened(ts);
    return ts;
  };
  // An ended stream owes the append budget nothing more.
  const closed = (ts: string) => {
    choice.closed(ts);
    scheduler.closeUnit(teamId, "chat.appendStream", ts);
  };
  const startAtOnce = async (...args: Parameters<SlackWriter["startStream"]>) => {
    try {
      const start = () => inner.startStream(...args);
      return opened(await run("chat.startStream", start, { maxWaitMs: START_AT_ONCE_MS }));
    } catch (err) {
      if (err instanceof BudgetWaitExceeded) return undefined;
      throw err;
    }
  };
  const budget: StreamBudget = {
    async tryStart(...args) {
      const ts = choice.stream() ? await startAtOnce(...args) : undefined;
      if (ts === undefined) choice.edited();
      return ts;
    },
    tryNext: async (...args) => (choice.stopsKeepUp() ? startAtOnce(...args) : undefined),
  };
  return { opened, closed, budget };
}
