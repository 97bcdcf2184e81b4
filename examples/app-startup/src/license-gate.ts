// The start-up check: may this app run? In order:
//   1. a cached answer that is still within its cache_until: no network at all;
//   2. the server (POST /api/v1/keys/validate through the SDK), cached afterwards;
//   3. when the server cannot be reached, a licence file verified offline
//      with the product's public keys that ship with the app.
// A definite "no" from the server is final; only an absent answer falls back.
import { LicensingError, verifyLicenseFile, type LicensingClient, type PublicKeyInput } from '@licensing/client';
import type { AnswerCache } from './answer-cache';

export interface GateOptions {
  /** A client with a validate-scope key (lk_val_…): it can validate and nothing else. */
  client: LicensingClient;
  licenseKey: string;
  /** Refuse keys of other products. */
  productId?: string;
  /** This machine, for licences that require activation and files bound to one machine. */
  fingerprint?: string;
  cache: AnswerCache;
  /** The offline fallback: a licence file (as POST /licenses/{key}/file answered it) and the public keys. */
  offline?: { licenseFile: () => Promise<unknown>; publicKeys: readonly PublicKeyInput[] };
  now?: () => number;
}

export interface GateResult {
  allowed: boolean;
  /** Where the answer came from. */
  source: 'cache' | 'server' | 'license-file' | 'none';
  /** The server's validation code, the licence file's failure reason, or `unreachable`. */
  code: string;
  detail: string;
  expiresAt: string | null;
}

export async function checkLicense(options: GateOptions): Promise<GateResult> {
  const now = options.now?.() ?? Date.now();
  const cached = await options.cache.read();
  if (cached && cached.licenseKey === options.licenseKey && Date.parse(cached.answer.cache_until) > now) {
    const { answer } = cached;
    return {
      allowed: answer.valid,
      source: 'cache',
      code: answer.code,
      detail: answer.detail,
      expiresAt: answer.expires_at,
    };
  }

  try {
    const answer = await options.client.licenses.validate(options.licenseKey, {
      productId: options.productId,
      fingerprint: options.fingerprint,
    });
    await options.cache.write({ licenseKey: options.licenseKey, answer });
    return {
      allowed: answer.valid,
      source: 'server',
      code: answer.code,
      detail: answer.detail,
      expiresAt: answer.expires_at,
    };
  } catch (err) {
    // 401/403/400 mean the app is misconfigured: say so rather than fall back.
    if (!(err instanceof LicensingError) || !noAnswer(err)) throw err;
    return fromLicenseFile(options, now, err);
  }
}

/** The server could not give a verdict: unreachable, timed out, overloaded or down. */
const noAnswer = (err: LicensingError) => err.status === 0 || err.status === 429 || err.status >= 500;

async function fromLicenseFile(options: GateOptions, now: number, cause: LicensingError): Promise<GateResult> {
  const unreachable = {
    allowed: false,
    source: 'none' as const,
    code: 'unreachable',
    detail: `the licence server could not be reached (${cause.detail}) and there is no licence file`,
    expiresAt: null,
  };
  if (!options.offline) return unreachable;
  let file: unknown;
  try {
    file = await options.offline.licenseFile();
  } catch {
    return unreachable;
  }
  const result = await verifyLicenseFile(file, {
    publicKeys: options.offline.publicKeys,
    now,
    fingerprint: options.fingerprint,
  });
  if (!result.valid || !result.license)
    return {
      allowed: false,
      source: 'license-file',
      code: result.reason ?? 'invalid',
      detail: 'the licence file does not verify',
      expiresAt: null,
    };
  // A genuine file of another key or product proves nothing about this one.
  if (normalise(result.license.license_key) !== normalise(options.licenseKey))
    return {
      allowed: false,
      source: 'license-file',
      code: 'other_license',
      detail: 'the licence file is for another key',
      expiresAt: null,
    };
  if (options.productId && result.license.product_id !== options.productId)
    return {
      allowed: false,
      source: 'license-file',
      code: 'product_mismatch',
      detail: 'the licence file is for another product',
      expiresAt: null,
    };
  return {
    allowed: true,
    source: 'license-file',
    code: 'valid',
    detail: `offline: licence file valid until ${result.license.valid_until}`,
    expiresAt: result.license.expires_at,
  };
}

/** Keys as the server compares them: case, spaces and Crockford's look-alikes forgiven. */
function normalise(key: string): string {
  return key.trim().toUpperCase().replace(/O/g, '0').replace(/[IL]/g, '1');
}
