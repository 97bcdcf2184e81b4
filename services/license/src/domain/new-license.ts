import { newId } from '@licensing/runtime';
import { generateLicenseKey, graceEndsAt, type PolicySnapshot } from '@licensing/proto';
import { expiryBucket } from './expiry';
import type { LicenseRecord } from './license';
import { expiryFor } from './lifecycle';

/** A new licence as it is stored: a fresh key, the product's policy, its expiry and grace, filed for the expiry sweeper. */
export function newLicense(
  accountId: string,
  productId: string,
  customerEmail: string,
  policy: PolicySnapshot,
  now: Date,
): LicenseRecord {
  const expires = expiryFor(policy, now);
  const graceEnds = graceEndsAt(expires, policy.grace_days);
  return {
    _id: newId('lic'),
    account_id: accountId,
    product_id: productId,
    key: generateLicenseKey(),
    customer_email: customerEmail,
    customer_email_lc: customerEmail.toLowerCase(),
    status: 'active',
    expires_at: expires,
    grace_ends_at: graceEnds,
    policy,
    metadata: {},
    expired_notified: false,
    expiry_bucket: expiryBucket(graceEnds, false, now),
    created_at: now,
  };
}
