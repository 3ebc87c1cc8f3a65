/**
 * The relay moves one agent run from the task service into one Slack thread: it follows
 * the run, edits the bot's message as text arrives (coalesced, at most one edit per
 * `editIntervalMs` per run), splits long answers across messages, and always ends the run
 * in a final, visible state with its files uploaded.
 *
 * Each relayed run is owned through a lease in the store and recorded in the store's index
 * of unfinished runs (its messages, the text shown, the upload state). If this instance
 * dies, another one takes the run over from that record and finishes the same messages;
 * on shutdown the run is handed over at once.
 */
import type { Logger } from "pino";
import type { TaskService, ThreadRef } from "../service/client.ts";
import { type FinalRun, type FollowOptions, followRun } from "../service/follow.ts";
import type { ResultFile } from "../service/schemas.ts";
import { describeServiceError, slackErrorCode } from "../view/errors.ts";
import { streamablePrefix } from "../view/markdown.ts";
import {
  encodeStopValue,
  MESSAGE_MARKDOWN_LIMIT,
  type FileNote,
  type MessagePayload,
  type RunState,
  type RunView,
  renderRun,
} from "../view/render.ts";
import { neutralizeMentions } from "../view/sanitize.ts";
import type { SlackWriter, ThreadStore, UploadItem } from "./ports.ts";
import type { RunRecord, SlackThreadKey } from "../store/types.ts";

export interface RunTarget {
  readonly key: SlackThreadKey;
  readonly ref: ThreadRef;
  readonly runId: string;
  /** The bot message already posted in the thread for this run. */
  readonly messageTs: string;
  readonly startedAt: number;
  /** A remark shown under the answer (e.g. attachments that were not sent). */
  readonly note?: string;
  /** Who asked: native streams are addressed to them. */
  readonly owner?: string;
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
  readonly store: ThreadStore;
  readonly logger: Logger;
  readonly editIntervalMs: number;
  /** Edit the message as text arrives (default), or use Slack's native streaming. */
  readonly streaming?: "edit" | "native";
  /** Who this instance is, as lease holder. */
  readonly instanceId: string;
  /** How long a run's lease lasts without renewal (renewed every third of it). */
  readonly leaseTtlMs?: number;
  readonly follow?: Omit<FollowOptions, "signal" | "resumeText">;
  /** Called once per run after its final state is shown (queue draining, store updates). */
  readonly onRunEnded?: (outcome: RunOutcome) => Promise<void>;
  /** How long to wait for a stopped run to report its end before giving up on it. */
  readonly stopGraceMs?: number;
}

interface Control {
  readonly abort: AbortController;
  stoppedBy: string | undefined;
  /** Set when the run is handed to another instance instead of finished here. */
  handover: boolean;
  done: Promise<void>;
}

const MIME_TEXT = /^text\/|json|xml|csv|markdown|svg/;
export const runLease = (runId: string) => `run:${runId}`;
/** How long a hand-over waits to show the latest text before it lets the run go. */
const HANDOVER_FLUSH_MS = 1000;
/** Run ids of tasks still being created (no service run yet). */
const PENDING = "pending:";
const INTERRUPTED =
  "This was interrupted before the task service answered (the app restarted). Please try again: run `/task`, or send your message again.";

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

/** Lag from a delta's arrival to the Slack call that shows it (ms), as a small histogram. */
const LAG_BUCKETS = [100, 250, 500, 1000, 2000, 5000, 10_000, 30_000] as const;

export interface RelayMetrics {
  runs: { started: number; resumed: number; handedOver: number; ended: Record<string, number> };
  deltas: number;
  edits: number;
  lagMs: { count: number; sum: number; max: number; le: Record<string, number> };
}

function emptyMetrics(): RelayMetrics {
  return {
    runs: { started: 0, resumed: 0, handedOver: 0, ended: {} },
    deltas: 0,
    edits: 0,
    lagMs: {
      count: 0,
      sum: 0,
      max: 0,
      le: Object.fromEntries([...LAG_BUCKETS.map((b) => [String(b), 0]), ["+Inf", 0]]),
    },
  };
}

export class Relay {
  readonly #o: RelayOptions;
  readonly #runs = new Map<string, Control>();
  readonly #leaseTtl: number;
  readonly #metrics = emptyMetrics();
  /** Tasks being created here, with the timer that keeps their lease. */
  readonly #reserved = new Map<string, NodeJS.Timeout>();

  /** Counters since start, for the metrics endpoint. */
  metrics(): RelayMetrics {
    return structuredClone(this.#metrics);
  }

  #observeLag(ms: number): void {
    const lag = this.#metrics.lagMs;
    lag.count++;
    lag.sum += ms;
    lag.max = Math.max(lag.max, ms);
    const bucket = String(LAG_BUCKETS.find((b) => ms <= b) ?? "+Inf");
    lag.le[bucket] = (lag.le[bucket] ?? 0) + 1;
  }

  constructor(options: RelayOptions) {
    this.#o = options;
    this.#leaseTtl = options.leaseTtlMs ?? 15_000;
  }

  get activeRuns(): number {
    return this.#runs.size;
  }

  get instanceId(): string {
    return this.#o.instanceId;
  }

  isActive(runId: string): boolean {
    return this.#runs.has(runId) || this.#reserved.has(runId);
  }

  /**
   * Starts relaying a new run: records it as unfinished and takes its lease, then follows it
   * in the background. Resolves once the run is recorded; never rejects.
   */
  async start(target: RunTarget): Promise<void> {
    const record: RunRecord = {
      runId: target.runId,
      key: target.key,
      ref: target.ref,
      messageTs: [target.messageTs],
      shownText: "",
      startedAt: target.startedAt,
      ...(target.note ? { note: target.note } : {}),
      ...(target.owner ? { owner: target.owner } : {}),
      uploads: "pending",
    };
    try {
      await this.#o.store.putRun(record);
      if (
        !(await this.#o.store.acquireLease(
          runLease(target.runId),
          this.#o.instanceId,
          this.#leaseTtl,
        ))
      ) {
        return; // someone else relays it already
      }
    } catch (err) {
      // Without the store the run cannot be handed over, but it can still be shown.
      this.#o.logger.warn(
        { err, runId: target.runId },
        "could not record the run; relaying anyway",
      );
    }
    this.#metrics.runs.started++;
    void this.#launch(record, false);
  }

  /**
   * Records a task that is being created, before the service has answered: if this instance
   * dies meanwhile, another one ends its "working…" message instead of leaving it spinning.
   */
  async reserve(key: SlackThreadKey, messageTs: string, startedAt: number): Promise<string> {
    const runId = `${PENDING}${key.teamId}:${key.channelId}:${messageTs}`;
    await this.#o.store.putRun({
      runId,
      key,
      ref: { projectId: "", threadId: "" },
      messageTs: [messageTs],
      shownText: "",
      startedAt,
      uploads: "pending",
    });
    await this.#o.store.acquireLease(runLease(runId), this.#o.instanceId, this.#leaseTtl);
    // Creating a task can take longer than a lease: keep it while this instance lives.
    const renew = setInterval(
      () => {
        void this.#o.store
          .renewLease(runLease(runId), this.#o.instanceId, this.#leaseTtl)
          .catch(() => undefined);
      },
      Math.max(50, Math.floor(this.#leaseTtl / 3)),
    );
    renew.unref();
    this.#reserved.set(runId, renew);
    return runId;
  }

  /** Drops a reservation once the run is recorded (or the creation failed visibly). */
  async release(runId: string): Promise<void> {
    clearInterval(this.#reserved.get(runId));
    this.#reserved.delete(runId);
    await this.#o.store.deleteRun(runId);
    await this.#o.store.releaseLease(runLease(runId), this.#o.instanceId);
  }

  /** Finishes a run another instance started, from its record; the caller holds its lease. */
  resume(record: RunRecord): Promise<void> {
    this.#o.logger.info({ runId: record.runId, shown: record.shownText.length }, "resuming a run");
    this.#metrics.runs.resumed++;
    return this.#launch(record, true);
  }

  #launch(record: RunRecord, resumed: boolean): Promise<void> {
    const existing = this.#runs.get(record.runId);
    if (existing) return existing.done;
    const ctl: Control = {
      abort: new AbortController(),
      stoppedBy: record.stoppedBy,
      handover: false,
      done: Promise.resolve(),
    };
    this.#runs.set(record.runId, ctl);
    ctl.done = this.#relay(record, ctl, resumed)
      .catch((err: unknown) => {
        this.#o.logger.error({ err, runId: record.runId }, "relay failed");
      })
      .finally(() => {
        this.#runs.delete(record.runId);
      });
    return ctl.done;
  }

  /**
   * Stops a run: asks the service to stop and ends the message as "stopped by". When another
   * instance relays the run, the request is recorded for it. Returns false when the run is
   * not known as unfinished anywhere.
   */
  async stop(runId: string, ref: ThreadRef, userId: string): Promise<boolean> {
    const ctl = this.#runs.get(runId);
    if (!ctl) {
      const record = await this.#o.store.getRun(runId);
      if (!record) return false;
      await this.#o.store.requestStop(runId, userId);
      await this.#o.service.stopAgent(ref).catch((err: unknown) => {
        this.#o.logger.warn({ err, runId }, "stop request failed");
      });
      return true;
    }
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

  /**
   * Shutdown: every run is handed over at once. Its latest text is shown and recorded, its
   * lease released, so another instance (or this one after a restart) continues it.
   */
  async handover(): Promise<void> {
    for (const ctl of this.#runs.values()) {
      ctl.handover = true;
      ctl.abort.abort(new Error("handing over"));
    }
    await Promise.allSettled([...this.#runs.values()].map((c) => c.done));
  }

  async #relay(initial: RunRecord, ctl: Control, resumed: boolean): Promise<void> {
    const { writer, logger, store } = this.#o;
    const target = initial;
    const channel = target.key.channelId;
    const log = logger.child({ runId: target.runId, channel, thread: target.key.threadTs });
    let messages: string[] = [...target.messageTs];
    const sent: string[] = [];
    let record = initial;
    let text = initial.shownText;
    let dirty = false;
    let timer: NodeJS.Timeout | undefined;
    let inflight: Promise<void> | undefined;
    let lastEditAt = 0;
    let closed = false;
    /** The run is over here (not handed over): interim edits give way to the final one. */
    let ending = false;
    const stopValue = encodeStopValue({
      channelId: channel,
      threadTs: target.key.threadTs,
      runId: target.runId,
    });

    /** Keeps the run's record current, so a new owner starts where this one is. */
    const persist = async (change: Partial<RunRecord>) => {
      record = { ...record, ...change, messageTs: [...messages], shownText: text };
      await store
        .putRun(record)
        .catch((err: unknown) => log.warn({ err }, "could not record progress"));
    };

    // The lease: renewed while the run is relayed here. Losing it (another instance took the
    // run over while this one was stalled) hands the run to that instance.
    const leaseName = runLease(target.runId);
    let renewedAt = Date.now();
    const letGo = (why: string) => {
      if (closed) return;
      log.warn(why);
      ctl.handover = true;
      ctl.abort.abort(new Error(why));
    };
    const renew = async () => {
      const me = this.#o.instanceId;
      try {
        const mine =
          (await store.renewLease(leaseName, me, this.#leaseTtl)) ||
          (await store.acquireLease(leaseName, me, this.#leaseTtl));
        if (mine) renewedAt = Date.now();
        else letGo("lost the run's lease to another instance; handing over");
      } catch (err) {
        // The store is unreachable. If nobody can reach it, nobody can take the run over, so
        // keep relaying; but once the lease must have lapsed, an instance that still reaches
        // the store may own the run: stop here rather than finish it twice.
        log.warn({ err }, "could not renew the run's lease");
        if (Date.now() - renewedAt > this.#leaseTtl) {
          letGo("the run's lease lapsed while the store was unreachable; letting it go");
        }
      }
    };
    const lease = setInterval(() => void renew(), Math.max(50, Math.floor(this.#leaseTtl / 3)));
    lease.unref();

    /**
     * Writes payloads to the run's messages: updates what changed, posts new parts, removes
     * extras. Returns whether anything reached Slack (an interim edit may be dropped unsent).
     */
    const write = async (
      payloads: MessagePayload[],
      final: boolean,
      latest?: () => MessagePayload[],
    ): Promise<boolean> => {
      let wrote = false;
      for (let i = 0; i < payloads.length; i++) {
        if (ending && !final) return wrote;
        const payload = payloads[i];
        if (!payload) continue;
        const json = JSON.stringify(payload);
        if (sent[i] === json) continue;
        const ts = messages[i];
        if (ts === undefined) {
          messages.push(await writer.post(channel, payload, target.key.threadTs));
          sent[i] = json;
          wrote = true;
        } else {
          // An interim edit renders the latest text when it is sent (it may wait for budget).
          const body = latest
            ? () => {
                const now = latest()[i] ?? payload;
                sent[i] = JSON.stringify(now);
                wrote = true;
                return now;
              }
            : payload;
          try {
            await writer.update(channel, ts, body, { final });
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
            sent[i] = json;
            wrote = true;
          }
          if (!latest) {
            sent[i] = json;
            wrote = true;
          }
        }
      }
      if (final) {
        for (const extra of messages.splice(payloads.length)) {
          await writer
            .remove(channel, extra)
            .catch((err: unknown) => log.warn({ err }, "could not remove a surplus message"));
        }
      }
      return wrote;
    };

    const view = (state: RunState, extra: Partial<RunView> = {}): RunView => ({
      text,
      state,
      elapsedMs: Date.now() - target.startedAt,
      stopValue,
      ...(target.note ? { note: target.note } : {}),
      ...extra,
    });

    // Lag: from the arrival of the oldest delta not yet shown to the call that shows it.
    let unshownSince: number | undefined;
    let edits = 0;
    let runLagMax = 0;
    let runLagSum = 0;
    // Native streaming (a new run only; a resumed one continues by editing): the answer is
    // appended to a stream message while the "working…" message keeps the Stop button.
    let nativeOn = this.#o.streaming === "native" && !resumed && initial.owner !== undefined;
    let streamTs: string | undefined;
    let streamed = "";
    const leaveNative = async (why: string) => {
      nativeOn = false;
      log.info({ why }, "native streaming ended; editing the message from now on");
      if (streamTs) {
        await writer.stopStream(channel, streamTs).catch(() => undefined);
        sent.length = 0; // the stream message gets the full rendering by the next edit
      }
    };
    const nativeFlush = async () => {
      const safe = streamablePrefix(text);
      const add = safe.slice(streamed.length);
      if (add === "") return;
      try {
        if (streamTs === undefined) {
          const control = messages[0];
          streamTs = await writer.startStream(
            channel,
            target.key.threadTs,
            { userId: initial.owner ?? "", teamId: target.key.teamId },
            neutralizeMentions(add),
          );
          messages = [streamTs];
          await persist(control ? { controlTs: control } : {});
        } else {
          await writer.appendStream(channel, streamTs, neutralizeMentions(add));
        }
        streamed = safe;
        if (streamed.length > MESSAGE_MARKDOWN_LIMIT)
          await leaveNative("the answer outgrew one message");
      } catch (err) {
        // Expired (message_not_in_streaming_state), stopped by the user, or refused: go on
        // by editing the same message (or the working message if no stream started).
        await leaveNative(slackErrorCode(err) ?? String(err));
      }
    };

    const interim = async () => {
      dirty = false;
      lastEditAt = Date.now();
      const since = unshownSince;
      unshownSince = undefined;
      if (nativeOn) await nativeFlush();
      if (!nativeOn) {
        const render = () => renderRun(view("running"));
        if (!(await write(render(), false, render)) && ending) {
          // Dropped for the final edit, which shows this text and counts its lag.
          unshownSince = since ?? unshownSince;
          return;
        }
      }
      edits++;
      this.#metrics.edits++;
      if (since !== undefined) {
        const lag = Date.now() - since;
        this.#observeLag(lag);
        runLagMax = Math.max(runLagMax, lag);
        runLagSum += lag;
      }
      await persist({});
    };
    const flushInterim = () => {
      timer = undefined;
      if (!dirty || closed || ctl.stoppedBy !== undefined) return;
      inflight = interim()
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
    if (target.runId.startsWith(PENDING)) {
      // Its creator died before the service answered: nothing to follow, say so.
      failure = new Error(INTERRUPTED);
    } else
      try {
        const updates = followRun(
          this.#o.service,
          { ...target.ref, agentRunId: target.runId },
          { ...this.#o.follow, signal: ctl.abort.signal, resumeText: initial.shownText },
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
            this.#metrics.deltas++;
            unshownSince ??= Date.now();
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
    if (!ctl.handover) {
      // An interim edit still waiting for the budget would only delay the final edit, which
      // shows everything it would: drop it (one being sent, or a post, is waited for).
      ending = true;
      for (const ts of messages) writer.dropPendingEdit(channel, ts);
    }
    // A hand-over must not wait long for the Slack budget; a finishing run waits its edit.
    await (ctl.handover
      ? Promise.race([inflight, new Promise((r) => setTimeout(r, HANDOVER_FLUSH_MS).unref())])
      : inflight);
    try {
      if (ctl.handover && ctl.stoppedBy === undefined) {
        // Show the latest text, record it, and let the next owner continue from there.
        // Bounded: shutting down must not wait long for the Slack budget.
        if (dirty) {
          await Promise.race([
            interim().catch((err: unknown) => log.warn({ err }, "last edit failed")),
            new Promise((resolve) => setTimeout(resolve, HANDOVER_FLUSH_MS).unref()),
          ]);
        }
        await store
          .releaseLease(runLease(target.runId), this.#o.instanceId)
          .catch((err: unknown) => log.warn({ err }, "could not release the run's lease"));
        if (nativeOn) await leaveNative("handing over");
        this.#metrics.runs.handedOver++;
        log.info({ chars: text.length }, "run handed over");
        return;
      }

      // Stopped from another instance: the request is in the store.
      if (ctl.stoppedBy === undefined && final?.status === "stopped") {
        ctl.stoppedBy = await store.stopRequester(target.runId).catch(() => undefined);
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
        files = await this.#uploadFiles(record, final.files, log, persist, resumed);
      } else {
        state = "error";
        reason =
          failure instanceof Error && failure.message === INTERRUPTED
            ? INTERRUPTED
            : describeServiceError(failure, target.runId);
        log.error({ err: failure }, "following the run failed");
      }

      if (nativeOn) await leaveNative("the run ended");
      const payloads = renderRun(
        view(state, {
          ...(reason ? { reason } : {}),
          ...(ctl.stoppedBy ? { stoppedBy: ctl.stoppedBy } : {}),
          files,
        }),
      );
      try {
        await write(payloads, true);
        // The final edit shows the last deltas too: count its lag like the others'.
        if (unshownSince !== undefined) this.#observeLag(Date.now() - unshownSince);
      } catch (err) {
        log.error({ err, code: slackErrorCode(err) }, "final edit failed; posting the answer anew");
        sent.length = 0;
        messages.length = 0;
        await write(payloads, true).catch((e: unknown) =>
          log.error({ err: e }, "could not show the final answer"),
        );
      }
      this.#metrics.runs.ended[state] = (this.#metrics.runs.ended[state] ?? 0) + 1;
      log.info(
        {
          state,
          chars: text.length,
          messages: messages.length,
          files: files.length,
          edits: edits + 1,
          lagMsMax: runLagMax,
          lagMsAvg: edits > 0 ? Math.round(runLagSum / edits) : 0,
        },
        "run ended",
      );
      // The answer lives in the stream message now: the "working…" message has done its job.
      const control = record.controlTs;
      if (control !== undefined && !messages.includes(control)) {
        await writer.remove(channel, control).catch((err: unknown) => {
          log.warn({ err }, "could not remove the working message");
        });
      }
      // Finished: nobody needs to resume it. Forgotten before the queue is drained, so that a
      // follow-up's run is never mistaken for this one's continuation.
      await store
        .deleteRun(target.runId)
        .catch((err: unknown) => log.warn({ err }, "could not clear the run"));
      await store.releaseLease(runLease(target.runId), this.#o.instanceId).catch(() => undefined);
      await this.#o.onRunEnded?.({
        target: { ...target, messageTs: messages[0] ?? initial.messageTs[0] ?? "" },
        state,
        text,
        messageTs: [...messages],
      });
    } finally {
      clearInterval(lease);
    }
  }

  async #uploadFiles(
    record: RunRecord,
    files: readonly ResultFile[],
    log: Logger,
    persist: (change: Partial<RunRecord>) => Promise<void>,
    resumed: boolean,
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
    if (uploads.length === 0 || record.uploads === "done") return notes;
    const { channelId, threadTs } = record.key;
    let todo = uploads;
    if (record.uploads === "started" || resumed) {
      // A previous owner may have uploaded some or all of them (and perhaps could not record
      // it): upload only what did not reach the thread.
      const already = await this.#o.writer
        .sharedFileNames(channelId, threadTs, record.controlTs ?? record.messageTs[0])
        .catch(() => new Set<string>());
      todo = uploads.filter((u) => !already.has(u.filename));
    }
    try {
      await persist({ uploads: "started" });
      if (todo.length > 0) await this.#o.writer.upload(channelId, threadTs, todo);
      await persist({ uploads: "done" });
    } catch (err) {
      const code = slackErrorCode(err) ?? "error";
      log.error({ err, code }, "file upload failed");
      return notes.map((n) =>
        n.attached ? { ...n, attached: false, reason: `upload to Slack failed (${code})` } : n,
      );
    }
    return notes;
  }
}
