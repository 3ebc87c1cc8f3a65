/**
 * Marks a promise as handled and returns it: a caller may fire and forget it (an interim edit
 * nobody awaits), and its rejection must not surface as an unhandled rejection.
 */
export function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}
