import type { LicensePolicy, PolicySnapshot } from '@licensing/proto';

/** The product's policy (as the product service answers it), as a licence keeps it. */
export const fromPolicy = (p: LicensePolicy | undefined): PolicySnapshot => ({
  duration_days: p?.duration_days ?? null,
  max_activations: p?.max_activations ?? null,
  grace_days: p?.grace_days ?? 0,
  require_activation: p?.require_activation ?? false,
  validate_keys_see_email: p?.validate_keys_see_email ?? false,
  refund_action: p?.refund_action === 'suspend' ? 'suspend' : 'revoke',
});
