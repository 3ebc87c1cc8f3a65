/** A first-come-first-served semaphore: the service data's bytes held, or pages being shown. */
export class ByteBudget {
  readonly limit: number;
  #used = 0;
  readonly #waiting: { bytes: number; grant: () => void }[] = [];

  constructor(limit: number) {
    this.limit = limit;
  }

  get used(): number {
    return this.#used;
  }

  tryTake(bytes: number): boolean {
    if (this.#used + bytes > this.limit) return false;
    this.#used += bytes;
    return true;
  }

  /** Once they fit (after those waiting before); false when `waitMs` passes or `signal` aborts. */
  take(bytes: number, waitMs: number, signal?: AbortSignal): Promise<boolean> {
    if (bytes > this.limit || signal?.aborted) return Promise.resolve(false);
    if (this.#waiting.length === 0 && this.tryTake(bytes)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        bytes,
        grant: () => {
          done();
          resolve(true);
        },
      };
      const giveUp = () => {
        const at = this.#waiting.indexOf(waiter);
        if (at >= 0) this.#waiting.splice(at, 1);
        done();
        resolve(false);
        this.#grant(); // those behind it may fit now
      };
      const timer = setTimeout(giveUp, waitMs);
      timer.unref();
      signal?.addEventListener("abort", giveUp, { once: true });
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", giveUp);
      };
      this.#waiting.push(waiter);
    });
  }

  give(bytes: number): void {
    this.#used = Math.max(0, this.#used - bytes);
    this.#grant();
  }

  #grant(): void {
    for (;;) {
      const next = this.#waiting[0];
      if (next === undefined || !this.tryTake(next.bytes)) return;
      this.#waiting.shift();
      next.grant();
    }
  }
}
