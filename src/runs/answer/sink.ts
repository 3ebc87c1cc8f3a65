/**
 * The answer sink: where a run's answer goes in Slack while it grows and when it ends. A run
 * hands it its answer (read only when a write is sent, so each write shows the latest) and its
 * agent's steps, and tells it when the answer is final or the run is handed over; how the text
 * reaches Slack (edited messages, or Slack's native stream falling back to edits) is the
 * sink's business, not the run's.
 */
import type { RelayedRun } from "../../store/types.ts";
import type { MessagePayload } from "../../view/render.ts";

/** The running answer, read when a write is sent. Each read marks what it returns as shown. */
export interface RunningAnswer {
  /** The answer's text so far (what a stream appends from). */
  text(): string;
  /**
   * The answer from character `from` on (what the messages after the sealed ones show),
   * rendered as messages with the status line and Stop button; undefined once the run no
   * longer shows interim states (it is ending, stopped or forgotten: the final write shows it).
   */
  render(from: number): MessagePayload[] | undefined;
}

/** The final answer: its text, and its rendering from character `from` on (with the run's end). */
export interface FinalAnswer {
  readonly text: string;
  render(from: number): MessagePayload[];
}

/**
 * Where the answer is in Slack, as the run's record keeps it for whoever resumes the run: its
 * messages in order, the sealed ones first (parts a rotated stream left, never edited again),
 * and the "working…" message a stream message replaced.
 */
export type AnswerPlace = Pick<RelayedRun, "messageTs"> &
  Partial<Pick<RelayedRun, "controlTs" | "sealed">>;

export interface AnswerSink {
  readonly place: AnswerPlace;
  /**
   * Queues the latest answer; the writer sends it when its budget allows. A newer call while
   * one waits is carried by the waiting one. Resolves true when this call's read reached
   * Slack, false when a waiting call will show it or nothing had changed.
   */
  show(answer: RunningAnswer): Promise<boolean>;
  /** One step of the agent's work (a tool it ran), for sinks that show steps on their own. */
  step(title: string): void;
  /** The run is handed to another instance: what shows it is left editable for that one. */
  leave(why: string): Promise<void>;
  /**
   * Shows the final answer (the messages after the sealed ones), posting it anew if they can
   * no longer be edited. Resolves true when the final answer is shown; never rejects.
   */
  final(answer: FinalAnswer): Promise<boolean>;
  /** After the final answer: removes the "working…" message a stream replaced. Never rejects. */
  removeControl(): Promise<void>;
}
