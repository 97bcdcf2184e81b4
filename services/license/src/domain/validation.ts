import type { ParsedKey } from './license-key';

export const validationCodes = ['valid', 'not_found', 'product_mismatch', 'suspended', 'revoked', 'expired'] as const;
export type ValidationCode = (typeof validationCodes)[number];

export interface LicenseFacts {
  account_id: string;
  product_id: string;
  status: string;
  expires_at: Date | null;
}

export interface Verdict {
  valid: boolean;
  code: ValidationCode;
  detail: string;
  /** Whether the caller may see the licence (it exists in the caller's account). */
  visible: boolean;
}

/**
 * The validation rules, in the order they are checked (docs/api.md keeps the
 * same table): key shape and checksum, existence in the caller's account,
 * product, status, expiry.
 */
export function judge(parsed: ParsedKey, license: LicenseFacts | null, request: { accountId: string; productId: string }, now: Date): Verdict {
  if (!parsed.ok) {
    return {
      valid: false,
      code: 'not_found',
      detail: parsed.reason === 'checksum' ? 'the licence key has a typo: its check characters do not match' : 'this is not a licence key',
      visible: false,
    };
  }
  // Another account's licence is indistinguishable from no licence.
  if (!license || license.account_id !== request.accountId) return { valid: false, code: 'not_found', detail: 'no licence with this key', visible: false };
  if (request.productId && license.product_id !== request.productId) return { valid: false, code: 'product_mismatch', detail: 'the licence belongs to another product', visible: true };
  if (license.status === 'revoked') return { valid: false, code: 'revoked', detail: 'the licence was revoked', visible: true };
  if (license.status === 'suspended') return { valid: false, code: 'suspended', detail: 'the licence is suspended', visible: true };
  if (license.expires_at && license.expires_at.getTime() <= now.getTime()) return { valid: false, code: 'expired', detail: 'the licence has expired', visible: true };
  return { valid: true, code: 'valid', detail: 'the licence is valid', visible: true };
}
