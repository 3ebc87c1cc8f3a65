// Fault injection for tests: queued failures per method (failNext) and predicates (failWhen).
import type { FailNextOptions, FaultPredicate, FaultSpec, SlackArgs } from "./types.ts";

interface Fault extends FaultSpec {
  remaining: number;
}

export class Faults {
  readonly #queues = new Map<string, Fault[]>();
  #predicates: FaultPredicate[] = [];

  /** The next `times` calls of `method` fail with the spec. */
  failNext(method: string, options: FailNextOptions): void {
    const { times = 1, ...spec } = options;
    const queue = this.#queues.get(method) ?? [];
    queue.push({ ...spec, remaining: times });
    this.#queues.set(method, queue);
  }

  /** Every call the predicate returns a fault for fails. Returns a function that removes it. */
  failWhen(predicate: FaultPredicate): () => void {
    this.#predicates.push(predicate);
    return () => {
      this.#predicates = this.#predicates.filter((p) => p !== predicate);
    };
  }

  /** The fault for this call, if any (a queued one is used up). */
  take(method: string, args: SlackArgs): FaultSpec | undefined {
    const queue = this.#queues.get(method);
    const head = queue?.[0];
    if (queue && head) {
      head.remaining -= 1;
      if (head.remaining <= 0) queue.shift();
      const { remaining: _remaining, ...spec } = head;
      return spec;
    }
    for (const predicate of this.#predicates) {
      const spec = predicate({ method, args });
      if (spec) return spec;
    }
    return undefined;
  }
}
