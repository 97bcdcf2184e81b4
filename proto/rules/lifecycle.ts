import type { Policy } from './policy';
import { licenseActions, type LicenseAction, type StoredStatus } from './vocabulary';

// Which lifecycle action each stored state allows, and why not where it does not. The licence service
// refuses with these reasons (409 conflict) and the dashboard offers only the actions allowed, so the
// two cannot disagree. (Expired is derived from active, so an expired licence allows what active does.)
//   active ──suspend──▶ suspended ──reinstate──▶ active
//   active | suspended ──revoke──▶ revoked   (final)
//   active | suspended ──renew──▶ same stored state, later expiry, the product's current policy
const refusals: Record<LicenseAction, Record<StoredStatus, string | null>> = {
  suspend: {
    active: null,
    suspended: 'the licence is already suspended',
    revoked: 'a revoked licence cannot be suspended',
  },
  reinstate: {
    active: 'the licence is not suspended',
    suspended: null,
    revoked: 'a revoked licence cannot be reinstated: revocation is final',
  },
  revoke: { active: null, suspended: null, revoked: 'the licence is already revoked' },
  renew: { active: null, suspended: null, revoked: 'a revoked licence cannot be renewed' },
};

/**
 * Why the action is refused on a licence in this state, or null when it is allowed. A renewal also
 * needs something to renew: an expiry, or a product policy (`renewalPolicy`, the one the licence
 * would take) that now has a duration.
 */
export function refusal(
  l: { status: StoredStatus; expires_at: Date | null },
  action: LicenseAction,
  renewalPolicy: Pick<Policy, 'duration_days'>,
): string | null {
  const why = refusals[action][l.status];
  if (why) return why;
  if (action === 'renew' && renewalPolicy.duration_days === null && l.expires_at === null)
    return 'the licence is perpetual: there is nothing to renew';
  return null;
}

/** The actions a licence in this state allows, in the order of licenseActions (what the dashboard offers). */
export const allowedActions = (
  l: { status: StoredStatus; expires_at: Date | null },
  renewalPolicy: Pick<Policy, 'duration_days'>,
): LicenseAction[] => licenseActions.filter((action) => refusal(l, action, renewalPolicy) === null);
