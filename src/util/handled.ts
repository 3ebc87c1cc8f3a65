/** The promise, marked handled: fired and forgotten, it never surfaces as unhandled. */
export function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}
