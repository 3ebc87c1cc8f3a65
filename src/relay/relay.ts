/**
 * The relay moves one agent run from the task service into one Slack thread: it follows
 * the run, edits the bot's message as text arrives (coalesced, at most one edit per
 * `editIntervalMs` per run), splits long answers across messages, and always ends the run
 * in a final, visible state with its files uploaded.
 */
import type { Logger } from "pino";
import type { TaskService, ThreadRef } from "../service/client.ts";
import { TaskServiceError } from "../service/errors.ts";
import { type FinalRun, type FollowOptions, followRun } from "../service/follow.ts";
import type { ResultFile } from "../service/schemas.ts";
import { describeServiceError, slackErrorCode } from "../slack/errors.ts";
import {
  encodeStopValue,
  type FileNote,
  type MessagePayload,
  type RunState,
  type RunView,
  renderRun,
} from "../slack/render.ts";
import type { SlackWriter, UploadItem } from "../slack/writer.ts";
import type { SlackThreadKey } from "../store/store.ts";

export interface RunTarget {
  readonly key: SlackThreadKey;
  readonly ref: ThreadRef;
  readonly runId: string;
  /** The bot message already posted in the thread for this run. */
  readonly messageTs: string;
  readonly startedAt: number;
  /** A remark shown under the answer (e.g. attachments that were not sent). */
  readonly note?: string;
}

export interface RunOutcome {
  readonly target: RunTarget;
  readonly state: RunState;
  readonly text: string;
  readonly messageTs: readonly string[];
}

export interface RelayOptions {
  readonly service: TaskService;
  readonly writer: SlackWriter;
  readonly logger: Logger;
  readonly editIntervalMs: number;
  readonly follow?: Omit<FollowOptions, "signal">;
  /** Called once per run after its final state is shown (queue draining, store updates). */
  readonly onRunEnded?: (outcome: RunOutcome) => Promise<void>;
  /** How long to wait for a stopped run to report its end before giving up on it. */
  readonly stopGraceMs?: number;
}

interface Control {
  readonly abort: AbortController;
  stoppedBy: string | undefined;
  frozenText: string | undefined;
  done: Promise<void>;
}

const MIME_TEXT = /^text\/|json|xml|csv|markdown|svg/;

/** Decodes an inline file from the service into the exact bytes it stands for. */
export function decodeFile(file: ResultFile): Buffer | undefined {
  if (file.included_inline === false || typeof file.content !== "string") return undefined;
  const enc = (file.encoding ?? "").toLowerCase();
  if (enc === "base64") return Buffer.from(file.content, "base64");
  if (enc === "utf-8" || enc === "utf8" || enc === "" || MIME_TEXT.test(file.file_type ?? "")) {
    return Buffer.from(file.content, "utf8");
  }
  return undefined;
}

function finalText(final: FinalRun): string {
  if (final.text.trim() !== "") return final.text;
  if (final.codeBlocks.length === 0) return "";
  return final.codeBlocks
    .map((b) => `\`\`\`${b.language}\n${b.code.replace(/\n$/, "")}\n\`\`\``)
    .join("\n\n");
}

function stateOf(status: string): RunState {
  if (status === "completed" || status === "failed" || status === "stopped") return status;
  return "failed";
}

export class Relay {
  readonly #o: RelayOptions;
  readonly #runs = new Map<string, Control>();

  constructor(options: RelayOptions) {
    this.#o = options;
  }

  get activeRuns(): number {
    return this.#runs.size;
  }

  isActive(runId: string): boolean {
    return this.#runs.has(runId);
  }

  /** Follows a run in the background; never throws, never rejects. */
  start(target: RunTarget): Promise<void> {
    const existing = this.#runs.get(target.runId);
    if (existing) return existing.done;
    const ctl: Control = {
      abort: new AbortController(),
      stoppedBy: undefined,
      frozenText: undefined,
      done: Promise.resolve(),
    };
    this.#runs.set(target.runId, ctl);
    ctl.done = this.#relay(target, ctl)
      .catch((err: unknown) => {
        this.#o.logger.error({ err, runId: target.runId }, "relay failed");
      })
      .finally(() => {
        this.#runs.delete(target.runId);
      });
    return ctl.done;
  }

  /**
   * Stops a run this instance is relaying: asks the service to stop, freezes the shown
   * text, and ends the message as "stopped by". Returns false when the run is not here.
   */
  async stop(runId: string, ref: ThreadRef, userId: string): Promise<boolean> {
    const ctl = this.#runs.get(runId);
    if (!ctl) return false;
    if (ctl.stoppedBy === undefined) {
      ctl.stoppedBy = userId;
      try {
        await this.#o.service.stopAgent(ref);
      } catch (err) {
        // The run may have ended on its own meanwhile; the relay still ends it as stopped.
        this.#o.logger.warn({ err, runId }, "stop request failed");
      }
      const grace = setTimeout(
        () => ctl.abort.abort(new Error("stopped")),
        this.#o.stopGraceMs ?? 10_000,
      );
      grace.unref();
      void ctl.done.finally(() => clearTimeout(grace));
    }
    await ctl.done;
    return true;
  }

  /** Resolves once no run is being relayed (follow-ups started meanwhile included). */
  async idle(): Promise<void> {
    while (this.#runs.size > 0) {
      await Promise.allSettled([...this.#runs.values()].map((c) => c.done));
    }
  }

  /** Aborts every run (shutdown). Their messages are left as they are. */
  async shutdown(): Promise<void> {
    for (const ctl of this.#runs.values()) ctl.abort.abort(new Error("shutting down"));
    await Promise.allSettled([...this.#runs.values()].map((c) => c.done));
  }

  async #relay(target: RunTarget, ctl: Control): Promise<void> {
    const { writer, logger } = this.#o;
    const channel = target.key.channelId;
    const log = logger.child({ runId: target.runId, channel, thread: target.key.threadTs });
    const messages: string[] = [target.messageTs];
    const sent: string[] = [];
    let text = "";
    let dirty = false;
    let timer: NodeJS.Timeout | undefined;
    let inflight: Promise<void> | undefined;
    let lastEditAt = 0;
    let closed = false;
    const stopValue = encodeStopValue({
      channelId: channel,
      threadTs: target.key.threadTs,
      runId: target.runId,
    });

    /** Writes payloads to the run's messages: updates what changed, posts new parts, removes extras. */
    const write = async (payloads: MessagePayload[], final: boolean) => {
      for (let i = 0; i < payloads.length; i++) {
        const payload = payloads[i];
        if (!payload) continue;
        const json = JSON.stringify(payload);
        if (sent[i] === json) continue;
        const ts = messages[i];
        if (ts === undefined) {
          messages.push(await writer.post(channel, payload, target.key.threadTs));
        } else {
          try {
            await writer.update(channel, ts, payload);
          } catch (err) {
            const code = slackErrorCode(err);
            if (
              code !== "message_not_found" &&
              code !== "cant_update_message" &&
              code !== "edit_window_closed"
            ) {
              throw err;
            }
            // The message is gone or frozen: carry on in a new one.
            messages[i] = await writer.post(channel, payload, target.key.threadTs);
          }
        }
        sent[i] = json;
      }
      if (final) {
        for (const extra of messages.splice(payloads.length)) {
          await writer
            .remove(channel, extra)
            .catch((err: unknown) => log.warn({ err }, "could not remove a surplus message"));
        }
      }
    };

    const view = (state: RunState, extra: Partial<RunView> = {}): RunView => ({
      text,
      state,
      elapsedMs: Date.now() - target.startedAt,
      stopValue,
      ...(target.note ? { note: target.note } : {}),
      ...extra,
    });

    const flushInterim = () => {
      timer = undefined;
      if (!dirty || closed || ctl.stoppedBy !== undefined) return;
      dirty = false;
      lastEditAt = Date.now();
      inflight = write(renderRun(view("running")), false)
        .catch((err: unknown) =>
          log.warn({ err, code: slackErrorCode(err) }, "interim edit failed"),
        )
        .finally(() => {
          inflight = undefined;
          if (dirty) schedule();
        });
    };
    const schedule = () => {
      if (timer || inflight || closed) return;
      const wait = Math.max(0, lastEditAt + this.#o.editIntervalMs - Date.now());
      timer = setTimeout(flushInterim, wait);
    };

    let final: FinalRun | undefined;
    let failure: unknown;
    try {
      const updates = followRun(
        this.#o.service,
        { ...target.ref, agentRunId: target.runId },
        {
          ...this.#o.follow,
          signal: ctl.abort.signal,
        },
      );
      for (;;) {
        const step = await updates.next();
        if (step.done) {
          final = step.value;
          break;
        }
        const u = step.value;
        if (u.type === "delta" && ctl.stoppedBy === undefined) {
          text += u.text;
          dirty = true;
          schedule();
        } else if (u.type === "transport") {
          log.info({ mode: u.mode, reason: u.reason }, "run transport changed");
        }
      }
    } catch (err) {
      failure = err;
    }

    closed = true;
    if (timer) clearTimeout(timer);
    await inflight;
    if (ctl.abort.signal.aborted && ctl.stoppedBy === undefined) {
      // Shutting down: leave the message as it is; the run resumes on the next start.
      log.info("relay ended by shutdown");
      return;
    }

    let state: RunState;
    let reason: string | undefined;
    let files: FileNote[] = [];
    if (ctl.stoppedBy !== undefined) {
      state = "stopped";
    } else if (final) {
      state = stateOf(final.status);
      text = finalText(final);
      if (state === "failed") {
        reason =
          final.errorMessage ??
          (final.status === "failed" ? undefined : `the run ended with status "${final.status}"`);
      }
      files = await this.#uploadFiles(target, final.files, log);
    } else {
      state = "error";
      reason = describeServiceError(failure, target.runId);
      log.error({ err: failure }, "following the run failed");
    }

    const payloads = renderRun(
      view(state, {
        ...(reason ? { reason } : {}),
        ...(ctl.stoppedBy ? { stoppedBy: ctl.stoppedBy } : {}),
        files,
      }),
    );
    try {
      await write(payloads, true);
    } catch (err) {
      log.error({ err, code: slackErrorCode(err) }, "final edit failed; posting the answer anew");
      sent.length = 0;
      messages.length = 0;
      await write(payloads, true).catch((e: unknown) =>
        log.error({ err: e }, "could not show the final answer"),
      );
    }
    log.info(
      { state, chars: text.length, messages: messages.length, files: files.length },
      "run ended",
    );
    await this.#o.onRunEnded?.({ target, state, text, messageTs: [...messages] });
  }

  async #uploadFiles(
    target: RunTarget,
    files: readonly ResultFile[],
    log: Logger,
  ): Promise<FileNote[]> {
    const notes: FileNote[] = [];
    const uploads: UploadItem[] = [];
    const seen = new Set<string>();
    for (const f of files) {
      if (seen.has(f.file_id)) continue;
      seen.add(f.file_id);
      const bytes = decodeFile(f);
      const size = f.file_size ?? bytes?.byteLength;
      if (bytes) {
        uploads.push({ filename: f.file_name, bytes });
        notes.push({ name: f.file_name, size, attached: true });
      } else {
        notes.push({
          name: f.file_name,
          size,
          attached: false,
          reason:
            f.included_inline === false ? "too large to attach here" : "content not available",
          ...(f.download_url ? { url: f.download_url } : {}),
        });
      }
    }
    if (uploads.length === 0) return notes;
    try {
      await this.#o.writer.upload(target.key.channelId, target.key.threadTs, uploads);
    } catch (err) {
      const code = slackErrorCode(err) ?? (err instanceof TaskServiceError ? err.kind : "error");
      log.error({ err, code }, "file upload failed");
      return notes.map((n) =>
        n.attached ? { ...n, attached: false, reason: `upload to Slack failed (${code})` } : n,
      );
    }
    return notes;
  }
}
