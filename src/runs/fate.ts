/**
 * What becomes of a run relayed by this process: one state, changed only by the named
 * transitions below. The relay moves it (Stop, shutdown, the workspace uninstalled the app),
 * and so does the run itself (its lease lost, its record gone).
 *
 *     running ──stop(by)──▶ stopping ──refused()──▶ running (or handingOver, if it was asked)
 *        │                   ▲   │
 *        │                   │   └──unanswered()──▶ handingOver
 *        ├──handOver()──▶ handingOver ──stop(by)─┘   a stopping run is not handed over: it
 *        │                                           ends here, stopped (once the service
 *        │                                           answers the Stop, or hands it over)
 *        └──forget()────▶ forgotten        from any state: ends without a word to Slack
 *
 * How the run then ends: running → its final state; stopping → "stopped by"; handingOver →
 * its latest text shown and its lease released for another instance; forgotten → nothing.
 */
import type { Logger } from "pino";
import type { Clock, RunStore } from "./ports.ts";

export type Fate =
  | { readonly kind: "running" }
  | {
      readonly kind: "stopping";
      /** Who pressed Stop; none when the app itself stops it (e.g. at its maximum run time). */
      readonly by?: string | undefined;
      /** Why the app stopped it, shown with "Stopped". */
      readonly reason?: string | undefined;
    }
  | { readonly kind: "handingOver" }
  | { readonly kind: "forgotten" };

const RUNNING: Fate = { kind: "running" };

export class RunFate {
  /** Aborted when the run must stop following the service now (hand-over, forget, grace). */
  readonly abort = new AbortController();
  /** Its record could not be written when it started (the store was down): written later. */
  unrecorded: boolean;
  #fate: Fate;
  /** A hand-over was asked: where a refused stop goes back to. */
  #handOverAsked = false;
  /** Told when a refused stop lets the run go on (the run shows what it held meanwhile). */
  #onRefused: (() => void) | undefined;
  /** Settles once the service answered the latest stop asked of it. */
  #stopAnswered: Promise<void> = Promise.resolve();
  /** Resolves when the run is forgotten. */
  #onForgotten: () => void = () => undefined;
  readonly #forgotten = new Promise<void>((resolve) => (this.#onForgotten = resolve));

  constructor(options: { stoppedBy?: string | undefined; unrecorded?: boolean } = {}) {
    this.#fate =
      options.stoppedBy === undefined ? RUNNING : { kind: "stopping", by: options.stoppedBy };
    this.unrecorded = options.unrecorded ?? false;
  }

  get now(): Fate {
    return this.#fate;
  }

  /** Whether the run is being stopped (by a person, or by the app itself). */
  get stopping(): boolean {
    return this.#fate.kind === "stopping";
  }

  /** Who stopped the run, while it is stopping (none when the app itself did). */
  get stoppedBy(): string | undefined {
    return this.#fate.kind === "stopping" ? this.#fate.by : undefined;
  }

  /** running or handingOver → stopping. False when it is stopping already, or forgotten. */
  stop(by: string | undefined, reason?: string): boolean {
    if (this.#fate.kind === "stopping" || this.#fate.kind === "forgotten") return false;
    this.#fate = {
      kind: "stopping",
      ...(by === undefined ? {} : { by }),
      ...(reason === undefined ? {} : { reason }),
    };
    return true;
  }

  /** The service refused the stop: the run goes on (and Stop may be pressed again). */
  refused(): void {
    if (this.#fate.kind !== "stopping") return;
    this.#fate = this.#handOverAsked ? { kind: "handingOver" } : RUNNING;
    this.#onRefused?.();
  }

  /** The stop being asked of the service (settled once stopped or refused here). */
  asking(request: Promise<unknown>): void {
    this.#stopAnswered = request.then(
      () => undefined,
      () => undefined,
    );
  }

  /** Settles once the service answered the stop asked (at once when none is). */
  get stopAnswered(): Promise<void> {
    return this.#stopAnswered;
  }

  /** Resolves when the run is forgotten. */
  get forgotten(): Promise<void> {
    return this.#forgotten;
  }

  /** No answer to the stop in time: the run is handed over, and its next owner finds out. */
  unanswered(): void {
    if (this.#fate.kind === "stopping") this.#fate = { kind: "handingOver" };
  }

  /** `fn` runs each time a refused stop lets the run go on. */
  whenRefused(fn: () => void): void {
    this.#onRefused = fn;
  }

  /** Whether the run goes on here, or is handed over with its latest text shown. */
  get goesOn(): boolean {
    return this.#fate.kind === "running" || this.#fate.kind === "handingOver";
  }

  /** The service says the run was stopped, by whom another instance recorded. */
  stoppedElsewhere(by: string): void {
    if (this.#fate.kind === "running") this.#fate = { kind: "stopping", by };
  }

  /** Shutdown or a lost lease: the run stops following here and is handed over. */
  handOver(why: string): void {
    if (this.#fate.kind === "forgotten") return;
    this.#handOverAsked = true;
    if (this.#fate.kind === "running") this.#fate = { kind: "handingOver" };
    this.abort.abort(new Error(why));
  }

  /** Its workspace is gone: the run ends without a word to Slack and without its record. */
  forget(why: string): void {
    this.#fate = { kind: "forgotten" };
    this.abort.abort(new Error(why));
    this.#onForgotten();
  }
}

/** How long a run whose following was cut waits for its Stop's answer (well within shutdown's). */
export const STOP_ANSWER_MS = 3000;

/**
 * Following was cut (a hand-over, a failure) while a Stop was asked: waits a moment for the
 * service's answer, which the fate then tells (stopping, or going on). Without one in time the
 * run is handed over, with who pressed Stop recorded: its next owner learns from the service
 * whether it stopped. A forgotten run waits no more.
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
  const by = fate.stoppedBy;
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
  if (by !== undefined) await deps.store.requestStop(deps.runId, by).catch(() => undefined);
  fate.unanswered();
}
