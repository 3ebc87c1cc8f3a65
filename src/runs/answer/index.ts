/** The answer sink a run shows its answer through, chosen by the operator's streaming mode. */
import type { Clock } from "../../util/clock.ts";
import { EditSink } from "./edit-sink.ts";
import { NativeSink, type NativeSinkOptions } from "./native-stream.ts";
import type { AnswerSink } from "./sink.ts";

/** `auto`: natively streamed while the stream budget allows, else edited. */
export type StreamingMode = "auto" | "edit" | "native";

/** Slack ends a native stream about five minutes after it started; Chat SDK rotates at four. */
export const DEFAULT_ROTATE_MS = 4 * 60_000;

export interface AnswerSinkOptions extends Omit<NativeSinkOptions, "recipient" | "ifBudget"> {
  readonly mode: StreamingMode;
  /** Who asked (a stream is addressed to them), if known. */
  readonly recipient: { readonly userId: string | undefined; readonly teamId: string };
  /** Left by another instance: it continues in the messages that show it. */
  readonly resumed: boolean;
  readonly clock: Clock;
}

/** A new run with a known asker streams (in `auto` if its writer knows the budget); others edit. */
export function openAnswerSink(options: AnswerSinkOptions): AnswerSink {
  const { mode, recipient, resumed, writer } = options;
  const { userId, teamId } = recipient;
  const streams = mode === "native" || (mode === "auto" && writer.streams !== undefined);
  // A resumed run that streamed may find its last message still streaming: stopped before edits.
  const { messageTs, controlTs } = options.initial;
  const leftStreaming = resumed && controlTs !== undefined ? messageTs.at(-1) : undefined;
  if (!streams || resumed || userId === undefined)
    return new EditSink({ ...options, leftStreaming });
  return new NativeSink({
    ...options,
    recipient: { userId, teamId },
    ifBudget: mode === "auto",
    rotateMs: options.rotateMs ?? DEFAULT_ROTATE_MS,
  });
}
