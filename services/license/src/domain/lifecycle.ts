import { AppError } from '@licensing/runtime';
import { DAY_MS, type LicenseState, type PolicySnapshot } from '@licensing/proto';

// Transitions between the licence states (the states themselves and how expiry
// is derived live in proto/rules/status.ts, shared with the gateway):
//   active ──suspend──▶ suspended ──reinstate──▶ active
//   active | suspended ──revoke──▶ revoked   (terminal)
//   active | suspended | expired ──renew──▶ same stored state, later expiry
export const actions = ['suspend', 'reinstate', 'revoke', 'renew'] as const;
export type Action = (typeof actions)[number];

export function expiryFor(policy: PolicySnapshot, from: Date): Date | null {
  return policy.duration_days === null ? null : new Date(from.getTime() + policy.duration_days * DAY_MS);
}

/**
 * The state after an action, or a 409 that says why not. Renewal takes the
 * product's current policy and extends from the old expiry, or from now if
 * that has passed.
 */
export function transition(l: LicenseState, action: Action, now: Date, currentPolicy: PolicySnapshot): LicenseState {
  const refuse = (why: string) => new AppError('conflict', why);
  switch (action) {
    case 'suspend':
      if (l.status === 'revoked') throw refuse('a revoked licence cannot be suspended');
      if (l.status === 'suspended') throw refuse('the licence is already suspended');
      return { ...l, status: 'suspended' };
    case 'reinstate':
      if (l.status === 'revoked') throw refuse('a revoked licence cannot be reinstated: revocation is final');
      if (l.status === 'active') throw refuse('the licence is not suspended');
      return { ...l, status: 'active' };
    case 'revoke':
      if (l.status === 'revoked') throw refuse('the licence is already revoked');
      return { ...l, status: 'revoked' };
    case 'renew': {
      if (l.status === 'revoked') throw refuse('a revoked licence cannot be renewed');
      if (currentPolicy.duration_days === null) {
        if (l.expires_at === null) throw refuse('the licence is perpetual: there is nothing to renew');
        return { ...l, policy: currentPolicy, expires_at: null }; // the product became perpetual
      }
      const from = l.expires_at && l.expires_at.getTime() > now.getTime() ? l.expires_at : now;
      return { ...l, policy: currentPolicy, expires_at: expiryFor(currentPolicy, from) };
    }
  }
}
