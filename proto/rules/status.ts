// Licence states (the words are vocabulary.ts's), as every validation answer
// sees them: the stored one, or expired, derived when the expiry plus the grace
// days has passed (and the licence is not suspended or revoked); under the policy's
// expiration_strategy revoke_access, revoked instead of expired. Shared by the
// licence service and the gateway's validation cache, so both derive the same status.
import type { StoredPolicy } from './policy';
import type { Status, StoredStatus, SubscriptionStatus } from './vocabulary';

export const DAY_MS = 86_400_000;

/** The policy a licence keeps: its product's when it was issued or last renewed. */
export type PolicySnapshot = StoredPolicy;

/** The stored state behind each status an answer shows: expired is derived from active alone. */
const storedBehind: Record<Status, StoredStatus> = {
  active: 'active',
  suspended: 'suspended',
  revoked: 'revoked',
  expired: 'active',
};
export const storedStatusOf = (status: Status): StoredStatus => storedBehind[status];

/** What a licence that follows a subscription knows of it (set by the checkout service's ApplySubscription). */
export interface SubscriptionFacts {
  id: string;
  status: SubscriptionStatus;
  /** Set while trialing. */
  trial_end: Date | null;
  /** The end of the last paid (or trial) period. */
  paid_through: Date | null;
  /** past_due: the licence validates until then (period end + payment_grace_days). */
  grace_until: Date | null;
  /**
   * canceled before its period end (cancelled now, or a trial that ended unpaid): the licence expires
   * at its expiry without the policy's grace days. Absent or false: the grace days apply (a
   * subscription that ended at its period end keeps them, as any licence past its expiry).
   */
  ended_early?: boolean;
}

export interface LicenseState {
  status: StoredStatus;
  expires_at: Date | null;
  policy: PolicySnapshot;
  /** Absent: not a subscription licence. */
  subscription?: SubscriptionFacts | null;
}

/** When the licence stops validating altogether: expiry plus grace (null = never). */
export function graceEndsAt(expiresAt: Date | null, graceDays: number): Date | null {
  return expiresAt ? new Date(expiresAt.getTime() + graceDays * DAY_MS) : null;
}

/** A subscription that ended early: its licence has no grace days past its expiry. */
const endedEarly = (l: LicenseState) => l.subscription?.status === 'canceled' && l.subscription.ended_early === true;

/**
 * When the licence stops validating: expiry plus the policy's grace (none when its subscription ended
 * early: cancelled now, or a trial ended unpaid), or, while its subscription is past due, the payment
 * grace (period end + payment_grace_days) if that is later.
 */
export function validUntil(l: LicenseState): Date | null {
  const end = graceEndsAt(l.expires_at, endedEarly(l) ? 0 : l.policy.grace_days);
  const payment = l.subscription?.status === 'past_due' ? l.subscription.grace_until : null;
  return end && payment && payment.getTime() > end.getTime() ? payment : end;
}

/**
 * The status an answer shows at `now`. A licence whose policy says revoke_access is revoked at the
 * moment it would otherwise become expired, which is the end of its grace days (and of a past-due
 * subscription's payment grace), not its bare expiry: grace days promise the licence keeps working
 * that long, and a vendor who wants none sets none. Answers say revoked from that very moment (the
 * moment nextStatusChange already names), before the licence service's expiry sweep stores it so.
 */
export function effectiveStatus(l: LicenseState, now: Date): Status {
  if (l.status !== 'active') return l.status;
  const end = validUntil(l);
  if (!end || end.getTime() > now.getTime()) return 'active';
  return revokedAtExpiry(l) ? 'revoked' : 'expired';
}

/** The policy's expiration_strategy is revoke_access (licences stored before it existed: restrict, never revoked). */
export const revokedAtExpiry = (l: Pick<LicenseState, 'policy'>): boolean =>
  l.policy.expiration_strategy === 'revoke_access';

/** Past its expiry but still inside the grace days. */
export function inGrace(l: LicenseState, now: Date): boolean {
  return !!l.expires_at && l.expires_at.getTime() <= now.getTime() && effectiveStatus(l, now) === 'active';
}

/**
 * The next moment after `now` at which the time alone changes how the licence is judged (its expiry,
 * then the end of its grace days), as epoch ms; Infinity when time changes nothing (suspended,
 * revoked, no expiry, or already expired for good). Until then, effectiveStatus and inGrace stay
 * as they are at `now`.
 */
export function nextStatusChange(l: LicenseState, now: Date): number {
  if (l.status !== 'active' || !l.expires_at) return Number.POSITIVE_INFINITY;
  const t = now.getTime();
  const expiry = l.expires_at.getTime();
  if (expiry > t) return expiry;
  const end = validUntil(l)!.getTime();
  return end > t ? end : Number.POSITIVE_INFINITY;
}
