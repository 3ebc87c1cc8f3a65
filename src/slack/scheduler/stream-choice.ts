/**
 * Auto streaming's choice, per workspace: edit a run's message (`chat.update`, Tier 3) or stream
 * it (`chat.appendStream`, Tier 4). One run alone is freshest edited; once edits are shared, a run
 * goes where its share of calls is larger.
 */
import { type Clock, systemClock } from "../../util/clock.ts";
import type { LaneLoad } from "./lanes.ts";
import type { SlackScheduler } from "./scheduler.ts";

/** Slack ends a stream about five minutes after it started: no stop is due for it then. */
const STREAM_LIFETIME_MS = 5 * 60_000;
/** A run that chose to edit counts as editing this long (its first edit may not be queued yet). */
const CHOSEN_MS = 2000;
/** An append carries only whole lines: half as fresh per call (lag p50 1.1 s vs 0.5 s: bench). */
const APPEND_WORTH = 0.5;
export class StreamChoice {
  readonly #loads: Pick<SlackScheduler, "load">;
  readonly #teamId: string;
  readonly #clock: Clock;
  readonly #open = new Map<string, number>(); // stream ts → when it started
  #edits: number[] = []; // when runs here chose to edit

  constructor(loads: Pick<SlackScheduler, "load">, teamId: string, clock: Clock = systemClock) {
    this.#loads = loads;
    this.#teamId = teamId;
    this.#clock = clock;
  }

  /** Whether a run whose lines are ready should stream (true) or edit (false: call `edited`). */
  stream(): boolean {
    const now = this.#clock.now();
    this.#sweep(now);
    const share = (load: LaneLoad, riders: number) => load.perMinute / (riders + 1);
    const updates = this.#loads.load(this.#teamId, "chat.update");
    const editors = updates.editing + this.#edits.length;
    const appends = this.#loads.load(this.#teamId, "chat.appendStream");
    return (
      editors > 0 &&
      APPEND_WORTH * share(appends, this.#open.size) >= share(updates, editors) &&
      this.stopsKeepUp()
    );
  }

  /** Whether a stop would go at once (others' stops unknown here); a waiting one delays no text. */
  stopsKeepUp(): boolean {
    return this.#loads.load(this.#teamId, "chat.stopStream").waiting === 0;
  }

  /** A run edits (it chose to, or its stream could not start at once). */
  edited(): void {
    this.#edits.push(this.#clock.now());
  }

  opened(ts: string): void {
    this.#open.set(ts, this.#clock.now());
  }

  /** The stream was stopped, or Slack ended it. */
  closed(ts: string): void {
    this.#open.delete(ts);
  }

  #sweep(now: number): void {
    this.#edits = this.#edits.filter((at) => at > now - CHOSEN_MS);
    for (const [ts, at] of this.#open) if (at <= now - STREAM_LIFETIME_MS) this.#open.delete(ts);
  }
}
