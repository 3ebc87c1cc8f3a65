/**
 * Answers remembered a while per key, `max` at most (oldest dropped first). A burst of calls for
 * one key shares one question; a question that fails is not remembered (the next call asks again).
 */
export function remembered<T>(options: {
  readonly ttlMs: number;
  readonly max: number;
  readonly now?: (() => number) | undefined;
  /** Whether an answer is remembered (default: every one). */
  readonly keep?: (answer: T) => boolean;
}): (key: string, ask: () => Promise<T>) => Promise<T> {
  const now = options.now ?? Date.now;
  const known = new Map<string, { answer: T; until: number }>();
  const asking = new Map<string, Promise<T>>();
  return (key, ask) => {
    const hit = known.get(key);
    if (hit && hit.until > now()) return Promise.resolve(hit.answer);
    let pending = asking.get(key);
    if (!pending) {
      pending = ask()
        .then((answer) => {
          known.delete(key);
          if (options.keep?.(answer) !== false) {
            if (known.size >= options.max) known.delete(known.keys().next().value ?? "");
            known.set(key, { answer, until: now() + options.ttlMs });
          }
          return answer;
        })
        .finally(() => asking.delete(key));
      asking.set(key, pending);
    }
    return pending;
  };
}
