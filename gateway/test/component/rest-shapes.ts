// What the REST API answers for shapes several route tests expect, written out once.

/** A product's or licence's `policy` when nothing was set: every field with its documented default (docs/api.md). */
export const DEFAULT_POLICY_JSON = {
  duration_days: null,
  max_activations: null,
  grace_days: 0,
  require_activation: false,
  validate_keys_see_email: false,
  refund_action: 'revoke',
  lease_seconds: null,
  entitlements: [],
  customer_deactivations_per_30_days: 3,
  payment_grace_days: 7,
  max_file_ttl_days: 30,
  expiration_strategy: 'restrict',
};
