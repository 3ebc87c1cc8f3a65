/**
 * The life of one relayed run: follow it on the service, show its answer as it grows (answer/),
 * and end it in a final state with its files; or hand it over with its latest text recorded.
 */
import type { Logger } from "pino";
import { TaskServiceError } from "../service/errors.ts";
import { type FinalRun, type FollowOptions, followRun } from "../service/follow.ts";
import { formatBytes } from "../util/bytes.ts";
import { GrowingText } from "../util/text.ts";
import type { RelayedRunProgress, RunState } from "../store/types.ts";
import { ended } from "../view/completion.ts";
import { slackErrorCode } from "../view/errors.ts";
import {
  encodeStopValue,
  type FileNote,
  PLAN_STEPS_SHOWN,
  type RunView,
  renderRun,
} from "../view/render.ts";
import { deliverAnswer, type DeliveryContext } from "./file-delivery.ts";
import { awaitStopAnswer, type Fate, type RunFate } from "./fate.ts";
import { LeaseKeeper } from "./lease-keeper.ts";
import { AnswerMemory } from "./memory.ts";
import type {
  Clock,
  RunStore,
  SlackWriter,
  StepResult,
  TaskService,
  WorkflowSteps,
} from "./ports.ts";
import type { RelayCounters } from "./relay-metrics.ts";
import { type AnswerSinkOptions, openAnswerSink } from "./answer/index.ts";
import type { AnswerSink } from "./answer/sink.ts";
import { appendCapped } from "./answer/cap.ts";
import {
  EndedHere,
  failedReason,
  INTERRUPTED,
  quarantined,
  failureReason,
  finalText,
  type RunEnd,
  stateOf,
} from "./outcome.ts";
import { recordOf, serviceRef, type ShownRun, stepOf } from "./record.ts";

export interface RunDeps extends Pick<DeliveryContext, "previews" | "memory"> {
  readonly service: TaskService;
  readonly writer: SlackWriter;
  readonly store: RunStore;
  readonly clock: Clock;
  readonly counters: RelayCounters;
  readonly instanceId: string;
  readonly leaseTtlMs: number;
  /** How answers reach Slack, and how the agent's steps show (default: a plan). */
  readonly streaming: Pick<AnswerSinkOptions, "mode" | "rotateMs" | "display">;
  readonly follow: Omit<FollowOptions, "signal" | "resumeText">;
  readonly onEnded: (end: RunEnd) => Promise<void>;
  readonly workflowSteps?: WorkflowSteps | undefined;
}

/** How long a too-large answer's stop is waited for before the run ends anyway. */
const STOP_TOO_LARGE_MS = 10_000;

/** How a relay of a run begins: a new run, one another instance left, or one that killed them. */
export type RunStart = "new" | "resumed" | "quarantined";

/** Why a workflow step fails when its run's records are forgotten. */
export const STEP_FORGOTTEN =
  "its Slack message, its channel or the records of its task were deleted, so it was stopped";

const RECORD_GONE =
  "the run's record is gone: its workspace, channel or thread was forgotten; stopping it quietly";

/** How long a hand-over waits to show the latest text before it lets the run go. */
export const HANDOVER_FLUSH_MS = 1000;

export class Run {
  readonly #deps: RunDeps;
  readonly #fate: RunFate;
  readonly #start: RunStart;
  readonly #log: Logger;
  readonly #sink: AnswerSink;
  readonly #lease: LeaseKeeper;
  readonly #stopValue: string;
  /** Its first write failed (the store was down): the record is still to be written anew. */
  #unrecorded: boolean;
  #record: ShownRun;
  /** The answer as shown while it runs (at most MAX_ANSWER_CHARS), and all of it. */
  #text: string;
  readonly #whole: GrowingText;
  /** Text that came while a Stop was asked: dropped if it takes, the answer's if refused. */
  #held = "";
  /** When the oldest delta not yet shown arrived. */
  #unshownSince: number | undefined;
  #serviceStatus: string | undefined;
  /** The agent's steps so far: their count and the latest few, latest last. */
  #steps: { count: number; last: string; recent: string[] } | undefined;
  #edits = 0;
  #persisting: Promise<void> = Promise.resolve();
  /** The answer's share of the process's memory. */
  readonly #memory: AnswerMemory;

  constructor(
    deps: RunDeps,
    record: ShownRun,
    fate: RunFate,
    start: RunStart,
    log: Logger,
    unrecorded = false,
  ) {
    this.#unrecorded = unrecorded;
    this.#deps = deps;
    this.#record = record;
    this.#fate = fate;
    this.#start = start;
    const shown = record.kind === "relaying" ? record.shownText : "";
    this.#text = shown;
    this.#whole = new GrowingText(shown);
    this.#memory = new AnswerMemory(deps.memory);
    const { channelId, threadTs, teamId } = record.key;
    this.#log = log.child({ runId: record.runId, teamId, channel: channelId, thread: threadTs });
    this.#stopValue = encodeStopValue({ channelId, threadTs, runId: record.runId });
    this.#sink = openAnswerSink({
      ...deps.streaming,
      writer: deps.writer,
      channelId,
      threadTs,
      initial: record.kind === "relaying" ? record : { messageTs: record.messageTs },
      recipient: { userId: record.owner, teamId },
      resumed: start !== "new",
      clock: deps.clock,
      log: this.#log,
      onMoved: () => this.#persist({}),
      reshow: () => {
        if (!this.#fate.over && this.#fate.now.kind !== "handingOver") void this.#showInterim();
      },
    });
    // A refused Stop: what came while it was asked is shown (by #handOver if handed over).
    fate.whenRefused(() => {
      if (fate.now.kind === "running") this.#take("");
    });
    this.#lease = new LeaseKeeper({
      store: deps.store,
      runId: record.runId,
      owner: deps.instanceId,
      ttlMs: deps.leaseTtlMs,
      clock: deps.clock,
      log: this.#log,
      onLost: (why) => this.#letGo(why),
      onGone: () => this.#letGo(RECORD_GONE, true),
      recorded: () => !this.#unrecorded,
    });
  }

  /** Relays the run to its final state or hand-over. Never rejects. */
  async run(): Promise<void> {
    this.#lease.start();
    try {
      const { final, failure } = await this.#follow();
      // Following was cut (a hand-over) while a Stop was asked: the service's answer decides.
      const asked = { ...this.#deps, log: this.#log, runId: this.#record.runId };
      if (this.#fate.stopping && !final) await awaitStopAnswer(this.#fate, asked);
      if (this.#fate.goesOn) this.#take(""); // a refused Stop's held text is the answer's
      const { kind } = this.#fate.now;
      if (kind === "forgotten") await this.#forget(true);
      else if (kind === "handingOver") await this.#handOver();
      else await this.#finish(final, failure);
    } catch (err) {
      this.#log.error({ err }, "relay failed");
    } finally {
      this.#lease.stop();
      this.#memory.release();
    }
  }

  async #follow(): Promise<{ final?: FinalRun; failure?: unknown }> {
    // Its creator died before the service answered: nothing to follow.
    const record = this.#record;
    if (record.kind === "reserved") return { failure: new EndedHere(INTERRUPTED) };
    // Instances died relaying it: it is not followed again, and says where its result is.
    if (this.#start === "quarantined") {
      return { failure: new EndedHere(quarantined(record.openRelays ?? 0)) };
    }
    const { service, follow, counters } = this.#deps;
    try {
      // What an earlier owner showed counts as kept: the service's text goes on from it.
      this.#memory.grow(Buffer.byteLength(record.shownText, "utf8"));
      const updates = followRun(
        service,
        { ...record.ref, agentRunId: record.runId },
        {
          ...follow,
          signal: this.#fate.signal,
          resumeText: record.shownText,
          textBudget: this.#memory,
        },
      );
      for (;;) {
        const step = await updates.next();
        if (step.done) return { final: step.value };
        const u = step.value;
        if (u.type === "delta") {
          counters.delta();
          if (this.#fate.stopping) this.#held += u.text;
          else this.#take(u.text);
        } else if (u.type === "step" || u.type === "status") {
          this.#progress(u);
        } else if (u.type === "transport") {
          this.#log.info({ mode: u.mode, reason: u.reason }, "run transport changed");
        }
      }
    } catch (err) {
      if (err instanceof TaskServiceError && err.kind === "too_large")
        await this.#stopTooLarge(err);
      return { failure: err };
    }
  }

  /** The answer passed what this app keeps of it: the run is stopped, saying why. */
  async #stopTooLarge(err: TaskServiceError): Promise<void> {
    const max = formatBytes(this.#memory.maxBytes);
    const reason = this.#memory.processFull
      ? `the app holds too many long answers at once to keep more of this one; what came is kept, and all of it is in the task service's History`
      : err.limit === "answer"
        ? `its answer passed ${max}, the most this app keeps of one answer; what came first is kept, and all of it is in the task service's History`
        : `the task service sent more than this app reads at once (${err.message}); what came before is kept, and all of it is in the task service's History`;
    this.#log.warn(
      { keptBytes: Buffer.byteLength(this.#whole.text, "utf8"), max, err },
      "answer too large: stopping the run",
    );
    if (!this.#fate.stop({ kind: "app", reason })) return;
    const record = this.#record;
    if (record.kind !== "relaying") return;
    const signal = AbortSignal.timeout(STOP_TOO_LARGE_MS);
    await this.#deps.service.stopAgent(record.ref, { signal }).catch((err: unknown) => {
      // Stopped or ended already, or the service is away: the run ends here all the same.
      this.#log.warn({ err }, "could not stop a run whose answer is too large");
    });
  }

  /** Adds text to the answer (after any held while a refused Stop was asked) and shows it. */
  #take(text: string): void {
    const more = this.#held + text;
    this.#held = "";
    if (more === "") return;
    const shown = this.#text;
    this.#text = appendCapped(shown, more);
    this.#whole.append(more);
    if (this.#text === shown) return;
    this.#unshownSince ??= this.#deps.clock.now();
    void this.#showInterim();
  }

  async #showInterim(): Promise<void> {
    const since = { at: undefined as number | undefined, text: "" };
    const take = () => {
      since.at = this.#unshownSince;
      since.text = this.#text;
      this.#unshownSince = undefined;
    };
    try {
      const shown = await this.#sink.show({
        text: () => {
          take();
          return this.#text;
        },
        render: (from) => {
          if (!this.#fate.goesOn) return; // over, or a Stop is asked: the final edit follows
          take();
          return renderRun(this.#view("running", { text: this.#text.slice(from) }));
        },
      });
      if (shown) {
        const { counters, clock } = this.#deps;
        this.#edits++;
        counters.edit();
        if (since.at !== undefined) counters.lag(clock.now() - since.at);
        await this.#persist({ shownText: since.text });
      } else if (since.at !== undefined) this.#unshownSince ??= since.at;
    } catch (err) {
      this.#log.warn({ err, code: slackErrorCode(err) }, "interim edit failed");
    }
  }

  #view(state: RunState, extra: Partial<RunView> = {}): RunView {
    const { remark } = this.#record;
    return {
      text: this.#text,
      state,
      elapsedMs: this.#deps.clock.now() - this.#record.startedAt,
      stopValue: this.#stopValue,
      thread: { channelId: this.#record.key.channelId, threadTs: this.#record.key.threadTs },
      ...(remark ? { remark } : {}),
      ...(this.#serviceStatus ? { serviceStatus: this.#serviceStatus } : {}),
      ...(this.#steps
        ? { steps: { ...this.#steps, as: this.#deps.streaming.display ?? "plan" } }
        : {}),
      ...extra,
    };
  }

  /** A step or a status the service reported, for the status line (and the sink's steps). */
  #progress(u: { type: "step"; title: string } | { type: "status"; status: string }): void {
    if (this.#fate.stopping) return;
    if (u.type === "status") this.#serviceStatus = u.status;
    else {
      const recent = [...(this.#steps?.recent ?? []), u.title].slice(-PLAN_STEPS_SHOWN);
      this.#steps = { count: (this.#steps?.count ?? 0) + 1, last: u.title, recent };
      this.#sink.step(u.title);
    }
    void this.#showInterim();
  }

  /** Keeps the run's record current (in order), so a new owner starts where this one is. */
  #persist(change: RelayedRunProgress): Promise<void> {
    const record = recordOf(this.#fate.now, this.#record, change, this.#sink.place);
    if (!record) return this.#persisting; // its records are forgotten
    this.#record = record;
    this.#persisting = this.#persisting.then(() =>
      this.#keep(record).then(
        (kept) => void (kept || this.#letGo(RECORD_GONE, true)),
        (err: unknown) => this.#log.warn({ err }, "could not record progress"),
      ),
    );
    return this.#persisting;
  }

  /** Rewrites the run's record (anew if its first write failed); false if it is gone. */
  async #keep(record: ShownRun): Promise<boolean> {
    const { store } = this.#deps;
    if (!this.#unrecorded) return store.updateRun(record);
    await store.putRun(record);
    this.#unrecorded = false;
    return true;
  }

  #letGo(why: string, forgotten = false): void {
    if (this.#fate.over) return;
    this.#log.warn(why);
    if (forgotten) this.#fate.forget(why);
    else this.#fate.handOver(why);
  }

  /** Its records are forgotten: stopped at the service, no word in its thread; its step fails. */
  async #forget(stopAtService: boolean): Promise<void> {
    const ref = serviceRef(this.#record);
    if (stopAtService && ref) {
      await this.#deps.service.stopAgent(ref).catch((err: unknown) => {
        this.#log.warn({ err }, "could not stop a run whose records are forgotten");
      });
    }
    this.#log.info("run stopped: its records are forgotten (nothing more shown in Slack)");
    const step = stepOf(this.#record);
    if (!step || !this.#deps.workflowSteps) return;
    await this.#deps.workflowSteps.end(this.#record.key.teamId, step, {
      state: "stopped",
      answer: "",
      reason: STEP_FORGOTTEN,
      files: [],
    });
  }

  /** Shows the latest text (bounded: shutting down must not wait), lets the run go. */
  async #handOver(): Promise<void> {
    if (this.#unshownSince !== undefined) {
      await Promise.race([
        this.#showInterim(),
        new Promise((resolve) =>
          this.#deps.clock.setTimeout(() => resolve(undefined), HANDOVER_FLUSH_MS),
        ),
      ]);
    }
    // Let go on purpose: its next owner does not count this relay as one that died.
    await this.#persist({ openRelays: Math.max(0, (this.#record.openRelays ?? 1) - 1) });
    await this.#lease.release();
    await this.#sink.leave("handing over");
    this.#deps.counters.handedOver();
    this.#log.info({ chars: this.#text.length }, "run handed over");
  }

  async #finish(final: FinalRun | undefined, failure: unknown): Promise<void> {
    this.#fate.end();
    // Its heaviest steps begin: an instance that dies now likely died of this run.
    if (this.#start !== "quarantined") await this.#persist({ finishing: true });
    // Stopped from another instance: the request is in the store, or its record is gone.
    if (!this.#fate.stopping && final?.status === "stopped") {
      const { store } = this.#deps;
      const { runId } = this.#record;
      let asked = await store.stopRequest(runId).catch(() => undefined);
      if (!asked && !this.#unrecorded) {
        const gone = (await store.getRun(runId).catch(() => "unknown")) === undefined;
        if (gone) asked = { kind: "forgotten" };
      }
      if (asked?.kind === "forgotten") return this.#forget(false);
      if (asked) this.#fate.stoppedElsewhere(asked);
    }
    const fate = this.#fate.now; // who stopped it, whatever a refusal arriving late says
    const { state, reason, files } = await this.#outcome(final, failure);
    const shown = await this.#showFinal(state, reason, files, fate);
    this.#deps.counters.ended(state, this.#deps.clock.now() - this.#record.startedAt);
    this.#log.info(
      {
        state,
        chars: this.#text.length,
        messages: this.#sink.place.messageTs.length,
        files: files.length,
        edits: this.#edits + 1,
      },
      "run ended",
    );
    await this.#cleanUp(state, {
      state,
      answer: this.#text,
      reason: shown.reason,
      stoppedBy: shown.stoppedBy,
      files: files.map((f) => f.name),
      thread: this.#record.key,
    });
  }

  async #outcome(
    final: FinalRun | undefined,
    failure: unknown,
  ): Promise<{ state: RunState; reason?: string; files: FileNote[] }> {
    // A run that finished on its own before the stop took keeps its result and files.
    const finishedAnyway =
      final !== undefined && (final.status === "completed" || final.status === "failed");
    if (this.#fate.stopping && !finishedAnyway) {
      return { state: "stopped", files: await this.#deliver(this.#whole.text) };
    }
    if (!final) {
      this.#log.error({ err: failure }, "following the run failed");
      const reason = failureReason(failure, this.#record.runId);
      return { state: "error", reason, files: await this.#deliver(this.#whole.text) };
    }
    const state = stateOf(final.status);
    const files = await this.#deliver(finalText(final), final.files);
    const reason = state === "failed" ? failedReason(final) : undefined;
    return { state, ...(reason ? { reason } : {}), files };
  }

  /** The run's files and, when its messages cannot show all of it, the whole answer. */
  async #deliver(text: string, files: FinalRun["files"] = []): Promise<FileNote[]> {
    const record = this.#record;
    if (record.kind === "reserved") return []; // it never reached the service: no files
    const delivered = await deliverAnswer(
      {
        ...this.#deps,
        record,
        resumed: this.#start !== "new",
        persist: (change) => this.#persist(change),
        log: this.#log,
      },
      text,
      files,
    );
    this.#text = delivered.text;
    return delivered.notes;
  }

  async #showFinal(state: RunState, reason: string | undefined, files: FileNote[], fate: Fate) {
    const stop = fate.kind === "ending" ? fate.stop : undefined;
    const stoppedBy = stop?.kind === "person" ? stop.userId : undefined;
    const stopReason = state === "stopped" && stop?.kind === "app" ? stop.reason : undefined;
    const why = reason ?? stopReason;
    const view = this.#view(state, {
      ...(why ? { reason: why } : {}),
      ...(stoppedBy ? { stoppedBy } : {}),
      files,
    });
    const text = this.#text;
    // With its completion record; sealed parts of a rotated stream keep the head of the text.
    const render = (from: number) =>
      renderRun(ended(this.#record, { ...view, text: text.slice(from) }));
    // The final edit shows the last deltas too: count its lag like the others'.
    if ((await this.#sink.final({ text, render })) && this.#unshownSince !== undefined) {
      this.#deps.counters.lag(this.#deps.clock.now() - this.#unshownSince);
    }
    return { reason: why, stoppedBy };
  }

  /** After the final state is shown: the working message goes, its step ends, its record goes. */
  async #cleanUp(state: RunState, result: StepResult): Promise<void> {
    const { store, onEnded, workflowSteps } = this.#deps;
    const { runId } = this.#record;
    await this.#sink.removeControl();
    // Before the record goes: an instance dying now leaves the run to one that ends it again
    // (a step ended already ignores that).
    const step = stepOf(this.#record);
    if (step && workflowSteps) await workflowSteps.end(this.#record.key.teamId, step, result);
    // Gone before the queue is drained: a follow-up's run is never taken for this one's sequel.
    await this.#persisting;
    await store
      .deleteRun(runId)
      .catch((err: unknown) => this.#log.warn({ err }, "could not clear the run"));
    await this.#lease.release();
    await onEnded({
      record: this.#record,
      state,
      text: this.#text,
      messageTs: [...this.#sink.place.messageTs],
    });
  }
}
