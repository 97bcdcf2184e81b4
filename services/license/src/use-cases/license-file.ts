import { AppError, type CallOptions, type Clock } from '@licensing/runtime';
import {
  FILE_TTL_DEFAULT_DAYS,
  FILE_TTL_MAX_DAYS,
  DAY_MS,
  effectiveEntitlements,
  effectiveStatus,
  validUntil,
  isFloating,
  lapsed,
  type SignPayloadRequest,
  type SignPayloadResponse,
  withPolicyDefaults,
} from '@licensing/proto';
import { checkFingerprint } from '../domain/metadata';
import type { LicenseStore } from '../store/queries';
import type { ProductLookup } from './deps';
import { productEntitlements } from './product-entitlements';
import { ownLicense } from './read-licenses';

export interface PayloadSigner {
  signPayload(req: SignPayloadRequest, opts?: CallOptions): Promise<SignPayloadResponse>;
}

export interface FileDeps {
  store: LicenseStore;
  clock: Clock;
  /** The product service, which holds the signing keys. */
  signer: PayloadSigner;
  /** The products (through the product cache): a file carries the product's current entitlements. */
  products: ProductLookup;
}

/** Who asks: an app credential ("validate": a License credential or a validate-scope key) or the vendor. */
const isAppCaller = (keyScope: string): boolean => keyScope === 'validate';

/**
 * A licence file for offline validation: the licence's facts, signed with the
 * product's current Ed25519 key (by the product service, which holds it). A
 * file never outlives the licence: valid_until is capped by expiry plus grace.
 * An app credential (key_scope "validate", shipped where anyone can read it) gets
 * what a validation shows it: customer_email only where the policy allows it
 * (validate_keys_see_email), and a file of at most the policy's max_file_ttl_days.
 */
export async function issueLicenseFile(
  { store, clock, signer, products }: FileDeps,
  req: { account_id: string; key: string; fingerprint: string; ttl_days: number; key_scope?: string },
): Promise<SignPayloadResponse> {
  if (req.ttl_days !== 0 && (!Number.isInteger(req.ttl_days) || req.ttl_days < 1 || req.ttl_days > FILE_TTL_MAX_DAYS))
    throw AppError.invalid('ttl_days', `ttl_days must be a whole number from 1 to ${FILE_TTL_MAX_DAYS}`);
  const license = await ownLicense(store, req.account_id, req.key);
  const app = isAppCaller(req.key_scope ?? '');
  const policy = withPolicyDefaults(license.policy);
  const ttl = fileTtlDays(req.ttl_days, app ? policy.max_file_ttl_days : FILE_TTL_MAX_DAYS);
  const fingerprint = req.fingerprint ? checkFingerprint(req.fingerprint) : '';
  const now = clock.now();
  const status = effectiveStatus(license, now);
  if (status !== 'active') throw new AppError('conflict', `the licence is ${status}: no licence file can be issued`);
  if (license.policy.require_activation) {
    if (!fingerprint)
      throw AppError.invalid(
        'fingerprint',
        'this licence requires activation: give the fingerprint of an activated machine',
      );
    const seat = await store.findActivation(license._id, fingerprint);
    if (!seat)
      throw AppError.refusedAs(
        'conflict',
        'not_activated',
        'not_activated: this machine is not activated for the licence',
      );
    // A floating seat that lapsed holds no slot (proto/rules/lease.ts): the app activates again first.
    if (isFloating(license.policy) && lapsed(seat.lease_expires_at?.getTime(), now.getTime()))
      throw new AppError('conflict', "lease_expired: this machine's floating seat lapsed; activate it again");
  }
  // Expiry plus grace, or a past-due subscription's payment grace (proto/rules/status.ts).
  const end = validUntil(license);
  const fileValidUntil = new Date(Math.min(now.getTime() + ttl * DAY_MS, end ? end.getTime() : Infinity));
  const payload = {
    license_key: license.key,
    license_id: license._id,
    product_id: license.product_id,
    // A validation answer hides it from app credentials unless the policy shows it: so does the file.
    customer_email: app && !policy.validate_keys_see_email ? null : license.customer_email,
    status,
    expires_at: license.expires_at ? license.expires_at.toISOString() : null,
    fingerprint: fingerprint || null,
    entitlements: effectiveEntitlements(
      // Read past the cache: a signed file lives for days, and is often asked for right after a change.
      await productEntitlements(products, license.account_id, license.product_id, true),
      license.extra_entitlements,
    ),
    issued_at: now.toISOString(),
    valid_until: fileValidUntil.toISOString(),
    // What the licence may still download once expired (maintain_access: what was published before
    // expires_at): an offline updater can tell without asking.
    expiration_strategy: policy.expiration_strategy,
    // Subscription licences: dates an offline app can trust (the SDK's verifyLicenseFile returns them).
    ...(license.subscription
      ? {
          paid_through: license.subscription.paid_through
            ? new Date(license.subscription.paid_through).toISOString()
            : null,
          grace_until: end ? end.toISOString() : null,
        }
      : {}),
  };
  return signer.signPayload({
    account_id: req.account_id,
    product_id: license.product_id,
    payload_json: JSON.stringify(payload),
  });
}

/**
 * The days a file is valid: as asked (0: the default, 30), at most `maxDays` (an app credential's:
 * the policy's max_file_ttl_days; the vendor's: 365). Asking for more than the cap is refused, so an
 * app never silently gets a shorter file than it asked for.
 */
export function fileTtlDays(asked: number, maxDays: number): number {
  if (asked === 0) return Math.min(FILE_TTL_DEFAULT_DAYS, maxDays);
  if (asked > maxDays)
    throw AppError.invalid(
      'ttl_days',
      `app credentials may ask for licence files of at most ${maxDays} days (the product policy's max_file_ttl_days); a full-scope API key may ask for up to ${FILE_TTL_MAX_DAYS}`,
    );
  return asked;
}
