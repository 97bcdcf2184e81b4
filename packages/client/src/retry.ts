// When and how long to wait before trying a request again. Pure functions,
// so the policy is unit-tested without a network or a clock.

/** Statuses that mean "not done, try later": rate limited, or a backing service down. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 503]);

export interface BackoffOptions {
  /** First delay before jitter. */
  baseMs: number;
  /** No computed delay exceeds this. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 500, maxMs: 8_000 };

/**
 * Seconds to wait from a Retry-After header: delta-seconds or an HTTP date
 * (RFC 9110 §10.2.3). null when absent or unreadable; never negative.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  // An HTTP date names its day and month; Date.parse alone would read "-3" as a year.
  if (!/^[A-Za-z]{3}, /.test(trimmed)) return null;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}

/**
 * Exponential back-off with "equal jitter": half the exponential step is
 * fixed, half random, so many clients that failed together spread out but
 * none retries immediately. `attempt` counts retries from 0.
 */
export function backoffDelayMs(
  attempt: number,
  options: BackoffOptions = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  const step = Math.min(options.maxMs, options.baseMs * 2 ** attempt);
  return Math.round(step / 2 + random() * (step / 2));
}

/** The wait before the next try: the server's Retry-After when it gave one, else back-off. */
export function retryDelayMs(
  attempt: number,
  retryAfterS: number | null,
  options: BackoffOptions = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  return retryAfterS !== null ? retryAfterS * 1000 : backoffDelayMs(attempt, options, random);
}
