/**
 * The answer sink: where a run's answer goes in Slack while it grows and when it ends. How the
 * text reaches Slack (edited messages, or Slack's native stream) is the sink's business.
 */
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
 * Where the answer is in Slack, as the run's record keeps it: its messages in order, the sealed
 * ones first (parts a rotated stream left), and the "working…" message a stream replaced.
 */
export type AnswerPlace = Pick<RelayedRun, "messageTs"> &
  Partial<Pick<RelayedRun, "controlTs" | "sealed">>;

export interface AnswerSink {
  readonly place: AnswerPlace;
  /**
   * Queues the latest answer; a newer call while one waits is carried by the waiting one. True
   * when this call's read reached Slack, false when a waiting call will show it or nothing changed.
   */
  show(answer: RunningAnswer): Promise<boolean>;
  /** One step of the agent's work (a tool it ran). */
  step(title: string): void;
  /** The run is handed to another instance: what shows it is left editable for that one. */
  leave(why: string): Promise<void>;
  /** Shows the final answer, posting it anew if need be; true when it is shown. Never rejects. */
  final(answer: FinalAnswer): Promise<boolean>;
  /** After the final answer: removes the "working…" message a stream replaced. Never rejects. */
  removeControl(): Promise<void>;
}
