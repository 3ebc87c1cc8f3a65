/**
 * The service threads whose result stream was refused lately (a proxy that does not route it):
 * their next run polls at once. For a while only, so a fixed deployment streams again; bounded.
 */
export class StreamRefusals {
  readonly #until = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(options: { ttlMs?: number; now?: () => number } = {}) {
    this.#ttlMs = options.ttlMs ?? 10 * 60_000;
    this.#now = options.now ?? Date.now;
  }

  refused(threadId: string): void {
    this.#until.delete(threadId);
    this.#until.set(threadId, this.#now() + this.#ttlMs);
    if (this.#until.size > MAX_THREADS) {
      const oldest = this.#until.keys().next().value;
      if (oldest !== undefined) this.#until.delete(oldest);
    }
  }

  isRefused(threadId: string): boolean {
    const until = this.#until.get(threadId);
    if (until === undefined) return false;
    if (until > this.#now()) return true;
    this.#until.delete(threadId);
    return false;
  }
}

const MAX_THREADS = 10_000;
