/** A place in a line (first come, first served per key, within this process). */
export type Turn = {
  readonly ready: Promise<void>; // the turn before was left, or `maxWaitMs` passed; never rejects
  readonly leave: () => void; // lets the next one go; more calls do nothing
};

/** Lines by key: `join(key)` takes the next turn of `key`'s line; its caller must leave it. */
export function lines(maxWaitMs: number): (key: string) => Turn {
  const last = new Map<string, Promise<void>>();
  return (key) => {
    const before = last.get(key);
    let leave = () => {};
    const left = new Promise<void>((resolve) => (leave = resolve));
    last.set(key, left);
    void left.then(() => last.get(key) === left && last.delete(key));
    if (!before) return { ready: Promise.resolve(), leave };
    const bound = new Promise<void>((resolve) => setTimeout(resolve, maxWaitMs).unref());
    return { ready: Promise.race([before, bound]), leave };
  };
}
