import { AppError } from '@licensing/runtime';
import {
  DAY_MS,
  effectiveStatus,
  refusal,
  storedStatusOf,
  type LicenseAction,
  type LicenseState,
  type PolicySnapshot,
} from '@licensing/proto';

// What each lifecycle action does to a licence. Which actions a state allows, and the reasons for
// refusing the others, are proto/rules/lifecycle.ts's table, shared with the dashboard; the states
// themselves and how expiry is derived are proto/rules/status.ts's.

export function expiryFor(policy: PolicySnapshot, from: Date): Date | null {
  return policy.duration_days === null ? null : new Date(from.getTime() + policy.duration_days * DAY_MS);
}

/**
 * The state after an action, or a 409 that says why not. Renewal takes the
 * product's current policy and extends from the old expiry, or from now if
 * that has passed.
 */
export function transition(
  l: LicenseState,
  action: LicenseAction,
  now: Date,
  currentPolicy: PolicySnapshot,
): LicenseState {
  // Judged as answers show it: a licence revoked at its expiry (revoke_access) is revoked before the
  // expiry sweep stores it so, and revocation is final then too.
  const why = refusal({ ...l, status: storedStatusOf(effectiveStatus(l, now)) }, action, currentPolicy);
  if (why) throw new AppError('conflict', why);
  switch (action) {
    case 'suspend':
      return { ...l, status: 'suspended' };
    case 'reinstate':
      return { ...l, status: 'active' };
    case 'revoke':
      return { ...l, status: 'revoked' };
    case 'renew': {
      if (currentPolicy.duration_days === null) return { ...l, policy: currentPolicy, expires_at: null }; // the product became perpetual
      const from = l.expires_at && l.expires_at.getTime() > now.getTime() ? l.expires_at : now;
      return { ...l, policy: currentPolicy, expires_at: expiryFor(currentPolicy, from) };
    }
  }
}
