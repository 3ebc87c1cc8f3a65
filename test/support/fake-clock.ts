/**
 * A fake clock for the Slack scheduler (src/slack/scheduler.ts `Clock`): time moves only when a
 * test advances it, timers fire in order, and after each one the test's `settle` (e.g. the
 * scheduler's `settled()`) is awaited so all the async work it started has finished. No sleeps.
 */
import type { Clock } from "../../src/slack/scheduler/index.ts";

interface Timer {
  readonly at: number;
  readonly id: number;
  readonly fn: () => void;
}

export class FakeClock implements Clock {
  #now: number;
  #nextId = 1;
  readonly #timers = new Map<number, Timer>();

  constructor(start = 1_700_000_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.#nextId++;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), id, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    if (typeof handle === "number") this.#timers.delete(handle);
  }

  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** Fires every timer due up to `target` in time order, then sets now to `target`. */
  async advanceTo(target: number, settle: () => Promise<void>): Promise<void> {
    await flush(settle);
    for (;;) {
      let next: Timer | undefined;
      for (const t of this.#timers.values()) {
        if (t.at <= target && (!next || t.at < next.at || (t.at === next.at && t.id < next.id))) {
          next = t;
        }
      }
      if (!next) break;
      // Timers due at the same instant fire together (in creation order), then one flush.
      const at = next.at;
      this.#now = Math.max(this.#now, at);
      const due = [...this.#timers.values()].filter((t) => t.at === at).sort((a, b) => a.id - b.id);
      for (const t of due) {
        this.#timers.delete(t.id);
        t.fn();
      }
      await flush(settle);
    }
    this.#now = Math.max(this.#now, target);
    await flush(settle);
  }

  advance(ms: number, settle: () => Promise<void>): Promise<void> {
    return this.advanceTo(this.#now + ms, settle);
  }
}

/** Awaits `settle`, then one macrotask turn so every promise callback queued meanwhile has run. */
async function flush(settle: () => Promise<void>): Promise<void> {
  await settle();
  await new Promise<void>((resolve) => setImmediate(resolve));
  await settle();
}
