import type { NextFunction, Request, Response } from 'express';
import type { PortalSession as PortalSessionMessage } from '@licensing/proto';
import { AppError, addressKey, isSessionToken } from '@licensing/runtime';
import type { Clients } from '../backends/clients';
import { cookieLine, issueCsrfCookie, readCookie, secondsUntil, tokensMatch } from '../kit/cookies';
import type { SessionGuard } from '../kit/session-guard';

// Customer portal sessions. The notification service keeps them (as digests) and makes them from a
// one-time e-mailed link; the browser holds the token in an HttpOnly, SameSite=Lax cookie whose path is
// the account's portal (/portal/{account_id}), so it is never even sent to another vendor's portal, and
// the service checks the account again on every look-up. Before sign-in, forms carry a double-submit
// CSRF token (its own cookie, same path); after it, the session's own.

export const PORTAL_COOKIE = 'lk_portal';
export const PORTAL_CSRF_COOKIE = 'lk_portal_csrf';

/** The signed-in customer, as the portal's pages need it. */
export interface PortalSession {
  token: string;
  csrfToken: string;
  /** Lower-cased. */
  email: string;
  expiresAt: string;
  /** The licence a seat-rescue link opened the portal on ('' for a sign-in link). */
  licenseKey: string;
}

/** The vendor whose portal this is. */
export interface Vendor {
  id: string;
  name: string;
}

/** Where an account's portal lives: every link and cookie path of it. */
export const portalPath = (accountId: string) => `/portal/${accountId}`;

export const toPortalSession = (token: string, s: PortalSessionMessage): PortalSession => ({
  token,
  csrfToken: s.csrf_token,
  email: s.email.toLowerCase(),
  expiresAt: s.expires_at,
  licenseKey: s.license_key,
});

/** The session cookie: HttpOnly, SameSite=Lax (the e-mailed link's page posts from the same site), the account's path, until the session expires. */
export function sessionCookie(accountId: string, token: string, expiresAt: string, secure: boolean): string {
  return cookieLine(PORTAL_COOKIE, token, {
    path: portalPath(accountId),
    maxAgeS: secondsUntil(expiresAt),
    secure,
    sameSite: 'Lax',
  });
}

export function clearSessionCookie(res: Response, accountId: string, secure: boolean): void {
  res.append(
    'Set-Cookie',
    cookieLine(PORTAL_COOKIE, '', { path: portalPath(accountId), maxAgeS: 0, secure, sameSite: 'Lax' }),
  );
}

/** A fresh pre-session CSRF token (the e-mail form, the link's "Sign in" button). */
export const issuePortalCsrf = (res: Response, accountId: string, secure: boolean): string =>
  issueCsrfCookie(res, PORTAL_CSRF_COOKIE, portalPath(accountId), secure);

/**
 * Loads the session the cookie names into res.locals.portalSession, or leaves it unset; a cookie that
 * names no session (ended, expired, another account's) is cleared. Made-up tokens cost no look-up
 * once known or once their address is over its limit (kit/session-guard.ts, as the dashboard's).
 */
export function loadPortalSession(clients: Clients, guard: SessionGuard, secure: boolean) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const vendor = vendorOf(res);
    const token = readCookie(req, PORTAL_COOKIE);
    if (token) {
      const address = addressKey(req.ip);
      if (guard.mayLookUp(token, address, vendor.id)) {
        try {
          const s = await clients.notifications.getPortalSession({ account_id: vendor.id, token });
          res.locals.portalSession = toPortalSession(token, s);
        } catch (err) {
          if (!(err instanceof AppError) || !['unauthorized', 'not_found', 'invalid_request'].includes(err.code))
            throw err;
          await guard.unknownToken(token, address, vendor.id);
          clearSessionCookie(res, vendor.id, secure);
        }
      } else if (!isSessionToken(token)) clearSessionCookie(res, vendor.id, secure);
    }
    next();
  };
}

export const portalSessionOf = (res: Response): PortalSession | undefined =>
  res.locals.portalSession as PortalSession | undefined;

export const vendorOf = (res: Response): Vendor => res.locals.vendor as Vendor;

/** Whether a signed-in form carries the session's own CSRF token. */
export const sessionCsrfOk = (req: Request, s: PortalSession): boolean =>
  tokensMatch(s.csrfToken, (req.body as Record<string, unknown> | undefined)?._csrf);
