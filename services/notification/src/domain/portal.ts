// The rules of customer portal sign-in and seat rescue: secrets, time windows and
// the request keys that make a burst of requests one mail. Unit tested
// (services/notification/test/unit/notification-portal.test.ts).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError, checkEmail, sha256 } from '@licensing/runtime';

/** A sign-in link works once, within this long after the mail that carried it was sent. */
export const PORTAL_LINK_TTL_MS = 3600 * 1000;
/** A portal session (the cookie) lasts this long. */
export const PORTAL_SESSION_TTL_MS = 12 * 3600 * 1000;
/** At most one seat rescue mail per licence within this window. */
export const SEAT_RESCUE_WINDOW_MS = 3600 * 1000;
/** At most one sign-in mail per (account, e-mail) within one such bucket. */
export const PORTAL_REQUEST_BUCKET_MS = 60 * 1000;
/** PORTAL_SIGNINS_PER_EMAIL's default: sign-in links sent to one address per rolling hour. */
export const DEFAULT_SIGNIN_MAILS_PER_HOUR = 5;
/** The window of that count. */
export const SIGNIN_MAILS_WINDOW_MS = 3600 * 1000;

/** The placeholder's domain chosen by the gateway when a customer is erased: nobody to write to. */
const ERASED_DOMAIN = '@erased.invalid';

/** One answer for every link that cannot be redeemed: unknown, used, expired or another account's. */
export const LINK_REFUSED = 'this sign-in link is not valid: it may have been used or have expired; ask for a new one';
/** One answer for every session that cannot be read. */
export const SESSION_GONE = 'the portal session has ended; sign in again';

/** A secret as we issue them: 32 random bytes, base64url (43 characters). */
export const newSecret = (): string => randomBytes(32).toString('base64url');
export const isSecret = (t: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(t);
/** Only this is stored: a database leak yields no usable link or cookie. */
export const digestSecret = (t: string): string => sha256(t, 'hex');

/** Whether a stored digest is the digest of this token, in constant time. */
export function sameDigest(stored: string, token: string): boolean {
  const a = Buffer.from(stored, 'utf8');
  const b = Buffer.from(digestSecret(token), 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The e-mail as stored and compared everywhere in this service: trimmed and lower-cased (an index serves it). */
export const normalEmail = (field: string, value: string): string => checkEmail(field, value).toLowerCase();

/** An erased customer's placeholder, or no address at all: nobody to send to. */
export const isReachable = (email: string): boolean => !!email && !email.toLowerCase().endsWith(ERASED_DOMAIN);

/** Ids from the gateway are short; anything else is refused before any look-up. */
export function checkAccountId(accountId: string): string {
  if (!accountId || accountId.length > 64) throw AppError.invalid('account_id', 'account_id is required');
  return accountId;
}

/** Sign-in requests of one (account, e-mail) within a minute are one mail (a unique request key). */
export const portalRequestKey = (accountId: string, email: string, now: Date): string =>
  `portal:${accountId}:${email}:${Math.floor(now.getTime() / PORTAL_REQUEST_BUCKET_MS)}`;

/**
 * Seat rescues of one licence within an hour bucket are one mail: stops a parallel burst that
 * passes the rolling check together (the rolling check stops the rest).
 */
export const rescueRequestKey = (accountId: string, key: string, now: Date): string =>
  `rescue:${accountId}:${key}:${Math.floor(now.getTime() / SEAT_RESCUE_WINDOW_MS)}`;

/** Seconds until another seat rescue of a licence whose last one was asked at `lastAt` (0: now). */
export function rescueWaitS(lastAt: Date, now: Date): number {
  const ms = lastAt.getTime() + SEAT_RESCUE_WINDOW_MS - now.getTime();
  return ms > 0 ? Math.ceil(ms / 1000) : 0;
}

/** The page a sign-in link opens (it asks for a confirming click, so mail scanners cannot use it up). */
export const portalLinkUrl = (publicBaseUrl: string, accountId: string, token: string): string =>
  `${publicBaseUrl.replace(/\/+$/, '')}/portal/${encodeURIComponent(accountId)}/link?token=${encodeURIComponent(token)}`;
