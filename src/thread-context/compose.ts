/** A task started inside a thread that has no task (a mention, a DM reply) takes the thread along:
 * its earlier messages in the prompt, or as `thread.md` when they would not fit. */
import type { Logger } from "pino";
import type { ThreadContextConfig } from "../config/features.ts";
import type { ThreadHistory } from "./history.ts";
import { LIMITS } from "../service/limits.ts";
import { fileFromBytes, type UploadFile } from "../service/multipart.ts";
import {
  promptWithThread,
  promptWithThreadFile,
  renderThread,
  THREAD_FILE,
  threadFile,
  threadNote,
} from "./render.ts";

/** Reading the thread was refused; the message says why, for the person. */
export class ThreadUnreadable extends Error {
  override readonly name = "ThreadUnreadable";
}

interface ThreadContextDeps {
  readonly threadHistory?: ThreadHistory | undefined;
  readonly threadContext?: ThreadContextConfig | undefined;
  readonly logger: Logger;
}

export interface WithThread {
  readonly prompt: string;
  readonly files: readonly UploadFile[];
  readonly remark?: string;
}

type ThreadAsk = Parameters<ThreadHistory["read"]>[1] & { readonly teamId: string };

export async function withThreadContext(
  deps: ThreadContextDeps,
  ask: ThreadAsk,
  prompt: string,
  files: readonly UploadFile[],
): Promise<WithThread> {
  const config = deps.threadContext;
  if (!deps.threadHistory || !config?.enabled) return { prompt, files };
  let read;
  try {
    read = await deps.threadHistory.read(ask.teamId, ask, config.maxMessages);
  } catch (err) {
    deps.logger.warn({ err }, "could not read the thread a task was asked in");
    const why = err instanceof ThreadUnreadable ? err.message : "Slack did not answer";
    return {
      prompt,
      files,
      remark: `Only your message was sent: the thread's earlier messages could not be read (${why}).`,
    };
  }
  if (read.messages.length === 0) return { prompt, files };
  const thread = renderThread(read.messages, read.omitted, config);
  const remark = threadNote(thread);
  const inline = promptWithThread(prompt, thread);
  if (inline !== undefined) return { prompt: inline, files, remark };
  if (files.length >= LIMITS.maxFiles) {
    return {
      prompt,
      files,
      remark: `Only your message was sent: it has ${LIMITS.maxFiles} files, the most one task takes, so the thread could not go along as ${THREAD_FILE}.`,
    };
  }
  return {
    prompt: promptWithThreadFile(prompt),
    files: [
      ...files,
      fileFromBytes(THREAD_FILE, Buffer.from(threadFile(thread), "utf8"), "text/markdown"),
    ],
    remark: `${remark.slice(0, -1)}, attached as ${THREAD_FILE}.`,
  };
}
