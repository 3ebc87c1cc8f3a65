/**
 * Waits until `ok` holds (polled every 20 ms), for state no event announces (a store record, a
 * process's log); fails naming `what` after `timeoutMs` (15 s: far above any expected wait).
 */
export async function until(
  what: string,
  ok: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
