import { AppError } from '@licensing/runtime';

// Licence states. Stored: active, suspended, revoked. Derived: expired, when
// the expiry plus the grace days has passed (and the licence is not suspended
// or revoked). Transitions (docs/licences.md has the diagram):
//   active ──suspend──▶ suspended ──reinstate──▶ active
//   active | suspended ──revoke──▶ revoked   (terminal)
//   active | suspended | expired ──renew──▶ same stored state, later expiry
export const DAY_MS = 86_400_000;

export interface PolicySnapshot {
  duration_days: number | null;
  max_activations: number | null;
  grace_days: number;
  require_activation: boolean;
  validate_keys_see_email: boolean;
}

export type StoredStatus = 'active' | 'suspended' | 'revoked';
export type Status = StoredStatus | 'expired';
export const statuses: readonly Status[] = ['active', 'suspended', 'revoked', 'expired'];
export const actions = ['suspend', 'reinstate', 'revoke', 'renew'] as const;
export type Action = (typeof actions)[number];

export interface LicenseState {
  status: StoredStatus;
  expires_at: Date | null;
  policy: PolicySnapshot;
}

/** When the licence stops validating altogether: expiry plus grace (null = never). */
export function graceEndsAt(expiresAt: Date | null, graceDays: number): Date | null {
  return expiresAt ? new Date(expiresAt.getTime() + graceDays * DAY_MS) : null;
}

export function effectiveStatus(l: LicenseState, now: Date): Status {
  if (l.status !== 'active') return l.status;
  const end = graceEndsAt(l.expires_at, l.policy.grace_days);
  return end && end.getTime() <= now.getTime() ? 'expired' : 'active';
}

/** Past its expiry but still inside the grace days. */
export function inGrace(l: LicenseState, now: Date): boolean {
  return !!l.expires_at && l.expires_at.getTime() <= now.getTime() && effectiveStatus(l, now) === 'active';
}

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
