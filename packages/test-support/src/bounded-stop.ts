/** How long a test's tear-down waits for one component's graceful stop. */
export const STOP_WAIT_MS = 12_000;

/**
 * A component's graceful stop, waited for at most STOP_WAIT_MS: past that, the test file's tear-down
 * goes on (the worker's exit ends what is left) and says which one was slow, instead of jest failing
 * the whole file on its 30 s hook limit. How stops behave is the graceful-shutdown test's, not every file's.
 */
export async function stopWithin(what: string, stopping: Promise<unknown>, ms = STOP_WAIT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  const outcome = await Promise.race([stopping.then(() => 'stopped' as const), late]);
  clearTimeout(timer);
  if (outcome === 'late') console.warn(`test tear-down: ${what} did not stop within ${ms} ms; going on`);
}
