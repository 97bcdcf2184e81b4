import { HOUR_MS } from './stats';

// Expiry is found by hour buckets, so the sweeper's cost per pass follows the
// licences expiring now, never the number of licences: each licence that has
// yet to be announced as expired carries the UTC hour its grace ends in, and
// the sweeper asks for one bucket at a time (an equality every store serves
// from an index). A licence whose end is already past when it is written (a
// reinstatement after its expiry) goes into the current hour, so a sweep still
// finds it.

/** "2026-11-23T13": the bucket of an instant. */
export const bucketOf = (at: Date): string =>
  new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS).toISOString().slice(0, 13);

/** The bucket to store for a licence, or null when it never expires or was already announced. */
export function expiryBucket(graceEndsAt: Date | null, notified: boolean, now: Date): string | null {
  if (!graceEndsAt || notified) return null;
  return bucketOf(new Date(Math.max(graceEndsAt.getTime(), now.getTime())));
}

/** The buckets a pass looks at: from the first not yet fully swept through the current hour, at most `max`. */
export function bucketsToSweep(through: string | null, now: Date, max: number): string[] {
  const current = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  const first = through ? Date.parse(`${through}:00:00.000Z`) + HOUR_MS : current;
  const out: string[] = [];
  for (let t = first; t <= current && out.length < max; t += HOUR_MS) out.push(new Date(t).toISOString().slice(0, 13));
  return out;
}
