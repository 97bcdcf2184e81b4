/**
 * Polls `check` until it stops throwing (and returns its value), or rethrows its
 * last error after `timeoutMs`. For conditions that become true on their own
 * (an event arrives, a batch is flushed): never a fixed sleep.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 5000, intervalMs = 50 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() >= deadline) throw err;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}
