import { AppError } from '@licensing/runtime';
import {
  CHECKOUT_EXPIRES_MAX_MINUTES,
  CHECKOUT_EXPIRES_MIN_MINUTES,
  URL_MAX_LENGTH,
  type CheckoutStatus,
} from '@licensing/proto';

// The rules of a checkout session that need no I/O.

/** success_url and cancel_url: absolute http(s) URLs only (never javascript:, data:, relative); https only in production. */
export function checkRedirectUrl(field: string, value: string, required: boolean, httpsOnly = false): string {
  const v = value.trim();
  if (!v) {
    if (required) throw AppError.invalid(field, `${field} is required`);
    return '';
  }
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw AppError.invalid(field, `${field} must be an absolute http or https URL`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || v.length > URL_MAX_LENGTH)
    throw AppError.invalid(field, `${field} must be an absolute http or https URL`);
  if (httpsOnly && url.protocol !== 'https:') throw AppError.invalid(field, `${field} must be an https URL`);
  return url.toString();
}

export function expiryMinutes(requested: number): number {
  const m = requested || CHECKOUT_EXPIRES_MAX_MINUTES;
  if (!Number.isInteger(m) || m < CHECKOUT_EXPIRES_MIN_MINUTES || m > CHECKOUT_EXPIRES_MAX_MINUTES) {
    throw AppError.invalid(
      'expires_in_minutes',
      `expires_in_minutes must be a whole number from ${CHECKOUT_EXPIRES_MIN_MINUTES} to ${CHECKOUT_EXPIRES_MAX_MINUTES}`,
    );
  }
  return m;
}

/** A session past its expiry is expired even before the sweeper records it. */
export function effectiveStatus(s: { status: CheckoutStatus; expires_at: Date }, now: Date): CheckoutStatus {
  return s.status === 'open' && s.expires_at.getTime() <= now.getTime() ? 'expired' : s.status;
}

export function checkExpire(s: { status: CheckoutStatus; expires_at: Date }, now: Date): void {
  const status = effectiveStatus(s, now);
  if (status === 'complete') throw new AppError('conflict', 'the checkout session is complete: it cannot be expired');
}

/** The session as a reader sees it at `now`: its effective status in place of the stored one. */
export const asSeenAt = <S extends { status: CheckoutStatus; expires_at: Date }>(s: S, now: Date): S => ({
  ...s,
  status: effectiveStatus(s, now),
});
