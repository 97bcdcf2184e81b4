import type { LicensePolicy, PolicySnapshot } from '@licensing/proto';

/** The product's policy (as the product service answers it), as a licence keeps it. */
export const fromPolicy = (p: LicensePolicy | undefined): PolicySnapshot => ({
  duration_days: p?.durationDays ?? null,
  max_activations: p?.maxActivations ?? null,
  grace_days: p?.graceDays ?? 0,
  require_activation: p?.requireActivation ?? false,
  validate_keys_see_email: p?.validateKeysSeeEmail ?? false,
  refund_action: p?.refundAction === 'suspend' ? 'suspend' : 'revoke',
});
