/** Which service threads refused their result stream lately (they are polled meanwhile). */

/**
 * Remembers, per service thread, that its result stream was refused (a deployment or proxy
 * that does not route the streaming variant), so the next run there polls at once; for a
 * while only, so a fixed deployment gets streamed again. Bounded: the oldest entry goes first.
 */
export class StreamRefusals {
  readonly #until = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #max: number;

  constructor(options: { ttlMs?: number; now?: () => number; maxThreads?: number } = {}) {
    this.#ttlMs = options.ttlMs ?? 10 * 60_000;
    this.#now = options.now ?? Date.now;
    this.#max = options.maxThreads ?? 10_000;
  }

  refused(threadId: string): void {
    this.#until.delete(threadId);
    this.#until.set(threadId, this.#now() + this.#ttlMs);
    if (this.#until.size > this.#max) {
      const oldest = this.#until.keys().next().value;
      if (oldest !== undefined) this.#until.delete(oldest);
    }
  }

  /** Whether the thread's stream was refused within the window. */
  isRefused(threadId: string): boolean {
    const until = this.#until.get(threadId);
    if (until === undefined) return false;
    if (until > this.#now()) return true;
    this.#until.delete(threadId);
    return false;
  }
}
