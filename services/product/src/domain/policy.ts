import { AppError } from '@licensing/runtime';
import type { LicensePolicy } from '@licensing/proto';

// The licence policy of a product, as stored (null = no limit).
export interface Policy {
  duration_days: number | null;
  max_activations: number | null;
  grace_days: number;
  require_activation: boolean;
  validate_keys_see_email: boolean;
  /** What a refunded checkout payment does to the licence it paid for. */
  refund_action: RefundAction;
}

export const REFUND_ACTIONS = ['revoke', 'suspend'] as const;
export type RefundAction = (typeof REFUND_ACTIONS)[number];

export const DEFAULT_POLICY: Policy = {
  duration_days: null,
  max_activations: null,
  grace_days: 0,
  require_activation: false,
  validate_keys_see_email: false,
  refund_action: 'revoke',
};

export const LIMITS = { duration_days: [1, 36_500], max_activations: [1, 10_000], grace_days: [0, 365] } as const;

function whole(field: keyof typeof LIMITS, v: number): number {
  const [min, max] = LIMITS[field];
  if (!Number.isInteger(v) || v < min || v > max)
    throw AppError.invalid(`policy.${field}`, `policy.${field} must be a whole number from ${min} to ${max}`);
  return v;
}

function refundAction(v: string): RefundAction {
  if (!v) return 'revoke';
  if (!(REFUND_ACTIONS as readonly string[]).includes(v))
    throw AppError.invalid('policy.refund_action', `policy.refund_action must be one of ${REFUND_ACTIONS.join(', ')}`);
  return v as RefundAction;
}

/** From the contract to the stored form, refusing values out of range. */
export function checkPolicy(p: LicensePolicy | undefined): Policy {
  if (!p) return { ...DEFAULT_POLICY };
  const policy: Policy = {
    duration_days: p.duration_days === undefined ? null : whole('duration_days', p.duration_days),
    max_activations: p.max_activations === undefined ? null : whole('max_activations', p.max_activations),
    grace_days: whole('grace_days', p.grace_days),
    require_activation: p.require_activation,
    validate_keys_see_email: p.validate_keys_see_email,
    refund_action: refundAction(p.refund_action),
  };
  if (policy.grace_days > 0 && policy.duration_days === null)
    throw AppError.invalid(
      'policy.grace_days',
      'policy.grace_days only applies to licences that expire: set policy.duration_days too',
    );
  return policy;
}

export function toContract(p: Policy): LicensePolicy {
  return {
    duration_days: p.duration_days ?? undefined,
    max_activations: p.max_activations ?? undefined,
    grace_days: p.grace_days,
    require_activation: p.require_activation,
    validate_keys_see_email: p.validate_keys_see_email,
    // Products stored before the field existed read as the default.
    refund_action: p.refund_action ?? 'revoke',
  };
}
