import type { Logger } from '../observability/logger';

const RETRY_MS = 500;

/**
 * Retries `connect` every half second until it works (or `signal` aborts), logging
 * the first failure and every tenth. `meanwhile` tells the operator what the
 * process does until then, e.g. "health says NOT_SERVING".
 */
export async function untilConnected<T>(
  what: string,
  log: Logger,
  connect: () => Promise<T>,
  opts: { signal?: AbortSignal; meanwhile: string },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    if (opts.signal?.aborted) throw new Error(`start aborted while waiting for ${what}`);
    try {
      const out = await connect();
      if (attempt > 1) log.info({ attempts: attempt }, `${what} reached`);
      return out;
    } catch (err) {
      if (attempt % 10 === 1)
        log.warn({ err: (err as Error).message, attempt }, `${what} unreachable, retrying (${opts.meanwhile})`);
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }
}
