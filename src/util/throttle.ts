/**
 * At most `limit` uses per key (a person) per window in this process, so clicks do not become a
 * stream of service requests. Fixed windows: a small entry a key, past ones dropped as it grows.
 */
export class PerKeyThrottle {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  readonly #used = new Map<string, { readonly window: number; count: number }>();
  #sweptIn = -1;

  constructor(limit: number, windowMs: number, now: () => number = Date.now) {
    this.#limit = limit;
    this.#windowMs = windowMs;
    this.#now = now;
  }

  /** Takes one use: undefined when allowed, else the milliseconds until the next window. */
  take(key: string): number | undefined {
    const now = this.#now();
    const window = Math.floor(now / this.#windowMs);
    const entry = this.#used.get(key);
    if (entry && entry.window === window) {
      if (entry.count >= this.#limit) return (window + 1) * this.#windowMs - now;
      entry.count++;
      return undefined;
    }
    if (this.#used.size >= MAX_KEYS) this.#forgetBefore(window);
    this.#used.set(key, { window, count: 1 });
    return undefined;
  }

  /** Past windows' entries, once per window; past that, the oldest entry (Map order). */
  #forgetBefore(window: number): void {
    if (this.#sweptIn !== window) {
      this.#sweptIn = window;
      for (const [key, entry] of this.#used) if (entry.window < window) this.#used.delete(key);
    }
    if (this.#used.size < MAX_KEYS) return;
    const oldest = this.#used.keys().next();
    if (!oldest.done) this.#used.delete(oldest.value);
  }
}

/** Keys kept before past windows are swept (one sweep per window at most). */
const MAX_KEYS = 10_000;
