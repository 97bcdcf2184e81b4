import { DAY_MS } from './stats';

// How many machines a customer may free themselves in the customer portal: the policy's
// customer_deactivations_per_30_days, per licence, over a rolling 30 days.

export const CUSTOMER_WINDOW_MS = 30 * DAY_MS;

/** The start of the window that ends now: customer deactivations after it count. */
export const windowStart = (now: Date): Date => new Date(now.getTime() - CUSTOMER_WINDOW_MS);

export type CustomerDeactivationVerdict =
  | { allowed: true }
  /** The policy allows none: only the vendor frees machines. */
  | { allowed: false; reason: 'disabled' }
  /** Used up: the next one is allowed at `nextAt`, when the oldest of the window leaves it. */
  | { allowed: false; reason: 'used_up'; nextAt: Date; retryAfterS: number };

/**
 * Whether one more customer deactivation fits. `recent`: the licence's customer deactivations within
 * the window (at least the oldest `limit` of them; more are ignored).
 */
export function judgeCustomerDeactivation(limit: number, recent: Date[], now: Date): CustomerDeactivationVerdict {
  if (limit <= 0) return { allowed: false, reason: 'disabled' };
  const start = windowStart(now).getTime();
  const inWindow = recent
    .map((d) => d.getTime())
    .filter((t) => t > start)
    .sort((a, b) => a - b);
  if (inWindow.length < limit) return { allowed: true };
  // With `limit` in the window, one more fits once all but limit-1 of them have left it: the
  // (n-limit+1)-th oldest leaves at its time + 30 days.
  const leaving = inWindow[inWindow.length - limit];
  const nextAt = new Date(leaving + CUSTOMER_WINDOW_MS);
  return {
    allowed: false,
    reason: 'used_up',
    nextAt,
    retryAfterS: Math.max(1, Math.ceil((nextAt.getTime() - now.getTime()) / 1000)),
  };
}

/** "27 November 2026, 14:05 UTC": how the refusal names the day (the portal shows it as is). */
export function describeMoment(at: Date): string {
  const months = [
    'January',
    'February',
    'March',
    'April',
    'May',
    'June',
    'July',
    'August',
    'September',
    'October',
    'November',
    'December',
  ];
  const hh = String(at.getUTCHours()).padStart(2, '0');
  const mm = String(at.getUTCMinutes()).padStart(2, '0');
  return `${at.getUTCDate()} ${months[at.getUTCMonth()]} ${at.getUTCFullYear()}, ${hh}:${mm} UTC`;
}
