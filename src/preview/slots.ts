/** A counting semaphore whose waiters give up after a while (small enough for no library). */
export class Slots {
  readonly #max: number;
  #busy = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(max: number) {
    this.#max = max;
  }

  get busy(): number {
    return this.#busy;
  }

  /** Resolves with a release function once a slot is free; rejects after `ms` without one. */
  take(ms: number): Promise<() => void> {
    const release = () => {
      this.#busy -= 1;
      this.#waiting.shift()?.();
    };
    if (this.#busy < this.#max) {
      this.#busy += 1;
      return Promise.resolve(once(release));
    }
    return new Promise((resolve, reject) => {
      const turn = () => {
        clearTimeout(timer);
        this.#busy += 1;
        resolve(once(release));
      };
      const timer = setTimeout(() => {
        const at = this.#waiting.indexOf(turn);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(new Error(`no browser slot free within ${ms} ms`));
      }, ms);
      this.#waiting.push(turn);
    });
  }
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}
