import {
  effectiveEntitlements,
  effectiveStatus,
  policyToContract,
  seenByScope,
  type Activation,
  type License,
} from '@licensing/proto';
import { overridesToContract } from '../domain/overrides';
import type { ActivationDoc, LicenseDoc } from '../store/models';

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : '');

/**
 * A licence as the contract shows it: derived status; the e-mail and the vendor's metadata only for
 * callers allowed to see them (seenByScope). `activations` is counted only where it is asked for (GET
 * of one licence); elsewhere 0 means "not counted".
 */
export function toLicense(doc: Omit<LicenseDoc, 'outbox'>, now: Date, keyScope = 'full', activations = 0): License {
  const license: License = {
    id: doc._id,
    account_id: doc.account_id,
    product_id: doc.product_id,
    key: doc.key,
    customer_email: doc.customer_email,
    status: effectiveStatus(doc, now),
    expires_at: doc.expires_at ? doc.expires_at.toISOString() : '',
    created_at: doc.created_at.toISOString(),
    // A licence stored before a policy field existed reads as its default. Its own terms are in it
    // (the effective policy), and shown apart too.
    policy: policyToContract(doc.policy),
    overrides: overridesToContract(doc.overrides),
    activations,
    metadata: doc.metadata ?? {},
    last_validated_at: '',
    entitlements: effectiveEntitlements(doc.policy.entitlements, doc.extra_entitlements),
    extra_entitlements: doc.extra_entitlements ?? [],
    subscription: doc.subscription
      ? {
          id: doc.subscription.id,
          status: doc.subscription.status,
          trial_end: iso(doc.subscription.trial_end),
          paid_through: iso(doc.subscription.paid_through),
          grace_until: iso(doc.subscription.grace_until),
          ended_early: doc.subscription.ended_early === true,
        }
      : undefined,
  };
  return seenByScope(license, keyScope, doc.policy.validate_keys_see_email);
}

export const toActivation = (a: ActivationDoc): Activation => ({
  id: a._id,
  license_id: a.license_id,
  fingerprint: a.fingerprint,
  name: a.name,
  created_at: a.created_at.toISOString(),
  lease_expires_at: a.lease_expires_at ? a.lease_expires_at.toISOString() : '',
  // Its last heartbeat or validation naming its fingerprint (a flushed one: a few seconds behind).
  last_seen_at: a.last_seen_at ? a.last_seen_at.toISOString() : '',
});
