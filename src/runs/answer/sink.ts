/** Where a run's answer goes in Slack while it grows and when it ends (edits, native stream). */
import type { RelayedRun } from "../../store/types.ts";
import type { MessagePayload } from "../../view/render.ts";

/** The running answer, read when a write is sent. Each read marks what it returns as shown. */
export interface RunningAnswer {
  text(): string;
  /**
   * The answer from character `from` on (after the sealed messages), with the status line and
   * Stop button; undefined once the run no longer shows interim states.
   */
  render(from: number): MessagePayload[] | undefined;
}

/** The final answer: its text, and its rendering from character `from` on (with the run's end). */
export interface FinalAnswer {
  readonly text: string;
  render(from: number): MessagePayload[];
}

/**
 * Where the answer is in Slack: its messages (sealed parts of a rotated stream first), and the
 * "working…" message a stream replaced.
 */
export type AnswerPlace = Pick<RelayedRun, "messageTs"> &
  Partial<Pick<RelayedRun, "controlTs" | "sealed">>;

export interface AnswerSink {
  readonly place: AnswerPlace;
  /**
   * Queues the latest answer (a waiting call carries newer ones). True when this call's read
   * reached Slack, false when a waiting call will show it or nothing changed.
   */
  show(answer: RunningAnswer): Promise<boolean>;
  step(title: string): void;
  /** The run is handed to another instance: what shows it is left editable for that one. */
  leave(why: string): Promise<void>;
  /** Shows the final answer, posting it anew if need be; true when it is shown. Never rejects. */
  final(answer: FinalAnswer): Promise<boolean>;
  /** After the final answer: removes the "working…" message a stream replaced. Never rejects. */
  removeControl(): Promise<void>;
}
