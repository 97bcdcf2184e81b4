// Offline check of a signed licence file (POST /licenses/{key}/file): the
// Ed25519 signature by the product key whose `kid` the file names, then the
// dates, with WebCrypto only and no network. An app ships the product's
// public keys (products.signingKeys) and keeps working while offline.
import { describe } from './arguments';
import { base64ToBytes, pemToDer } from './encoding';
import type { Policy } from './types';

/** A product signing key as GET /products/{id}/signing-keys lists it (only kid and public_key_pem are needed). */
export interface PublicKeyInput {
  kid: string;
  public_key_pem: string;
  algorithm?: string;
}

/** The signed facts inside a licence file. */
export interface LicenseFilePayload {
  license_key: string;
  license_id: string;
  product_id: string;
  customer_email: string | null;
  /** Always "active" when issued: no file is issued for another status. */
  status: string;
  expires_at: string | null;
  /** The machine the file is bound to, or null. */
  fingerprint: string | null;
  issued_at: string;
  /** The file is worth nothing after this; never later than the licence's expiry plus grace. */
  valid_until: string;
  kid: string;
  /** The licence's effective entitlements when the file was issued (files issued before entitlements have none). */
  entitlements?: string[];
  /**
   * What the licence may download once expired (the policy's expiration_strategy): restrict, nothing;
   * maintain_access, the releases published before `expires_at`; revoke_access, nothing (it is revoked).
   * Absent on files issued before the field existed: restrict.
   */
  expiration_strategy?: Policy['expiration_strategy'];
  /** Subscription licences: the end of the last paid (or trial) period (absent on other licences). */
  paid_through?: string | null;
  /** Subscription licences: when the licence stops validating unless paid (period end plus grace; a failed payment's grace). */
  grace_until?: string | null;
}

export type LicenseFileFailure =
  | 'malformed'
  | 'unsupported_algorithm'
  | 'unknown_key'
  | 'bad_signature'
  | 'kid_mismatch'
  | 'expired'
  | 'not_yet_valid'
  | 'fingerprint_mismatch'
  /** The file is bound to a machine and no `fingerprint` was given to check it against. */
  | 'fingerprint_required'
  | 'not_active';

export interface LicenseFileVerification {
  valid: boolean;
  /** Why not, when valid is false. */
  reason?: LicenseFileFailure;
  /** The signed facts when the signature holds (even if the file has expired), else null. */
  license: LicenseFilePayload | null;
  /**
   * A subscription licence's signed dates (present only for those, when the signature holds): paid up
   * to `paid_through`; an offline app can keep working until `grace_until`, a date it can trust.
   */
  paid_through?: string | null;
  grace_until?: string | null;
}

export interface VerifyLicenseFileOptions {
  /** The product's public keys: the array products.signingKeys() answers (or the REST body {data}). */
  publicKeys: readonly PublicKeyInput[] | { data: readonly PublicKeyInput[] };
  /** The time to check against (default: now). */
  now?: Date | number;
  /**
   * This machine's fingerprint: a file bound to another machine is refused, and so is a bound file
   * when this is not given (a bound file proves nothing on a machine that cannot say which it is).
   */
  fingerprint?: string;
}

/** How far issued_at may lie ahead of this machine's clock before the clock is deemed turned back. */
const CLOCK_SKEW_MS = 5 * 60_000;

export async function verifyLicenseFile(
  file: unknown,
  options: VerifyLicenseFileOptions,
): Promise<LicenseFileVerification> {
  const keys = publicKeyList(options);
  const now = instant(options.now);
  if (!isFileShape(file)) return fail('malformed');
  if (file.algorithm !== 'Ed25519') return fail('unsupported_algorithm');
  const key = keys.find((k) => k.kid === file.kid);
  if (!key) return fail('unknown_key');

  let payloadBytes: Uint8Array<ArrayBuffer>;
  let signature: Uint8Array<ArrayBuffer>;
  try {
    payloadBytes = base64ToBytes(file.payload);
    signature = base64ToBytes(file.signature);
  } catch {
    return fail('malformed');
  }
  const publicKey = await globalThis.crypto.subtle.importKey(
    'spki',
    pemToDer(key.public_key_pem, 'PUBLIC KEY'),
    { name: 'Ed25519' },
    false,
    ['verify'],
  );
  if (!(await globalThis.crypto.subtle.verify({ name: 'Ed25519' }, publicKey, signature, payloadBytes)))
    return fail('bad_signature');

  let license: LicenseFilePayload;
  try {
    license = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payloadBytes)) as LicenseFilePayload;
  } catch {
    return fail('malformed');
  }
  // A JSON object, and its dates strings: every port refuses anything else alike (sdks/test-vectors).
  if (typeof license !== 'object' || license === null || Array.isArray(license)) return fail('malformed');
  // The kid inside is signed; the one outside is not, so they must agree.
  if (license.kid !== file.kid) return fail('kid_mismatch', license);
  if (typeof license.valid_until !== 'string' || typeof license.issued_at !== 'string')
    return fail('malformed', license);
  const validUntil = Date.parse(license.valid_until);
  const issuedAt = Date.parse(license.issued_at);
  if (Number.isNaN(validUntil) || Number.isNaN(issuedAt)) return fail('malformed', license);
  if (license.status !== 'active') return fail('not_active', license);
  if (validUntil < now) return fail('expired', license);
  if (issuedAt > now + CLOCK_SKEW_MS) return fail('not_yet_valid', license);
  // A file bound to one machine is valid on that machine only: without a fingerprint to compare, it is refused.
  if (license.fingerprint !== null && license.fingerprint !== undefined) {
    if (options.fingerprint === undefined) return fail('fingerprint_required', license);
    if (license.fingerprint !== options.fingerprint) return fail('fingerprint_mismatch', license);
  }
  return { valid: true, license, ...subscriptionDates(license) };
}

const subscriptionDates = (license: LicenseFilePayload | null) =>
  license && ('paid_through' in license || 'grace_until' in license)
    ? {
        paid_through: typeof license.paid_through === 'string' ? license.paid_through : null,
        grace_until: typeof license.grace_until === 'string' ? license.grace_until : null,
      }
    : {};

const fail = (reason: LicenseFileFailure, license: LicenseFilePayload | null = null): LicenseFileVerification => ({
  valid: false,
  reason,
  license,
  ...subscriptionDates(license),
});

function isFileShape(file: unknown): file is { kid: string; algorithm: string; payload: string; signature: string } {
  if (typeof file !== 'object' || file === null) return false;
  const f = file as Record<string, unknown>;
  return (
    typeof f.kid === 'string' &&
    typeof f.algorithm === 'string' &&
    typeof f.payload === 'string' &&
    typeof f.signature === 'string'
  );
}

function publicKeyList(options: VerifyLicenseFileOptions): readonly PublicKeyInput[] {
  if (typeof options !== 'object' || options === null)
    throw new TypeError('verifyLicenseFile needs options with publicKeys');
  const given = options.publicKeys;
  const list = Array.isArray(given) ? given : (given as { data?: unknown } | undefined)?.data;
  if (!Array.isArray(list))
    throw new TypeError(`publicKeys must be an array of {kid, public_key_pem}, got ${describe(given)}`);
  for (const k of list) {
    if (typeof k?.kid !== 'string' || typeof k?.public_key_pem !== 'string')
      throw new TypeError('every public key needs a kid and a public_key_pem string');
  }
  return list as readonly PublicKeyInput[];
}

function instant(now: Date | number | undefined): number {
  if (now === undefined) return Date.now();
  const ms = now instanceof Date ? now.getTime() : now;
  if (typeof ms !== 'number' || Number.isNaN(ms)) throw new TypeError('now must be a Date or a number of milliseconds');
  return ms;
}
