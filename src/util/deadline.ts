/** `work`, or `timeout()`'s error when it takes longer than `ms` (the work is not cancelled). */
export async function withDeadline<T>(
  work: Promise<T>,
  ms: number,
  timeout: () => Error,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timeout()), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
