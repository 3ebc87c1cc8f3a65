/** Feedback on answers: one vote per person and run (the latest counts), counted in Prometheus
 * and kept for the data retention after the last vote, unless its workspace, thread, channel or
 * voter is forgotten first. */
import type { AppMetrics } from "../metrics.ts";
import type { RecordStore } from "../store/types.ts";
import { type Clock, systemClock } from "../util/clock.ts";
import type { FeedbackKind, FeedbackRef } from "../view/feedback.ts";

/** The most votes kept per run (a channel's worth; more are counted but not kept). */
const MAX_VOTES = 500;

export interface FeedbackVote {
  readonly teamId: string;
  readonly userId: string;
  readonly kind: FeedbackKind;
  readonly ref: FeedbackRef;
}

interface FeedbackRecord extends FeedbackRef {
  readonly votes: ReadonlyArray<{ userId: string; kind: FeedbackKind; at: number }>;
}

export const feedbackKey = (teamId: string, runId: string): string =>
  `t:${teamId}:feedback:${runId}`;

interface FeedbackRecorderOptions {
  readonly records: RecordStore;
  readonly metrics: Pick<AppMetrics, "feedback">;
  readonly clock?: Clock;
}

export class FeedbackRecorder {
  readonly #o: FeedbackRecorderOptions;

  constructor(options: FeedbackRecorderOptions) {
    this.#o = options;
  }

  /** Records a vote; false when the person had already given this one. A run's votes change in
   * one atomic update (simultaneous clicks each keep their vote). */
  async record(vote: FeedbackVote): Promise<boolean> {
    let added = false;
    const change = (current: unknown): FeedbackRecord | undefined => {
      const votes = readRecord(current)?.votes ?? [];
      added = !votes.some((v) => v.userId === vote.userId && v.kind === vote.kind);
      if (!added) return undefined;
      const others = votes.filter((v) => v.userId !== vote.userId);
      const mine = {
        userId: vote.userId,
        kind: vote.kind,
        at: (this.#o.clock ?? systemClock).now(),
      };
      const { runId, channelId, threadTs } = vote.ref;
      return { runId, channelId, threadTs, votes: [...others, mine].slice(-MAX_VOTES) };
    };
    const key = feedbackKey(vote.teamId, vote.ref.runId);
    await this.#o.records.updateRecord(key, change, { retained: true });
    if (added) this.#o.metrics.feedback(vote.kind);
    return added;
  }

  async votes(teamId: string, runId: string): Promise<FeedbackRecord | undefined> {
    return readRecord(await this.#o.records.getRecord(feedbackKey(teamId, runId)));
  }
}

function readRecord(raw: unknown): FeedbackRecord | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const r = raw as Partial<FeedbackRecord>;
  if (typeof r.runId !== "string" || !Array.isArray(r.votes)) return undefined;
  return r as FeedbackRecord;
}

/** Which votes to forget: a thread's or a channel's, one person's, or the whole workspace's. */
export type FeedbackScope =
  { readonly channelId: string; readonly threadTs?: string } | { readonly voter: string } | "all";

/** Forgets the votes of `scope` in a workspace (a scan: erasing is rare); how many records changed. */
export async function forgetFeedback(
  records: Pick<RecordStore, "recordKeys" | "getRecord" | "updateRecord" | "deleteRecord">,
  teamId: string,
  scope: FeedbackScope,
): Promise<number> {
  let changed = 0;
  for (const key of await records.recordKeys(feedbackKey(teamId, ""))) {
    const record = scope === "all" ? undefined : readRecord(await records.getRecord(key));
    if (scope === "all" || (record && "channelId" in scope && inPlace(record, scope))) {
      await records.deleteRecord(key);
      changed += 1;
    } else if (record && "voter" in scope && record.votes.some((v) => v.userId === scope.voter)) {
      const left = await records.updateRecord(
        key,
        (current) => {
          const read = readRecord(current);
          return read && { ...read, votes: read.votes.filter((v) => v.userId !== scope.voter) };
        },
        { retained: true },
      );
      if (readRecord(left)?.votes.length === 0) await records.deleteRecord(key);
      changed += 1;
    }
  }
  return changed;
}

const inPlace = (record: FeedbackRecord, where: { channelId: string; threadTs?: string }) =>
  record.channelId === where.channelId &&
  (where.threadTs === undefined || record.threadTs === where.threadTs);
