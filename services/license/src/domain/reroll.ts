import { AppError } from '@licensing/runtime';
import { REROLL_GRACE_HOURS_MAX } from '@licensing/proto';
import type { RetiredKey } from './license';

// A reroll gives a licence a new key; the old one keeps validating for a grace of 0 to 720 hours
// (next_action update_key), then is not found. Pure rules; the use case is use-cases/reroll-license.ts.

const HOUR_MS = 3_600_000;

/** When the old key stops validating: `graceHours` (checked: a whole number from 0 to 720) after `now`. */
export function graceEnd(graceHours: unknown, now: Date): Date {
  if (
    typeof graceHours !== 'number' ||
    !Number.isInteger(graceHours) ||
    graceHours < 0 ||
    graceHours > REROLL_GRACE_HOURS_MAX
  )
    throw AppError.invalid('grace_hours', `grace_hours must be a whole number from 0 to ${REROLL_GRACE_HOURS_MAX}`);
  return new Date(now.getTime() + graceHours * HOUR_MS);
}

/**
 * The licence's replaced keys after a reroll of `oldKey` until `until`: those still in their grace,
 * and the old key (once, even when a reroll is finished twice).
 */
export function retiredKeysAfter(
  current: readonly RetiredKey[] | undefined,
  oldKey: string,
  until: Date,
  now: Date,
): RetiredKey[] {
  const kept = (current ?? []).filter((r) => r.key !== oldKey && r.until.getTime() > now.getTime());
  return [...kept, { key: oldKey, until }];
}

/** Whether a replaced key still validates at `now`. */
export const stillValid = (until: Date, now: Date): boolean => until.getTime() > now.getTime();
