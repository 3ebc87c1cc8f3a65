/**
 * ThreadHistory for unit tests: threads kept in memory by channel and ts, read as the Slack one
 * reads them (earlier messages only, the newest `limit` kept), or refused with a given error.
 */
import type { ThreadHistory, ThreadMessage } from "../../../src/threads/ports.ts";

export class FakeThreadHistory implements ThreadHistory {
  readonly threads = new Map<string, ThreadMessage[]>();
  /** Thrown by every read while set. */
  refuse: Error | undefined;
  reads = 0;

  add(channelId: string, threadTs: string, messages: ThreadMessage[]): void {
    this.threads.set(`${channelId}/${threadTs}`, messages);
  }

  async read(
    _teamId: string,
    thread: { channelId: string; threadTs: string; beforeTs: string },
    limit: number,
  ) {
    this.reads += 1;
    if (this.refuse) throw this.refuse;
    const all = this.threads.get(`${thread.channelId}/${thread.threadTs}`) ?? [];
    const earlier = all.filter((m) => Number(m.ts) < Number(thread.beforeTs));
    const messages = earlier.slice(-limit);
    return { messages, omitted: earlier.length - messages.length };
  }
}
