import {
  effectiveStatus,
  type Activation,
  type License,
  type LicensePolicy,
  type PolicySnapshot,
} from '@licensing/proto';
import type { ActivationDoc, LicenseDoc } from '../store/models';

export const toPolicy = (p: PolicySnapshot): LicensePolicy => ({
  durationDays: p.duration_days ?? undefined,
  maxActivations: p.max_activations ?? undefined,
  graceDays: p.grace_days,
  requireActivation: p.require_activation,
  validateKeysSeeEmail: p.validate_keys_see_email,
  refundAction: p.refund_action ?? 'revoke',
});

/** A licence as the contract shows it: derived status, and the e-mail only for callers allowed to see it. */
/** `activations` is counted only where it is asked for (GET of one licence); elsewhere 0 means "not counted". */
export function toLicense(doc: Omit<LicenseDoc, 'outbox'>, now: Date, keyScope = 'full', activations = 0): License {
  const showEmail = keyScope !== 'validate' || doc.policy.validate_keys_see_email;
  return {
    id: doc._id,
    accountId: doc.account_id,
    productId: doc.product_id,
    key: doc.key,
    customerEmail: showEmail ? doc.customer_email : '',
    status: effectiveStatus(doc, now),
    expiresAt: doc.expires_at ? doc.expires_at.toISOString() : '',
    createdAt: doc.created_at.toISOString(),
    policy: toPolicy(doc.policy),
    activations,
    metadata: doc.metadata ?? {},
    lastValidatedAt: '',
  };
}

export const toActivation = (a: ActivationDoc): Activation => ({
  id: a._id,
  licenseId: a.license_id,
  fingerprint: a.fingerprint,
  name: a.name,
  createdAt: a.created_at.toISOString(),
});
