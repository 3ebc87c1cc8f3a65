/**
 * What becomes of a run relayed by this process: one state (`Fate`), changed only by the named
 * transitions of `TRANSITIONS`, drawn in ARCHITECTURE.md (test/runs/fate-diagram.test.ts).
 */
import type { Logger } from "pino";
import type { StopRequest } from "../store/types.ts";
import type { Clock, RunStore } from "./ports.ts";

/** A Stop asked of a run relayed here: a person's, or the app's own (saying why). */
export type StopAsk = Exclude<StopRequest, { readonly kind: "forgotten" }>;

export type Fate =
  /** Followed here, its answer shown as it grows. */
  | { readonly kind: "running" }
  /** A Stop is asked of the service: refused, the run goes on. */
  | { readonly kind: "stopping"; readonly stop: StopAsk }
  /** A Stop is asked, and a hand-over too: refused or unanswered, handed over; taken, stopped. */
  | { readonly kind: "stoppingHandingOver"; readonly stop: StopAsk }
  /** It stops following here, shows its latest text and lets another instance go on. */
  | { readonly kind: "handingOver" }
  /** It is over here: its end is being shown (stopped, while a Stop holds). */
  | { readonly kind: "ending"; readonly stop?: StopAsk }
  /** Its records are forgotten: it ends without a word to Slack. */
  | { readonly kind: "forgotten" };

export type FateKind = Fate["kind"];

export type Transition =
  "stop" | "refused" | "unanswered" | "stoppedElsewhere" | "handOver" | "end" | "forget";

/**
 * Every move a fate makes (an unlisted transition leaves it as it is). Within `ending`, a Stop
 * still stops the run, and a refusal arriving late un-stops it.
 */
export const TRANSITIONS: readonly (readonly [from: FateKind, by: Transition, to: FateKind])[] = [
  ["running", "stop", "stopping"],
  ["running", "stoppedElsewhere", "stopping"],
  ["running", "handOver", "handingOver"],
  ["running", "end", "ending"],
  ["running", "forget", "forgotten"],
  ["stopping", "refused", "running"],
  ["stopping", "handOver", "stoppingHandingOver"],
  ["stopping", "unanswered", "handingOver"],
  ["stopping", "end", "ending"],
  ["stopping", "forget", "forgotten"],
  ["handingOver", "stop", "stoppingHandingOver"],
  ["handingOver", "forget", "forgotten"],
  ["stoppingHandingOver", "refused", "handingOver"],
  ["stoppingHandingOver", "unanswered", "handingOver"],
  ["stoppingHandingOver", "end", "ending"],
  ["stoppingHandingOver", "forget", "forgotten"],
  ["ending", "stop", "ending"],
  ["ending", "stoppedElsewhere", "ending"],
  ["ending", "refused", "ending"],
  ["ending", "forget", "forgotten"],
];

function stateOf(kind: FateKind, stop: StopAsk | undefined): Fate {
  if (kind === "ending") return stop === undefined ? { kind } : { kind, stop };
  if (kind !== "stopping" && kind !== "stoppingHandingOver") return { kind };
  if (stop === undefined) throw new Error(`a run ${kind} needs its Stop`); // TRANSITIONS give one
  return { kind, stop };
}

const noop = () => undefined;

export class RunFate {
  /** Aborted when the run must stop following the service now. */
  readonly #abort = new AbortController();
  #fate: Fate = { kind: "running" };
  #onRefused: (() => void) | undefined;
  #stopAnswered: Promise<void> = Promise.resolve();
  #onForgotten: () => void = () => undefined;
  readonly #forgotten = new Promise<void>((resolve) => (this.#onForgotten = resolve));

  get now(): Fate {
    return this.#fate;
  }

  /** The Stop that holds: asked of the service, or the one its end shows. */
  get stopHeld(): StopAsk | undefined {
    const fate = this.#fate;
    return fate.kind === "stopping" || fate.kind === "stoppingHandingOver" || fate.kind === "ending"
      ? fate.stop
      : undefined;
  }

  get stopping(): boolean {
    return this.stopHeld !== undefined;
  }

  /** Whether the run goes on here, or is handed over with its latest text shown. */
  get goesOn(): boolean {
    return this.#fate.kind === "running" || this.#fate.kind === "handingOver";
  }

  /** Whether it is over here: its end is being shown, or it is forgotten. */
  get over(): boolean {
    return this.#fate.kind === "ending" || this.#fate.kind === "forgotten";
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** Moves by `by` as TRANSITIONS says, holding `stop`; false when it lists no move. */
  #move(by: Transition, stop: StopAsk | undefined): boolean {
    const from = this.#fate.kind;
    const to = TRANSITIONS.find(([f, t]) => f === from && t === by)?.[2];
    if (to === undefined) return false;
    this.#fate = stateOf(to, stop);
    return true;
  }

  /** A Stop is asked; false when one holds already, or the run is forgotten. */
  stop(ask: StopAsk): boolean {
    return !this.stopping && this.#move("stop", ask);
  }

  /** The service refused the stop: the run goes on (and Stop may be pressed again). */
  refused(): void {
    if (!this.stopping || !this.#move("refused", undefined)) return;
    this.#onRefused?.();
  }

  asking(request: Promise<unknown>): void {
    this.#stopAnswered = request.then(noop, noop);
  }

  /** Settles once the service answered the stop asked (at once when none is). */
  get stopAnswered(): Promise<void> {
    return this.#stopAnswered;
  }

  get forgotten(): Promise<void> {
    return this.#forgotten;
  }

  /** No answer to the stop in time: the run is handed over. */
  unanswered(): void {
    this.#move("unanswered", undefined);
  }

  /** `fn` runs each time a refused stop lets the run go on (it shows what it held meanwhile). */
  whenRefused(fn: () => void): void {
    this.#onRefused = fn;
  }

  /** The service says the run was stopped, by whom another instance recorded. */
  stoppedElsewhere(stop: StopAsk): void {
    if (!this.stopping) this.#move("stoppedElsewhere", stop);
  }

  /** Shutdown or a lost lease: the run stops following here and is handed over. */
  handOver(why: string): void {
    this.#move("handOver", this.stopHeld);
    const { kind } = this.#fate;
    if (kind === "handingOver" || kind === "stoppingHandingOver") this.#abort.abort(new Error(why));
  }

  /** Its end is shown here (stopped, if a Stop holds). */
  end(): void {
    this.#move("end", this.stopHeld);
  }

  /** A stopped run that does not end in time: following it is cut. */
  cut(why: string): void {
    this.#abort.abort(new Error(why));
  }

  /** Its workspace is gone: the run ends without a word to Slack and without its record. */
  forget(why: string): void {
    this.#move("forget", undefined);
    this.#abort.abort(new Error(why));
    this.#onForgotten();
  }
}

/** How long a run whose following was cut waits for its Stop's answer (well within shutdown's). */
export const STOP_ANSWER_MS = 3000;

/**
 * Following was cut while a Stop was asked: waits a moment for the service's answer; without
 * one the run is handed over, with who pressed Stop recorded for its next owner.
 */
export async function awaitStopAnswer(
  fate: RunFate,
  deps: {
    readonly clock: Clock;
    readonly store: Pick<RunStore, "requestStop">;
    readonly log: Logger;
    readonly runId: string;
  },
): Promise<void> {
  const held = fate.stopHeld;
  let timer: unknown;
  const late = new Promise<"late">((resolve) => {
    timer = deps.clock.setTimeout(() => resolve("late"), STOP_ANSWER_MS);
  });
  const first = await Promise.race([
    fate.stopAnswered.then(() => "answered" as const),
    fate.forgotten.then(() => "forgotten" as const),
    late,
  ]);
  deps.clock.clearTimeout(timer);
  if (first !== "late" || !fate.stopping) return;
  deps.log.warn("no answer to the stop in time: handing the run over");
  if (held?.kind === "person")
    await deps.store.requestStop(deps.runId, held).catch(() => undefined);
  fate.unanswered();
}
