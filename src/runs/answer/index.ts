/**
 * The answer sink a run shows its answer through, chosen by the operator's streaming mode:
 * edited messages, or Slack's native stream (which goes back to edits when Slack ends it).
 */
import { EditSink } from "./edit-sink.ts";
import { NativeSink, type NativeSinkOptions } from "./native-sink.ts";
import type { AnswerSink } from "./sink.ts";

export type { AnswerSink, RunningAnswer } from "./sink.ts";

/** How answers reach Slack: by editing messages, or with Slack's native streaming. */
export type StreamingMode = "edit" | "native";

export interface AnswerSinkOptions extends Omit<NativeSinkOptions, "recipient"> {
  readonly mode: StreamingMode;
  /** Who asked, in which workspace (a stream is addressed to them); unknown for old records. */
  readonly recipient: { readonly userId: string | undefined; readonly teamId: string };
  /** The run was left by another instance: it continues in the messages that show it. */
  readonly resumed: boolean;
}

/**
 * A new run with a known asker streams natively in `native` mode; every other run edits (a
 * resumed one continues in the messages its first owner left, by edits).
 */
export function openAnswerSink(options: AnswerSinkOptions): AnswerSink {
  const { mode, recipient, resumed } = options;
  const { userId, teamId } = recipient;
  if (mode !== "native" || resumed || userId === undefined) return new EditSink(options);
  return new NativeSink({ ...options, recipient: { userId, teamId } });
}
