import { bucketOf } from './expiry';
import { HOUR_MS } from './stats';

// When the lapsed-seat sweep reclaims a floating seat nobody needed. A lapsed seat already takes no
// slot (proto/rules/lease.ts: an activation that needs the slot reclaims it at once) and answers
// lease_expired; the sweep frees the rest, with their license.deactivated (reason lapsed), an hour
// after they lapsed, so an app that was briefly offline is still told lease_expired (and re-activates)
// rather than not_activated. Each floating seat carries the UTC hour in which it becomes reclaimable;
// a heartbeat moves it on. The sweep asks for one hour bucket at a time, an equality every store serves
// from an index (as the expiry sweep, domain/expiry.ts), so its cost follows the lapsed seats.

/** How long after its lapse the sweep reclaims a seat no activation needed. */
export const RECLAIM_AFTER_MS = HOUR_MS;

/** The bucket of a floating seat whose lease ends at `leaseEndsAt`. */
export const reclaimBucket = (leaseEndsAt: Date): string =>
  bucketOf(new Date(leaseEndsAt.getTime() + RECLAIM_AFTER_MS));

/** Whether the sweep reclaims a seat now: still active, and lapsed for RECLAIM_AFTER_MS. */
export const sweepReclaims = (
  seat: { deactivated_at: Date | null; lease_expires_at?: Date | null },
  now: Date,
): boolean =>
  seat.deactivated_at === null &&
  !!seat.lease_expires_at &&
  seat.lease_expires_at.getTime() + RECLAIM_AFTER_MS <= now.getTime();
